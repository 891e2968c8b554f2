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
 * JFR event {@code dev.kvtier.RoomMaking}: one round of making room on a full tier by demoting the
 * policy's candidates (evicting them, on a bounded DISK tier). Its duration covers choosing, booking and moving the victims
 * (and any room made for them further down, which is a nested event of its own). Only rounds that
 * had to demote are recorded; a tier that already had room records nothing.
 *
 * <p>Disabled unless a recording asks for it ({@link KvTierFlightRecording}); when disabled,
 * {@link #beginIfRecording} answers null without allocating. Confined to the thread that began it.
 */
@Name("dev.kvtier.RoomMaking")
@Label("kvtier Making Room")
@Category("kvtier")
@Description("A round of demoting segments to make room on a full tier")
@Enabled(false)
@StackTrace(false)
public final class RoomMakingEvent extends Event {
    private static final RoomMakingEvent TYPE = new RoomMakingEvent();

    @Label("Tier")
    String tier;
    @Label("Free Bytes Needed")
    @Description("The free bytes the tier had to reach: what was free before plus what the round freed must reach it")
    @DataAmount
    long bytesNeeded;
    @Label("Free Bytes Before")
    @Description("The bytes the tier had free when the round began (fewer than needed, or there would be no round)")
    @DataAmount
    long bytesFreeBefore;
    @Label("Bytes Freed")
    @Description("How many bytes more were free at the end than at the start")
    @DataAmount
    long bytesFreed;
    @Label("Victims")
    @Description("Segments booked for demotion (a victim whose copy failed is rolled back and still counted)")
    int victims;
    @Label("Need Met")
    @Description("Whether the tier had Free Bytes Needed free at the end: Free Bytes Before plus Bytes Freed, so it"
            + " can be true with Bytes Freed below Free Bytes Needed (the rest was free already)")
    boolean needMet;

    private RoomMakingEvent() {
    }

    /**
     * A started event when a recording wants rounds of making room, else null (nothing allocated).
     *
     * @return a started event to pass to {@link #finish}, or null when no recording enables this event
     */
    public static RoomMakingEvent beginIfRecording() {
        if (!FlightEvents.COMPILED_IN || !TYPE.isEnabled()) {
            return null;
        }
        RoomMakingEvent event = new RoomMakingEvent();
        event.begin();
        return event;
    }

    /**
     * Ends and commits {@code event} (null: not recording, nothing happens).
     *
     * @param event           what {@link #beginIfRecording} returned, or null
     * @param tier            the tier that was full
     * @param bytesNeeded     the free bytes the tier had to reach
     * @param bytesFreeBefore the bytes the tier had free when the round began
     * @param bytesFreed      how many bytes more were free at the end of the round than at its start, {@code >= 0}
     * @param victims         the segments booked for demotion in the round, failed copies included
     * @param needMet         whether the tier had {@code bytesNeeded} free at the end
     */
    public static void finish(RoomMakingEvent event, Tier tier, long bytesNeeded, long bytesFreeBefore, long bytesFreed,
                              int victims, boolean needMet) {
        if (event == null) {
            return;
        }
        event.end();
        if (event.shouldCommit()) {
            event.tier = tier.name();
            event.bytesNeeded = bytesNeeded;
            event.bytesFreeBefore = bytesFreeBefore;
            event.bytesFreed = bytesFreed;
            event.victims = victims;
            event.needMet = needMet;
            event.commit();
        }
    }
}
