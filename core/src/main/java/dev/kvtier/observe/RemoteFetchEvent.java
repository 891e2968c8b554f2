package dev.kvtier.observe;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * JFR event {@code dev.kvtier.RemoteFetch}: one decision of the remote store's cost gate on a prefix's remote blocks,
 * with both estimates, and the fetch that followed when the gate let it (its duration covers the fetch and checks).
 *
 * <p>Disabled unless a recording asks for it ({@link KvTierFlightRecording}); when disabled,
 * {@link #beginIfRecording} answers null without allocating. Confined to the thread that began it.
 */
@Name("dev.kvtier.RemoteFetch")
@Label("kvtier Remote Fetch")
@Category("kvtier")
@Description("The cost gate's judgement of a prefix's remote blocks, and their fetch")
@Enabled(false)
@StackTrace(false)
public final class RemoteFetchEvent extends Event {
    private static final RemoteFetchEvent TYPE = new RemoteFetchEvent();

    @Label("Blocks")
    @Description("Remote blocks judged")
    int blocks;
    @Label("Estimated Fetch Time")
    @Timespan
    long estimatedFetchNanos;
    @Label("Estimated Recompute Time")
    @Description("0 when no prefill rate is configured (no gate)")
    @Timespan
    long estimatedRecomputeNanos;
    @Label("Fetched")
    @Description("Whether the gate let the blocks be fetched")
    boolean fetched;
    @Label("Blocks Served")
    @Description("Blocks fetched, checked and stored locally")
    int served;
    @Label("Bytes")
    @DataAmount
    long bytes;

    private RemoteFetchEvent() {
    }

    /**
     * A started event when a recording wants remote fetches, else null (nothing allocated).
     *
     * @return a begun event, confined to the calling thread, to hand to {@link #finish}; null when no recording
     *     asks for {@code dev.kvtier.RemoteFetch}
     */
    public static RemoteFetchEvent beginIfRecording() {
        if (!FlightEvents.COMPILED_IN || !TYPE.isEnabled()) {
            return null;
        }
        RemoteFetchEvent event = new RemoteFetchEvent();
        event.begin();
        return event;
    }

    /**
     * Ends and commits {@code event} (null: not recording, nothing happens).
     *
     * @param event                   what {@link #beginIfRecording} returned, or null
     * @param blocks                  how many remote blocks of the prefix the gate judged
     * @param estimatedFetchNanos     the gate's estimate of fetching them, in nanoseconds
     * @param estimatedRecomputeNanos the gate's estimate of recomputing them, in nanoseconds; 0 without a prefill
     *                                rate (no gate)
     * @param fetched                 whether the gate let the blocks be fetched
     * @param served                  how many of them were fetched, checked and stored locally; 0 when not fetched
     * @param bytes                   bytes of the values the store answered (served or rejected); 0 when not fetched
     */
    public static void finish(RemoteFetchEvent event, int blocks, long estimatedFetchNanos,
                              long estimatedRecomputeNanos, boolean fetched, int served, long bytes) {
        if (event == null) {
            return;
        }
        event.end();
        if (event.shouldCommit()) {
            event.blocks = blocks;
            event.estimatedFetchNanos = estimatedFetchNanos;
            event.estimatedRecomputeNanos = estimatedRecomputeNanos;
            event.fetched = fetched;
            event.served = served;
            event.bytes = bytes;
            event.commit();
        }
    }
}
