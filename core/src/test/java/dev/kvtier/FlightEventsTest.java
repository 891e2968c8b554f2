package dev.kvtier;

import dev.kvtier.observe.KvTierFlightRecording;
import dev.kvtier.observe.RecoveryEvent;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JFR events a recording with the shipped settings holds: what the cache did, field by field.
 * Recordings are per JVM, so each test filters the file down to its own keys.
 */
class FlightEventsTest {
    private static final int PAGE = 4096;

    @TempDir
    Path dir;

    private KvTierCache open(UnaryOperator<dev.kvtier.exec.ExecutionBackend> decorate) {
        return KvTierCache.open(KvTierConfig.builder().backend(Backend.HOST).pageSizeBytes(PAGE)
                .gpuBudgetBytes(2L * PAGE).cpuBudgetBytes(8L * PAGE).diskExtentBytes(16L * PAGE)
                .diskDirectory(dir.resolve("disk")).build(), decorate);
    }

    @Test
    void transfersAndRoundsOfMakingRoomAreRecorded() throws IOException {
        Path file = dir.resolve("run.jfr");
        try (Recording recording = KvTierFlightRecording.start(file);
             KvTierCache cache = open(UnaryOperator.identity())) {
            MemorySegment page = MemorySegment.ofArray(new byte[PAGE]);
            cache.put("jfr-a", PositionRange.of(0, 1), page, Tier.GPU);
            cache.put("jfr-b", PositionRange.of(1, 2), MemorySegment.ofArray(new byte[2 * PAGE]), Tier.CPU);
            cache.put("jfr-c", PositionRange.of(2, 3), MemorySegment.ofArray(new byte[2 * PAGE]), Tier.GPU);
            cache.demote("jfr-b", Tier.DISK);
            recording.stop();
        }
        List<RecordedEvent> transfers = events(file, "dev.kvtier.Transfer");
        assertEquals(List.of("caller->GPU 4096", "caller->CPU 8192", "GPU->CPU 4096", "caller->GPU 8192",
                "CPU->DISK 8192"), transfers.stream().map(e -> e.getString("from") + "->" + e.getString("to") + " "
                + e.getLong("bytes")).toList());
        for (RecordedEvent transfer : transfers) {
            assertEquals("host", transfer.getString("backend"));
            assertEquals("ok", transfer.getString("outcome"));
            assertEquals(1, transfer.getInt("batchSize"));
        }
        List<RecordedEvent> rounds = events(file, "dev.kvtier.RoomMaking");
        assertEquals(1, rounds.size(), "putting jfr-c on GPU made room once: " + rounds);
        RecordedEvent round = rounds.getFirst();
        assertEquals("GPU", round.getString("tier"));
        assertEquals(2 * PAGE, round.getLong("bytesNeeded"));
        assertEquals(PAGE, round.getLong("bytesFreed"));
        assertEquals(1, round.getInt("victims"));
        assertEquals(PAGE, round.getLong("bytesFreeBefore"), "the tier had one page free: one more was needed");
        assertTrue(round.getBoolean("needMet"));
        assertTrue(round.getLong("bytesFreeBefore") + round.getLong("bytesFreed") >= round.getLong("bytesNeeded"),
                round::toString);
        assertTrue(round.getDuration().compareTo(transfers.get(2).getDuration()) >= 0,
                "the round spans its victim's transfer");
    }

    @Test
    void aCopyThatLostItsBytesIsAChecksumFailureOnArrival() throws IOException {
        Path file = dir.resolve("failure.jfr");
        byte[] bytes = new byte[PAGE];
        bytes[7] = 42;
        try (Recording recording = KvTierFlightRecording.start(file);
             KvTierCache cache = open(FaultInjectingBackend.silentlySkippedCopy(2))) {
            cache.put("jfr-lost", PositionRange.of(0, 1), MemorySegment.ofArray(bytes), Tier.CPU);
            assertThrows(TransferFailedException.class, () -> cache.demote("jfr-lost", Tier.DISK));
            recording.stop();
        }
        List<RecordedEvent> failures = events(file, "dev.kvtier.ChecksumFailure");
        assertEquals(1, failures.size(), failures.toString());
        RecordedEvent failure = failures.getFirst();
        assertEquals("DISK", failure.getString("tier"));
        assertEquals("arrival", failure.getString("check"));
        assertEquals(String.format("%08x", crc32c(bytes)), failure.getString("expected"));
        assertEquals(String.format("%08x", crc32c(new byte[PAGE])), failure.getString("actual"), "the extent stayed zero");
        assertTrue(failure.getStackTrace() != null, "checksum failures carry their stack");
    }

