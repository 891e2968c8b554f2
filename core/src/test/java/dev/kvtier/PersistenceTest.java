package dev.kvtier;

import dev.kvtier.DiskPersistence.FsyncPolicy;
import dev.kvtier.RecoveryReport.DiscardReason;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.FakeCuda;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.testing.FaultLogRouting;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.zip.CRC32C;

import static dev.kvtier.PersistedSegments.config;
import static dev.kvtier.PersistedSegments.content;
import static dev.kvtier.PersistedSegments.put;
import static dev.kvtier.PersistedSegments.verify;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The persistent DISK tier in one process: what was on DISK at a close comes back byte for byte and
 * nothing else does; mismatched directories are refused or wiped; damaged journal records and data
 * pages are discarded and counted, never served; compaction keeps the directory bounded. Crashes
 * (kill -9 of a writer) are {@link PersistenceCrashTest}'s.
 */
@Tag(FaultLogRouting.TAG)
class PersistenceTest {
    private static final String NAMESPACE = "test-model/bf16/tp0";

    @TempDir
    Path directory;

    private KvTierCache open(DiskPersistence persistence) {
        return KvTierCache.open(config(directory, persistence).build());
    }

    private KvTierCache open() {
        return open(DiskPersistence.of(NAMESPACE));
    }

    private Path journal() {
        return directory.resolve("kvtier.journal");
    }

    /** Keys on DISK now (the ones a restart must bring back). */
    private static Set<String> onDisk(KvTierCache cache, List<String> keys) {
        Set<String> disk = new TreeSet<>();
        for (String key : keys) {
            cache.get(key).filter(meta -> meta.tier() == Tier.DISK).ifPresent(meta -> disk.add(key));
        }
        return disk;
    }

