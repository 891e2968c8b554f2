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
 * JFR event {@code dev.kvtier.RoomMaking}: one round of making room on a full GPU or CPU tier by
 * demoting the policy's candidates. Its duration covers choosing, booking and moving the victims
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
    @Label("Bytes Needed")
    @Description("The free bytes the tier had to reach")
    @DataAmount
    long bytesNeeded;
    @Label("Bytes Freed")
    @Description("How many bytes more were free at the end than at the start")
    @DataAmount
    long bytesFreed;
    @Label("Victims")
    @Description("Segments booked for demotion (a victim whose copy failed is rolled back and still counted)")
    int victims;
    @Label("Enough")
    @Description("Whether the tier had the bytes needed free at the end")
    boolean enough;

    private RoomMakingEvent() {
    }

    /** A started event when a recording wants rounds of making room, else null (nothing allocated). */
    public static RoomMakingEvent beginIfRecording() {
        if (!FlightEvents.COMPILED_IN || !TYPE.isEnabled()) {
            return null;
        }
        RoomMakingEvent event = new RoomMakingEvent();
        event.begin();
        return event;
    }

    /** Ends and commits {@code event} (null: not recording, nothing happens). */
    public static void finish(RoomMakingEvent event, Tier tier, long bytesNeeded, long bytesFreed, int victims,
                              boolean enough) {
        if (event == null) {
            return;
        }
        event.end();
        if (event.shouldCommit()) {
            event.tier = tier.name();
            event.bytesNeeded = bytesNeeded;
            event.bytesFreed = bytesFreed;
            event.victims = victims;
            event.enough = enough;
            event.commit();
        }
    }
}
