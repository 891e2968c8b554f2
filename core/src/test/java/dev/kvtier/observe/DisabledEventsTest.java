package dev.kvtier.observe;

import dev.kvtier.store.Tier;
import jdk.jfr.FlightRecorder;
import jdk.jfr.RecordingState;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** With no recording running, firing any kvtier event allocates nothing (counted by the JVM, not timed). */
class DisabledEventsTest {
    private static final int CALLS = 100_000;

    @Test
    void eventsNoRecordingAsksForAllocateNothing() {
        assumeTrue(!FlightRecorder.isInitialized() || FlightRecorder.getFlightRecorder().getRecordings().stream()
                .noneMatch(r -> r.getState() == RecordingState.RUNNING), "another recording is running in this JVM");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        fireAll(1); // class initialization allocates; not counted
        long before = threads.getCurrentThreadAllocatedBytes();
        fireAll(CALLS);
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        // One event object is at least 16 bytes: allocating per call would show as megabytes.
        assertTrue(allocated < CALLS, allocated + " bytes allocated by " + CALLS + " rounds of disabled events");
    }

    private static void fireAll(int rounds) {
        for (int i = 0; i < rounds; i++) {
            TransferEvent transfer = TransferEvent.beginIfRecording();
            TransferEvent.finish(transfer, "k", Tier.CPU, Tier.GPU, 4096, 1, "host", null);
            RoomMakingEvent round = RoomMakingEvent.beginIfRecording();
            RoomMakingEvent.finish(round, Tier.GPU, 4096, 0, 4096, 1, true);
            ChecksumFailureEvent.emit("k", Tier.DISK, true, 1, 2);
            RecoveryEvent.emit("/d", 1, 4096, 0, 0, Duration.ZERO);
        }
    }
}
