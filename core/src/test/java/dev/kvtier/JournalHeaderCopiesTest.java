package dev.kvtier;

import org.junit.jupiter.api.Tag;
import dev.kvtier.testing.FaultLogRouting;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static dev.kvtier.PersistedSegments.config;
import static dev.kvtier.PersistedSegments.put;
import static dev.kvtier.PersistedSegments.verify;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 24 item 11: one flipped bit in the journal header does not make the directory unopenable. The
 * header is kept twice, each copy in a fixed slot of 1,056 bytes (28 fixed, 1,024 for the namespace, 4 for
 * the CRC32C); an open uses an intact copy, says in the report which copy failed which check, and rewrites
 * both. Only when both copies fail is the directory refused, naming each failed check. On main at 8d41ee6
 * the first test fails at its first open: one flipped bit refused the directory ("not a whole header").
 */
@Tag(FaultLogRouting.TAG) // faults injected on purpose: the library's warnings go to target/test-logs
class JournalHeaderCopiesTest {
    private static final String NAMESPACE = "header-model/bf16/tp0";
    private static final int SLOT = 1056;

    @TempDir
    Path directory;

    private KvTierCache open() {
        return KvTierCache.open(config(directory, DiskPersistence.of(NAMESPACE)).build());
    }

    private Path journal() {
        return directory.resolve("kvtier.journal");
    }

    private void tenSegments() {
        try (KvTierCache cache = open()) {
            for (int i = 0; i < 10; i++) {
                put(cache, "h-" + i, Tier.DISK);
            }
        }
    }

    private void flip(int offset, int bit) throws IOException {
        byte[] bytes = Files.readAllBytes(journal());
        bytes[offset] ^= (byte) (1 << bit);
        Files.write(journal(), bytes);
    }

    /** Opens, expects every segment served and {@code repair} said; then a second open finds nothing to repair. */
    private void opensWithEverySegmentAndRepairs(String repair) throws IOException {
        try (KvTierCache cache = open()) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(10, report.recovered(), report.toString());
            assertEquals(1, report.repairs().size(), report.toString());
            assertTrue(report.repairs().getFirst().contains(repair), report.toString());
            for (int i = 0; i < 10; i++) {
                verify(cache, "h-" + i);
            }
        }
        byte[] bytes = Files.readAllBytes(journal());
        assertTrue(Arrays.equals(bytes, 0, SLOT, bytes, SLOT, 2 * SLOT), "both copies rewritten alike");
        try (KvTierCache cache = open()) {
            assertTrue(cache.recovery().orElseThrow().repairs().isEmpty(), cache.recovery().orElseThrow().toString());
            assertEquals(10, cache.recovery().orElseThrow().recovered());
        }
    }

    @Test
    void aFlippedBitInTheFirstCopyIsRepairedFromTheSecond() throws IOException {
        tenSegments();
        flip(20, 3); // the first copy's extent size: only its checksum can tell
        opensWithEverySegmentAndRepairs("header copy 1 failed its checksum");
    }

    @Test
    void aFlippedBitInTheSecondCopyIsRepairedFromTheFirst() throws IOException {
        tenSegments();
        flip(SLOT + 30, 0); // inside the second copy's namespace
        opensWithEverySegmentAndRepairs("header copy 2 failed its checksum");
    }

    @Test
    void aDamagedMagicOrNamespaceLengthIsNamedAsSuch() throws IOException {
        tenSegments();
        flip(2, 6);
        opensWithEverySegmentAndRepairs("header copy 1 failed its magic");
        flip(24 + 3, 6); // the namespace length's high byte: far beyond the header
        opensWithEverySegmentAndRepairs("header copy 1 failed its namespace length");
    }

    @Test
    void bothCopiesDamagedIsRefusedNamingEachCheck() throws IOException {
        tenSegments();
        flip(20, 3);
        flip(SLOT, 0);
        PersistedDirectoryMismatchException e = assertThrows(PersistedDirectoryMismatchException.class, this::open);
        assertEquals("header", e.what());
        assertTrue(e.getMessage().contains("header copy 1 failed its checksum") && e.getMessage().contains("copy 2 its magic"),
                e.getMessage());
    }
}
