package dev.kvtier;

import org.junit.jupiter.api.Tag;
import dev.kvtier.testing.FaultLogRouting;
import dev.kvtier.DiskPersistence.FsyncPolicy;
import dev.kvtier.RecoveryReport.DiscardReason;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
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
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

import static dev.kvtier.PersistedSegments.config;
import static dev.kvtier.PersistedSegments.verify;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 24 item 10: a damaged journal never rolls a key back. A record's checksum proves its bytes were
 * once put under its key, not that they are the latest: after the journal loses its tail (the records of a
 * rewrite and of two removals), recovery must neither serve the older version of the rewritten key nor
 * bring back the removed one, and must count what it refused. On main at 8d41ee6 these tests fail at their
 * first assertion: the reopened cache serves {@code k} as v1 and brings {@code r} back (and the report
 * says nothing was discarded), or brings back a removed key whose pages were reused by identical bytes.
 */
@Tag(FaultLogRouting.TAG) // faults injected on purpose: the library's warnings go to target/test-logs
class JournalRollbackTest {
    private static final String NAMESPACE = "rollback-model/bf16/tp0";
    private static final PositionRange RANGE = PositionRange.of(0, 16);

    @TempDir
    Path directory;

    private KvTierCache open(DiskPersistence persistence) {
        return KvTierCache.open(config(directory, persistence).build());
    }

    private Path journal() {
        return directory.resolve("kvtier.journal");
    }