    @Test
    void aFailedCopyIsATransferThatFailed() throws IOException {
        Path file = dir.resolve("copy.jfr");
        try (Recording recording = KvTierFlightRecording.start(file);
             KvTierCache cache = open(FaultInjectingBackend.failingCopy(2))) {
            cache.put("jfr-fail", PositionRange.of(0, 1), MemorySegment.ofArray(new byte[PAGE]), Tier.CPU);
            assertThrows(TransferFailedException.class, () -> cache.demote("jfr-fail", Tier.DISK));
            recording.stop();
        }
        List<RecordedEvent> transfers = events(file, "dev.kvtier.Transfer");
        assertEquals(List.of("ok", "failed"), transfers.stream().map(e -> e.getString("outcome")).toList());
        assertTrue(transfers.get(1).getString("failure").contains("jfr-fail"), transfers.get(1).getString("failure"));
    }

    @Test
    void aRecoveryIsRecordedWithItsCounts() throws IOException {
        Path file = dir.resolve("recovery.jfr");
        try (Recording recording = KvTierFlightRecording.start(file)) {
            RecoveryEvent.emit("/var/cache/kv-jfr", 1000, 4096000, 3, 2, Duration.ofMillis(250));
            recording.stop();
        }
        List<RecordedEvent> recoveries = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("dev.kvtier.Recovery"))
                .filter(e -> e.getString("directory").equals("/var/cache/kv-jfr")).toList();
        assertEquals(1, recoveries.size(), recoveries.toString());
        RecordedEvent recovery = recoveries.getFirst();
        assertEquals(1000, recovery.getLong("segmentsFound"));
        assertEquals(4096000, recovery.getLong("bytesFound"));
        assertEquals(3, recovery.getLong("segmentsDiscarded"));
        assertEquals(2, recovery.getLong("rollbacksRefused"));
        assertEquals(Duration.ofMillis(250), recovery.getDuration("recoveryDuration"));
    }

    @Test
    void reopeningAPersistedDirectoryRecordsItsRecovery() throws IOException {
        Path disk = dir.resolve("persisted");
        UnaryOperator<KvTierConfig.Builder> config = b -> b.backend(Backend.HOST).pageSizeBytes(PAGE)
                .gpuBudgetBytes(2L * PAGE).cpuBudgetBytes(2L * PAGE).diskExtentBytes(16L * PAGE)
                .diskDirectory(disk).persistence(DiskPersistence.of("jfr-model"));
        try (KvTierCache cache = KvTierCache.open(config.apply(KvTierConfig.builder()).build())) {
            for (int i = 0; i < 3; i++) {
                cache.put("jfr-p" + i, PositionRange.of(i, i + 1), MemorySegment.ofArray(new byte[PAGE]), Tier.DISK);
            }
        }
        Path file = dir.resolve("reopen.jfr");
        try (Recording recording = KvTierFlightRecording.start(file);
             KvTierCache cache = KvTierCache.open(config.apply(KvTierConfig.builder()).build())) {
            recording.stop();
        }
        List<RecordedEvent> recoveries = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("dev.kvtier.Recovery"))
                .filter(e -> e.getString("directory").equals(disk.toString())).toList();
        assertEquals(1, recoveries.size(), recoveries.toString());
        assertEquals(3, recoveries.getFirst().getLong("segmentsFound"));
        assertEquals(3L * PAGE, recoveries.getFirst().getLong("bytesFound"));
        assertEquals(0, recoveries.getFirst().getLong("segmentsDiscarded"));
        assertEquals(0, recoveries.getFirst().getLong("rollbacksRefused"));
    }

    private static int crc32c(byte[] bytes) {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(bytes);
        return (int) crc.getValue();
    }

    /** The events of {@code type} about this test's keys (other tests' caches may share the JVM). */
    private static List<RecordedEvent> events(Path file, String type) throws IOException {
        return RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals(type))
                .filter(e -> !e.hasField("key") || e.getString("key").startsWith("jfr-"))
                .toList();
    }
}
