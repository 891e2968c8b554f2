package dev.kvtier.observe;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

import java.time.Duration;

/**
 * JFR event {@code dev.kvtier.Recovery}: a cache opened over a persisted DISK directory and
 * registered what it found there again. One per open, so enabled by default in any recording.
 * The recovery's own length is the field {@code recoveryDuration} (the event is emitted once the
 * report exists, so its JFR duration is zero). Thread-safe.
 */
@Name("dev.kvtier.Recovery")
@Label("kvtier Recovery")
@Category("kvtier")
@Description("Segments of a persisted DISK tier registered again when a cache opened")
@StackTrace(false)
public final class RecoveryEvent extends Event {
    private static final RecoveryEvent TYPE = new RecoveryEvent();

    @Label("Directory")
    String directory;
    @Label("Segments Found")
    @Description("Whole segments registered again, served after checksum verification")
    long segmentsFound;
    @Label("Bytes Found")
    @DataAmount
    long bytesFound;
    @Label("Segments Discarded")
    @Description("Records that were torn, corrupted or unreadable: dropped, never served")
    long segmentsDiscarded;
    @Label("Rollbacks Refused")
    @Description("Records not served because their pages carry a newer generation: serving them would have rolled"
            + " a key back to an older version or brought back a removed key (counted in Segments Discarded too)")
    long rollbacksRefused;
    @Label("Recovery Duration")
    @Timespan(Timespan.NANOSECONDS)
    long recoveryDuration;

    private RecoveryEvent() {
    }

    /**
     * Records a recovery when a recording takes it: call once per open, after the recovery.
     *
     * @param directory         the persisted directory
     * @param segmentsFound     segments registered again
     * @param bytesFound        their bytes
     * @param segmentsDiscarded records dropped (torn, corrupted, unreadable, superseded, ...)
     * @param rollbacksRefused  of those, records superseded by a newer generation of their pages
     * @param took              how long the recovery took
     */
    public static void emit(String directory, long segmentsFound, long bytesFound, long segmentsDiscarded,
                            long rollbacksRefused, Duration took) {
        if (!FlightEvents.COMPILED_IN || !TYPE.isEnabled()) {
            return;
        }
        RecoveryEvent event = new RecoveryEvent();
        if (event.shouldCommit()) {
            event.directory = directory;
            event.segmentsFound = segmentsFound;
            event.bytesFound = bytesFound;
            event.segmentsDiscarded = segmentsDiscarded;
            event.rollbacksRefused = rollbacksRefused;
            event.recoveryDuration = took.toNanos();
            event.commit();
        }
    }
}