    private static byte[] bytes(long seed, int length) {
        SplittableRandom random = new SplittableRandom(seed);
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) random.nextInt(256);
        }
        return bytes;
    }

    private static void putOnDisk(KvTierCache cache, String key, byte[] bytes) {
        cache.put(key, RANGE, MemorySegment.ofArray(bytes), Tier.DISK);
    }

    private static byte[] read(KvTierCache cache, String key) {
        byte[] actual = new byte[(int) cache.get(key).orElseThrow().sizeBytes()];
        cache.read(key, MemorySegment.ofArray(actual));
        return actual;
    }

    /** Whether some persistent extent still holds {@code bytes} at a page start (so only the journal can tell they are stale). */
    private boolean extentsHold(byte[] bytes) throws IOException {
        try (DirectoryStream<Path> extents = Files.newDirectoryStream(directory, "kvtier-persistent-*.extent")) {
            for (Path extent : extents) {
                byte[] all = Files.readAllBytes(extent);
                for (int at = 0; at + bytes.length <= all.length; at += PersistedSegments.PAGE) {
                    if (Arrays.equals(all, at, at + bytes.length, bytes, 0, bytes.length)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    private void cutJournal(long length) throws IOException {
        try (RandomAccessFile file = new RandomAccessFile(journal().toFile(), "rw")) {
            file.setLength(length);
        }
    }

    @ParameterizedTest
    @EnumSource(FsyncPolicy.class)
    void aJournalCutBackToOldRecordsNeitherRollsAKeyBackNorBringsARemovedKeyBack(FsyncPolicy policy) throws IOException {
        DiskPersistence persistence = DiskPersistence.of(NAMESPACE).fsync(policy);
        byte[] k1 = bytes(1, 300);
        byte[] r1 = bytes(2, 300);
        byte[] k2 = bytes(3, 1200); // three pages: not the one page k1 freed
        long endOfV1Records;
        try (KvTierCache cache = open(persistence)) {
            putOnDisk(cache, "k", k1);
            putOnDisk(cache, "r", r1);
            endOfV1Records = Files.size(journal());
            cache.remove("k");
            putOnDisk(cache, "k", k2);
            cache.remove("r");
            assertArrayEquals(k2, read(cache, "k"));
        }
        assertTrue(extentsHold(k1) && extentsHold(r1), "the v1 bytes are still on disk, matching their checksums");
        cutJournal(endOfV1Records); // the journal now ends after "put k v1, put r v1"

        try (KvTierCache cache = open(persistence)) {
            assertTrue(cache.get("k").isEmpty(), () -> "k came back as its older version (" + policy + ")");
            assertTrue(cache.get("r").isEmpty(), () -> "r came back after its removal (" + policy + ")");
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(0, report.recovered(), report.toString());
            assertEquals(2, report.rollbacksRefused(), report.toString());
            assertEquals(2L, report.discarded().get(DiscardReason.SUPERSEDED), report.toString());
            putOnDisk(cache, "k", k2); // the cache goes on, and what it writes now persists
        }
        try (KvTierCache cache = open(persistence)) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(0, report.discardedTotal(), "the open compacted the refused records away: " + report);
            assertArrayEquals(k2, read(cache, "k"));
        }
    }

    @Test
    void aRemovedKeyWhosePagesWereReusedByIdenticalBytesDoesNotComeBack() throws IOException {
        DiskPersistence persistence = DiskPersistence.of(NAMESPACE).fsync(FsyncPolicy.PER_SEGMENT);
        byte[] same = bytes(4, 500);
        long afterK;
        try (KvTierCache cache = open(persistence)) {
            putOnDisk(cache, "k", same);
            afterK = Files.size(journal());
            cache.remove("k");
            putOnDisk(cache, "x", same); // takes the page k freed: k's checksum matches what is there now
        }
        cutJournal(afterK);
        try (KvTierCache cache = open(persistence)) {
            assertTrue(cache.get("k").isEmpty(), "k came back after its removal");
            assertEquals(1, cache.recovery().orElseThrow().rollbacksRefused(), cache.recovery().orElseThrow().toString());
        }
    }

    @Test
    void withoutTheGenerationsFileNoRecordCanBeConfirmedAndNoneIsServed() throws IOException {
        try (KvTierCache cache = open(DiskPersistence.of(NAMESPACE))) {
            for (int i = 0; i < 5; i++) {
                PersistedSegments.put(cache, "g-" + i, Tier.DISK);
            }
        }
        Files.delete(directory.resolve("kvtier.generations"));
        try (KvTierCache cache = open(DiskPersistence.of(NAMESPACE))) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(0, report.recovered(), report.toString());
            assertEquals(5, report.rollbacksRefused(), report.toString());
        }
    }

    /**
     * A directory written by the previous format (2: one header copy, records without generations, no
     * generations file) is migrated on open, every segment served, and the next open finds format 3.
     */
    @Test
    void aJournalOfTheFormerFormatIsMigratedAndEverySegmentServed() throws IOException {
        try (KvTierCache cache = open(DiskPersistence.of(NAMESPACE))) {
            for (int i = 0; i < 20; i++) {
                PersistedSegments.put(cache, "m-" + i, Tier.DISK);
            }
            cache.remove("m-3");
        }
        Files.write(journal(), toFormat2(Files.readAllBytes(journal())));
        Files.delete(directory.resolve("kvtier.generations"));
        try (KvTierCache cache = open(DiskPersistence.of(NAMESPACE))) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(19, report.recovered(), report.toString());
            assertEquals(0, report.discardedTotal(), report.toString());
            assertTrue(report.repairs().getFirst().contains("format 2 migrated to 3"), report.toString());
            for (int i = 0; i < 20; i++) {
                if (i != 3) {
                    verify(cache, "m-" + i);
                }
            }
            cache.remove("m-4");
        }
        assertEquals(3, ByteBuffer.wrap(Files.readAllBytes(journal())).order(ByteOrder.LITTLE_ENDIAN).getInt(8));
        try (KvTierCache cache = open(DiskPersistence.of(NAMESPACE))) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(18, report.recovered(), report.toString());
            assertTrue(report.repairs().isEmpty() && report.discardedTotal() == 0, report.toString());
        }
    }

    /**
     * The same journal in format 2: the first header copy alone, as version 2, and each PUT without the
     * generation that follows its key.
     */
    private static byte[] toFormat2(byte[] format3) {
        ByteBuffer in = ByteBuffer.wrap(format3).order(ByteOrder.LITTLE_ENDIAN);
        int headerEnd = 28 + in.getInt(24);
        ByteBuffer out = ByteBuffer.allocate(format3.length).order(ByteOrder.LITTLE_ENDIAN);
        out.put(format3, 0, headerEnd).putInt(8, 2);
        out.putInt(crc(out.array(), 0, headerEnd));
        for (int at = 2 * 1056; at < format3.length; ) {
            int length = in.getInt(at + 4);
            int body = at + 12;
            int keyEnd = body + 5 + 2 * in.getInt(body + 1);
            boolean put = format3[body] == 1;
            int newLength = put ? length - 8 : length;
            int start = out.position();
            out.putInt(in.getInt(at)).putInt(newLength).putInt(0).put(format3, body, keyEnd - body);
            if (put) {
                out.put(format3, keyEnd + 8, body + length - keyEnd - 8);
            }
            out.putInt(start + 8, crc(out.array(), start + 12, newLength));
            at = body + length;
        }
        return Arrays.copyOf(out.array(), out.position());
    }

    private static int crc(byte[] bytes, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, offset, length);
        return (int) crc.getValue();
    }
}