    @Test
    void aRestartWithTenThousandSegmentsRoundTripsEveryByteAndOnlyWhatWasOnDisk() {
        List<String> keys = new ArrayList<>();
        Set<String> expected;
        try (KvTierCache cache = open()) {
            assertEquals(0, cache.recovery().orElseThrow().recovered());
            for (int i = 0; i < 10_000; i++) {
                String key = "d-" + i;
                keys.add(key);
                put(cache, key, Tier.DISK);
            }
            for (int i = 0; i < 300; i++) { // CPU and GPU fill up: most of these are demoted to DISK
                String key = "c-" + i;
                keys.add(key);
                put(cache, key, i % 3 == 0 ? Tier.GPU : Tier.CPU);
            }
            for (int i = 0; i < 10_000; i += 7) {
                cache.remove("d-" + i);
            }
            for (int i = 1; i < 10_000; i += 501) { // promoted off DISK: volatile from now on
                if (i % 7 != 0) {
                    cache.ensureResident("d-" + i, Tier.CPU);
                }
            }
            expected = onDisk(cache, keys);
            assertTrue(expected.size() > 8_000 && expected.size() < keys.size(), "" + expected.size());
        }
        try (KvTierCache cache = open()) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(expected, new TreeSet<>(report.recoveredKeys()));
            assertEquals(expected.size(), report.recovered());
            assertEquals(0, report.discardedTotal(), report.toString());
            long bytes = 0;
            for (String key : keys) {
                if (expected.contains(key)) {
                    verify(cache, key);
                    bytes += content(key).length;
                    assertEquals(Tier.DISK, cache.get(key).orElseThrow().tier());
                } else {
                    assertTrue(cache.get(key).isEmpty(), key + " was not on DISK at close but came back");
                }
            }
            assertEquals(bytes, report.recoveredBytes());
            assertEquals(0, cache.recovery().orElseThrow().failedFirstUse());
        }
    }

    @ParameterizedTest
    @EnumSource(FsyncPolicy.class)
    void everyFsyncPolicyRoundTripsPutsAndDemotions(FsyncPolicy policy) {
        DiskPersistence persistence = DiskPersistence.of(NAMESPACE).fsync(policy).batch(8, java.time.Duration.ofMillis(5));
        List<String> keys = new ArrayList<>();
        Set<String> expected;
        try (KvTierCache cache = open(persistence)) {
            for (int i = 0; i < 100; i++) {
                keys.add("k-" + i);
                put(cache, "k-" + i, i % 2 == 0 ? Tier.DISK : Tier.CPU);
            }
            cache.remove("k-10");
            expected = onDisk(cache, keys);
        }
        try (KvTierCache cache = open(persistence)) {
            assertEquals(expected, new TreeSet<>(cache.recovery().orElseThrow().recoveredKeys()));
            expected.forEach(key -> verify(cache, key));
        }
    }

    @Test
    void anotherNamespaceIsRefusedNamingBothValuesAndNothingIsTouched() throws IOException {
        try (KvTierCache cache = open()) {
            put(cache, "a", Tier.DISK);
        }
        byte[] journalBefore = Files.readAllBytes(journal());
        PersistedDirectoryMismatchException e = assertThrows(PersistedDirectoryMismatchException.class,
                () -> open(DiskPersistence.of("other-model/fp8/tp0")));
        assertTrue(e.getMessage().contains("\"other-model/fp8/tp0\"") && e.getMessage().contains("\"" + NAMESPACE + "\""),
                e.getMessage());
        assertEquals("namespace", e.what());
        assertEquals(List.of(journalBefore.length), List.of(Files.readAllBytes(journal()).length));
        try (KvTierCache cache = open()) { // refused means untouched: the right namespace still finds it
            verify(cache, "a");
        }
    }

    @Test
    void anotherNamespaceIsWipedWhenAsked() {
        try (KvTierCache cache = open()) {
            put(cache, "a", Tier.DISK);
        }
        DiskPersistence other = DiskPersistence.of("other").onMismatch(DiskPersistence.OnMismatch.WIPE);
        try (KvTierCache cache = open(other)) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(0, report.recovered());
            assertTrue(report.wipedBecause().orElseThrow().contains(NAMESPACE), report.toString());
            assertTrue(cache.get("a").isEmpty());
            put(cache, "b", Tier.DISK);
        }
        try (KvTierCache cache = open(other)) {
            assertEquals(List.of("b"), cache.recovery().orElseThrow().recoveredKeys());
            verify(cache, "b");
        }
    }

    @Test
    void anotherPageSizeIsRefused() {
        try (KvTierCache cache = open()) {
            put(cache, "a", Tier.DISK);
        }
        PersistedDirectoryMismatchException e = assertThrows(PersistedDirectoryMismatchException.class,
                () -> KvTierCache.open(config(directory, DiskPersistence.of(NAMESPACE)).pageSizeBytes(1024)
                        .diskExtentBytes(PersistedSegments.EXTENT).build()));
        assertEquals("page size", e.what());
        assertEquals("1024", e.expected());
        assertEquals("" + PersistedSegments.PAGE, e.found());
    }

    @Test
    void anotherFormatVersionIsRefusedAndAnUnreadableHeaderToo() throws IOException {
        try (KvTierCache cache = open()) {
            put(cache, "a", Tier.DISK);
        }
        byte[] bytes = Files.readAllBytes(journal());
        ByteBuffer header = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int headerEnd = 28 + header.getInt(24);
        header.putInt(8, 99); // a future format, with a valid header checksum
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, headerEnd);
        header.putInt(headerEnd, (int) crc.getValue());
        Files.write(journal(), bytes);
        PersistedDirectoryMismatchException e = assertThrows(PersistedDirectoryMismatchException.class, this::open);
        assertEquals("format version", e.what());
        assertEquals("99", e.found());

        bytes[20] ^= 1; // now both header copies fail their checksums: nothing of the header can be trusted
        bytes[1056 + 20] ^= 1; // the second copy's slot: 28 fixed bytes, 1024 for the namespace, 4 for the CRC
        Files.write(journal(), bytes);
        e = assertThrows(PersistedDirectoryMismatchException.class, this::open);
        assertEquals("header", e.what());
        assertTrue(e.getMessage().contains("copy 1 failed its checksum") && e.getMessage().contains("copy 2 its checksum"),
                e.getMessage());
    }

    /** Ten DISK segments k-0..k-9, recorded in that order, and a clean close. */
    private void tenSegments() {
        try (KvTierCache cache = open()) {
            for (int i = 0; i < 10; i++) {
                put(cache, "k-" + i, Tier.DISK);
            }
        }
    }

    /** Offsets of every record in the journal (where "KVTR" starts one). */
    private List<Integer> recordOffsets() throws IOException {
        byte[] bytes = Files.readAllBytes(journal());
        List<Integer> offsets = new ArrayList<>();
        for (int i = 0; i + 4 <= bytes.length; i++) {
            if (bytes[i] == 'K' && bytes[i + 1] == 'V' && bytes[i + 2] == 'T' && bytes[i + 3] == 'R') {
                offsets.add(i);
            }
        }
        return offsets;
    }

    @Test
    void aTornLastRecordIsDiscardedAndCountedAndTheRestServed() throws IOException {
        tenSegments();
        try (RandomAccessFile file = new RandomAccessFile(journal().toFile(), "rw")) {
            file.setLength(file.length() - 5);
        }
        try (KvTierCache cache = open()) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(9, report.recovered());
            assertEquals(1L, report.discarded().get(DiscardReason.TORN_RECORD));
            assertTrue(cache.get("k-9").isEmpty());
            for (int i = 0; i < 9; i++) {
                verify(cache, "k-" + i);
            }
        }
        try (KvTierCache cache = open()) { // the open compacted the torn tail away
            assertEquals(0, cache.recovery().orElseThrow().discardedTotal());
            assertEquals(9, cache.recovery().orElseThrow().recovered());
        }
    }

    @Test
    void aCorruptedRecordInTheMiddleIsDiscardedAndCountedAndTheRecordsAfterItServed() throws IOException {
        tenSegments();
        List<Integer> offsets = recordOffsets();
        assertEquals(10, offsets.size(), offsets.toString());
        byte[] bytes = Files.readAllBytes(journal());
        bytes[offsets.get(4) + 20] ^= 0x40; // inside record 4's body: its checksum fails
        Files.write(journal(), bytes);
        try (KvTierCache cache = open()) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(1L, report.discarded().get(DiscardReason.CORRUPT_RECORD), report.toString());
            assertEquals(9, report.recovered());
            assertTrue(cache.get("k-4").isEmpty());
            for (int i = 0; i < 10; i++) {
                if (i != 4) {
                    verify(cache, "k-" + i);
                }
            }
        }
    }

    @Test
    void aCorruptedLengthFieldLosesOnlyItsRecord() throws IOException {
        tenSegments();
        List<Integer> offsets = recordOffsets();
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(journal())).order(ByteOrder.LITTLE_ENDIAN);
        bytes.putInt(offsets.get(2) + 4, 1 << 19); // the length now runs far past the record
        Files.write(journal(), bytes.array());
        try (KvTierCache cache = open()) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(9, report.recovered(), report.toString());
            assertEquals(1L, report.discarded().get(DiscardReason.CORRUPT_RECORD));
            assertTrue(cache.get("k-2").isEmpty());
            verify(cache, "k-3");
        }
    }

    /** Flips one byte of segment {@code key}'s bytes in whichever extent file holds them. */
    private void corruptDataOf(String key) throws IOException {
        byte[] needle = java.util.Arrays.copyOf(content(key), 64);
        try (DirectoryStream<Path> extents = Files.newDirectoryStream(directory, "kvtier-persistent-*.extent")) {
            for (Path extent : extents) {
                byte[] bytes = Files.readAllBytes(extent);
                for (int at = 0; at + needle.length <= bytes.length; at += PersistedSegments.PAGE) {
                    if (java.util.Arrays.equals(bytes, at, at + needle.length, needle, 0, needle.length)) {
                        bytes[at + 33] ^= 1;
                        Files.write(extent, bytes);
                        return;
                    }
                }
            }
        }
        throw new AssertionError("the bytes of " + key + " are in no extent");
    }

    @Test
    void aCorruptedDataPageFailsOnFirstUseIsDroppedAndCounted() throws IOException {
        tenSegments();
        corruptDataOf("k-3");
        try (KvTierCache cache = open()) {
            assertEquals(10, cache.recovery().orElseThrow().recovered()); // lazily: the open read no bytes
            verify(cache, "k-2");
            SegmentCorruptedException e = assertThrows(SegmentCorruptedException.class,
                    () -> cache.read("k-3", MemorySegment.ofArray(new byte[4096])));
            assertTrue(e.removed(), e.getMessage());
            assertTrue(cache.get("k-3").isEmpty());
            assertEquals(1, cache.recovery().orElseThrow().failedFirstUse());
            // the same for a first use that is a promotion
        }
        try (KvTierCache cache = open()) { // the drop was recorded
            assertEquals(9, cache.recovery().orElseThrow().recovered());
            assertTrue(cache.get("k-3").isEmpty());
        }
    }

    @Test
    void aCorruptedDataPageFailsAPromotionToo() throws IOException {
        tenSegments();
        corruptDataOf("k-5");
        try (KvTierCache cache = open()) {
            SegmentCorruptedException e = assertThrows(SegmentCorruptedException.class,
                    () -> cache.ensureResident("k-5", Tier.GPU));
            assertTrue(e.removed());
            assertTrue(cache.get("k-5").isEmpty());
            assertEquals(Tier.GPU, cache.ensureResident("k-6", Tier.GPU).tier());
            verify(cache, "k-6");
        }
    }

    @Test
    void eagerVerificationDropsACorruptedSegmentDuringOpen() throws IOException {
        tenSegments();
        corruptDataOf("k-7");
        try (KvTierCache cache = open(DiskPersistence.of(NAMESPACE).verify(DiskPersistence.Verification.EAGER))) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(9, report.recovered());
            assertEquals(1L, report.discarded().get(DiscardReason.CHECKSUM_MISMATCH));
            assertFalse(report.recoveredKeys().contains("k-7"));
            assertTrue(cache.get("k-7").isEmpty());
        }
    }

    @Test
    void aMissingExtentDiscardsItsSegments() throws IOException {
        tenSegments();
        Files.delete(directory.resolve("kvtier-persistent-0.extent"));
        try (KvTierCache cache = open()) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(10L, report.discarded().get(DiscardReason.EXTENT_MISSING), report.toString());
            assertEquals(0, report.recovered());
        }
    }

    private long extentFiles() throws IOException {
        try (var files = Files.list(directory)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".extent")).count();
        }
    }

    @Test
    void compactionAndPageReuseKeepTheDirectoryBoundedOverManyRestarts() throws IOException {
        int cycles = 90;
        int perCycle = 50;
        long maxRecords = 0;
        long maxExtents = 0;
        for (int cycle = 0; cycle < cycles; cycle++) {
            try (KvTierCache cache = open()) {
                assertEquals(cycle == 0 ? 0 : perCycle, cache.recovery().orElseThrow().recovered());
                for (int i = 0; i < perCycle; i++) {
                    put(cache, "c" + cycle + "-" + i, Tier.DISK);
                    cache.remove("c" + (cycle - 1) + "-" + i);
                }
            }
            maxRecords = Math.max(maxRecords, recordOffsets().size());
            maxExtents = Math.max(maxExtents, extentFiles());
        }
        // 9000 records were written in all; the journal holds at most 2 x live + 4096 (then it is compacted)
        // plus what one cycle adds. 50 live segments of at most 4 pages (2000 bytes) fit one extent of 256
        // pages; one cycle's put-before-remove overlap at most doubles that.
        assertTrue(maxRecords <= 2 * perCycle + 4096 + 2 * perCycle, "journal records " + maxRecords);
        assertTrue(maxExtents <= 2, "extent files " + maxExtents);
    }

    @Test
    void theJournalIsCompactedWhileRunning() throws IOException {
        try (KvTierCache cache = open()) {
            for (int i = 0; i < 12_000; i++) {
                put(cache, "churn-" + i, Tier.DISK);
                cache.remove("churn-" + i);
            }
            put(cache, "last", Tier.DISK);
            // Without compaction 24k records (~1 MB); the journal may hold at most 2 x live + 4096 records.
            assertTrue(Files.size(journal()) < 4200 * 100, "journal bytes " + Files.size(journal()));
        }
        try (KvTierCache cache = open()) {
            assertEquals(List.of("last"), cache.recovery().orElseThrow().recoveredKeys());
            verify(cache, "last");
        }
    }

    /**
     * A record follows its bytes: a DISK put or demotion whose copy failed, or silently delivered
     * nothing, leaves no record (a record written before the copy would bring the key back after a restart).
     */
    @ParameterizedTest
    @EnumSource(names = {"FAILED", "SILENTLY_SKIPPED"})
    void aDiskArrivalWhoseBytesDidNotArriveIsNeverRecorded(CopyFault fault) {
        KvTierConfig config = config(directory, DiskPersistence.of(NAMESPACE)).build();
        try (KvTierCache cache = KvTierCache.open(config, fault.onCopy(2))) {
            put(cache, "a", Tier.DISK); // copy 1
            assertThrows(TransferFailedException.class, () -> put(cache, "b", Tier.DISK)); // copy 2
            assertTrue(cache.get("b").isEmpty());
        }
        try (KvTierCache cache = KvTierCache.open(config, fault.onCopy(2))) {
            assertEquals(List.of("a"), cache.recovery().orElseThrow().recoveredKeys());
            put(cache, "c", Tier.CPU); // copy 1
            assertThrows(TransferFailedException.class, () -> cache.demote("c", Tier.DISK)); // copy 2
            assertEquals(Tier.CPU, cache.get("c").orElseThrow().tier());
        }
        try (KvTierCache cache = KvTierCache.open(config)) {
            assertEquals(List.of("a"), cache.recovery().orElseThrow().recoveredKeys());
            verify(cache, "a");
        }
    }

    enum CopyFault {
        FAILED, SILENTLY_SKIPPED;

        java.util.function.UnaryOperator<dev.kvtier.exec.ExecutionBackend> onCopy(int n) {
            return this == FAILED ? FaultInjectingBackend.failingCopy(n) : FaultInjectingBackend.silentlySkippedCopy(n);
        }
    }

    @Test
    void aRecoveredSegmentKeepsTheUsesItHadWhenItArrivedOnDisk() {
        long uses;
        try (KvTierCache cache = open()) {
            put(cache, "hot", Tier.DISK);
            put(cache, "cold", Tier.DISK);
            for (int i = 0; i < 3; i++) { // each promotion is a use
                cache.promote("hot", Tier.CPU);
                cache.demote("hot", Tier.DISK);
            }
            uses = cache.get("hot").orElseThrow().accessCount();
            assertTrue(uses >= 3, "" + uses);
        }
        try (KvTierCache cache = open()) {
            assertEquals(uses, cache.get("hot").orElseThrow().accessCount());
            assertTrue(cache.get("cold").orElseThrow().accessCount() < uses);
        }
    }

    @Test
    void withoutPersistenceThereIsNoReportAndNothingSurvives() {
        KvTierConfig volatileConfig = KvTierConfig.builder().backend(Backend.HOST).gpuBudgetBytes(1 << 16)
                .cpuBudgetBytes(1 << 16).diskDirectory(directory).build();
        try (KvTierCache cache = KvTierCache.open(volatileConfig)) {
            assertTrue(cache.recovery().isEmpty());
            put(cache, "a", Tier.DISK);
        }
        try (KvTierCache cache = KvTierCache.open(volatileConfig)) {
            assertTrue(cache.get("a").isEmpty());
        }
    }

    @Test
    void persistenceNeedsADiskDirectory() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KvTierConfig.builder()
                .gpuBudgetBytes(1).cpuBudgetBytes(1).persistence(DiskPersistence.of("m")).build());
        assertTrue(e.getMessage().contains("diskDirectory"), e.getMessage());
    }

    @Test
    void theCudaBackendOverTheFakePersistsRegisteredExtents() {
        FakeCuda fake = FakeCuda.open();
        fake.reset();
        CudaRuntime.probe(fake.library()).runtime().orElseThrow();
        KvTierConfig cuda = config(directory, DiskPersistence.of(NAMESPACE)).backend(Backend.CUDA)
                .cudaLibrary(fake.library()).diskTransferMode(DiskTransferMode.REGISTERED).build();
        Set<String> expected;
        try (KvTierCache cache = KvTierCache.open(cuda)) {
            assertTrue(cache.backendDescription().contains("cudaHostRegister"), cache.backendDescription());
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                keys.add("g-" + i);
                put(cache, "g-" + i, i % 4 == 0 ? Tier.GPU : Tier.DISK); // GPU and CPU fill: demotions to DISK
            }
            expected = onDisk(cache, keys);
            assertTrue(expected.size() > 150 && expected.size() < 200, "" + expected.size());
        }
        try (KvTierCache cache = KvTierCache.open(cuda)) {
            assertEquals(expected, new TreeSet<>(cache.recovery().orElseThrow().recoveredKeys()));
            for (String key : expected) {
                assertEquals(Tier.GPU, cache.ensureResident(key, Tier.GPU).tier()); // DISK -> device from the mapping
                verify(cache, key);
            }
        } finally {
            fake.reset();
            fake.assertNothingLive();
        }
    }

    @Test
    void recoveredSegmentsAreOrdinarySegments() {
        tenSegments();
        try (KvTierCache cache = open()) {
            SegmentMeta meta = cache.get("k-1").orElseThrow();
            assertEquals(Tier.DISK, meta.tier());
            cache.promote("k-1", Tier.CPU);
            verify(cache, "k-1");
            cache.demote("k-1", Tier.DISK);
            assertTrue(cache.remove("k-2").isPresent());
            put(cache, "k-10", Tier.DISK);
        }
        try (KvTierCache cache = open()) {
            Set<String> keys = new TreeSet<>(cache.recovery().orElseThrow().recoveredKeys());
            assertEquals(new TreeSet<>(List.of("k-0", "k-1", "k-3", "k-4", "k-5", "k-6", "k-7", "k-8", "k-9", "k-10")), keys);
            keys.forEach(key -> verify(cache, key));
        }
    }
}
