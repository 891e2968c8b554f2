package dev.kvtier.observe;

import dev.kvtier.store.Tier;
import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event {@code dev.kvtier.Transfer}: one copy of a segment's bytes, between two tiers (a
 * demotion or promotion) or between a tier and the caller's memory (a put or a read; that side is
 * named {@code caller}). Its duration is the copy's, including the wait for its completion; a
 * checksum found wrong afterwards is a {@link ChecksumFailureEvent} of its own. Moves copied in one
 * batch each get an event spanning the whole batch, with {@code batchSize} saying how many shared it.
 *
 * <p>Disabled unless a recording asks for it (there may be hundreds of thousands a second): use
 * the settings shipped in the jar, {@link KvTierFlightRecording}. When disabled, {@link #beginIfRecording}
 * answers null without allocating and {@link #finish} does nothing. Each instance is confined to the
 * thread that began it.
 */
@Name("dev.kvtier.Transfer")
@Label("kvtier Transfer")
@Category("kvtier")
@Description("A copy of one segment's bytes between tiers, or between a tier and the caller's memory")
@Enabled(false)
@StackTrace(false)
public final class TransferEvent extends Event {
    /** Asked whether the event type is enabled; never committed. {@code isEnabled} reads only the type's state. */
    private static final TransferEvent TYPE = new TransferEvent();

    @Label("Key")
    String key;
    @Label("From")
    @Description("The tier the bytes left, or caller for a put")
    String from;
    @Label("To")
    @Description("The tier the bytes arrived on, or caller for a read")
    String to;
    @Label("Bytes")
    @DataAmount
    long bytes;
    @Label("Batch Size")
    @Description("How many moves were copied together in the batch this one belonged to (1: alone)")
    int batchSize;
    @Label("Backend")
    @Description("The backend that copied: host or cuda")
    String backend;
    @Label("Outcome")
    @Description("ok, or failed (the failure says why)")
    String outcome;
    @Label("Failure")
    String failure;

    private TransferEvent() {
    }

    /**
     * A started event when a recording wants transfers, else null (nothing allocated).
     *
     * @return a started event to pass to {@link #finish}, or null when no recording enables this event
     */
    public static TransferEvent beginIfRecording() {
        if (!FlightEvents.COMPILED_IN || !TYPE.isEnabled()) {
            return null;
        }
        TransferEvent event = new TransferEvent();
        event.begin();
        return event;
    }

    /**
     * Ends and commits {@code event} (null: not recording, nothing happens).
     *
     * @param event     what {@link #beginIfRecording} returned, or null
     * @param key       the key of the segment copied
     * @param from      where the bytes came from, null for the caller's memory
     * @param to        where they went, null for the caller's memory
     * @param bytes     how many bytes the copy moved
     * @param batchSize how many moves were copied together in the batch this one belonged to; 1 when alone
     * @param backend   the backend that copied: "host" or "cuda"
     * @param failure   why the copy failed, null if it did not
     */
    public static void finish(TransferEvent event, String key, Tier from, Tier to, long bytes, int batchSize,
                              String backend, Throwable failure) {
        if (event == null) {
            return;
        }
        event.end();
        if (event.shouldCommit()) {
            event.key = key;
            event.from = from == null ? "caller" : from.name();
            event.to = to == null ? "caller" : to.name();
            event.bytes = bytes;
            event.batchSize = batchSize;
            event.backend = backend;
            event.outcome = failure == null ? "ok" : "failed";
            event.failure = failure == null ? null : failure.toString();
            event.commit();
        }
    }
}
