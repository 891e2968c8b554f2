package dev.kvtier;

import dev.kvtier.RecoveryReport.DiscardReason;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.prefix.ResidentBlock;
import dev.kvtier.store.Tier;
import dev.kvtier.testing.FaultLogRouting;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

import static dev.kvtier.PersistedSegments.PAGE;
import static dev.kvtier.PersistedSegments.config;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Prefix blocks survive a restart as blocks: the journal records each block's parent, and recovery
 * rebuilds the chains (parents first, child counts included), so the recovered leading blocks are found,
 * restored and continued through the prefix API, and a recovered parent with children cannot be removed.
 * A block whose parent did not come back (never on DISK, record corrupted, bytes failing their check) is
 * never served as a chain member, and never left pointing to a block that is gone.
 */
@Tag(FaultLogRouting.TAG)
class PersistedPrefixBlocksTest {
    private static final String NAMESPACE = "test-model/bf16/tp0";
    /** One block = one page of the persistence tests' configuration. */
    private static final BlockLayout LAYOUT = BlockLayout.of(16, PAGE);

    @TempDir
    Path directory;

    private KvTierCache open(DiskPersistence persistence) {
        return KvTierCache.open(config(directory, persistence).build());
    }

    private KvTierCache open() {
        return open(DiskPersistence.of(NAMESPACE));
    }

    private static List<BlockHash> chain(int seed, int length) {
        List<BlockHash> hashes = new ArrayList<>();
        for (int i = 0; i < length; i++) {
            hashes.add(new BlockHash(seed, i + 1));
        }
        return hashes;
    }

    /** A block's bytes, a function of its hash: a reopened cache checks them without knowing the writer. */
    private static byte[] content(BlockHash hash) {
        SplittableRandom random = new SplittableRandom(hash.high() * 31 + hash.low());
        byte[] bytes = new byte[PAGE];
        random.nextBytes(bytes);
        return bytes;
    }

    private static MemorySegment contents(List<BlockHash> hashes) {
        byte[] all = new byte[hashes.size() * PAGE];
        for (int i = 0; i < hashes.size(); i++) {
            System.arraycopy(content(hashes.get(i)), 0, all, i * PAGE, PAGE);
        }
        return MemorySegment.ofArray(all);
    }

    private static void assertBytes(PrefixBlockCache blocks, BlockHash hash) {
        byte[] read = new byte[PAGE];
        blocks.readBlock(hash, MemorySegment.ofArray(read));
        assertArrayEquals(content(hash), read, "bytes of " + hash);
    }

    private static List<BlockHash> concat(List<BlockHash> a, List<BlockHash> b) {
        List<BlockHash> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    /** A chain of six blocks all on DISK. */
    private static final List<BlockHash> ON_DISK = chain(1, 6);
    /** A chain whose root stays on GPU (volatile) while its three children are on DISK: they come back orphans. */
    private static final List<BlockHash> GPU_ROOTED = chain(2, 4);

    /** Stores {@link #ON_DISK} (in two calls: the second continues the first) and {@link #GPU_ROOTED}. */
    private static void storeChains(KvTierCache cache) {
        PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
        List<BlockHash> a = ON_DISK;
        blocks.storeBlocks(BlockHash.ROOT, a.subList(0, 2), contents(a.subList(0, 2)), Tier.DISK);
        blocks.storeBlocks(a.get(1), a.subList(2, 6), contents(a.subList(2, 6)), Tier.DISK);
        List<BlockHash> g = GPU_ROOTED;
        blocks.storeBlocks(BlockHash.ROOT, g.subList(0, 1), contents(g.subList(0, 1)), Tier.GPU);
        blocks.storeBlocks(g.get(0), g.subList(1, 4), contents(g.subList(1, 4)), Tier.DISK);
        assertEquals(List.of(Tier.GPU, Tier.DISK, Tier.DISK, Tier.DISK), blocks.lookupPrefix(g).tiers());
    }

    /** What a reopen after {@link #storeChains} must find, and what the prefix API can do with it. */
    private void assertChainsRecovered() {
        List<BlockHash> a = ON_DISK;
        try (KvTierCache cache = open()) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(6, report.recovered(), report.toString());
            assertEquals(3L, report.discarded().get(DiscardReason.ORPHANED), report.toString());
            PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
            assertEquals(Collections.nCopies(6, Tier.DISK), blocks.lookupPrefix(a).tiers());
            assertEquals(0, blocks.lookupPrefix(GPU_ROOTED).cachedBlocks());
            assertTrue(cache.get(PrefixBlockCache.keyOf(GPU_ROOTED.get(1))).isEmpty(), "an orphan was served");

            assertEquals(0, blocks.storeBlocks(BlockHash.ROOT, a, contents(a), Tier.GPU)); // the same chain again
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> blocks.removeBlock(a.get(2)));
            assertTrue(refused.getMessage().contains("1 cached child"), refused.getMessage());

            try (PrefixPin pin = blocks.ensurePrefixResident(a, Tier.GPU)) {
                assertEquals(6, pin.size());
                for (ResidentBlock block : pin.blocks()) {
                    assertEquals(Tier.GPU, block.tier());
                }
            }
            for (BlockHash hash : a) {
                assertBytes(blocks, hash);
            }
            List<BlockHash> continuation = chain(3, 3);
            assertEquals(3, blocks.storeBlocks(a.get(5), continuation, contents(continuation), Tier.GPU));
            assertEquals(9, blocks.lookupPrefix(concat(a, continuation)).cachedBlocks());
            assertEquals(0, cache.recovery().orElseThrow().failedFirstUse());
            for (int i = continuation.size() - 1; i >= 0; i--) {
                assertTrue(blocks.removeBlock(continuation.get(i)));
            }
            for (int i = a.size() - 1; i >= 0; i--) { // from the tail: every child count was rebuilt and drops to 0
                assertTrue(blocks.removeBlock(a.get(i)));
            }
        }
    }

    @Test
    void recoveredChainsAreChainsAgain() {
        try (KvTierCache cache = open()) {
            storeChains(cache);
        }
        assertChainsRecovered();
    }

    @Test
    void recoveredChainsAreChainsAgainAfterTheWriterIsKilled() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx128m", "-cp",
                System.getProperty("java.class.path"), Writer.class.getName(), directory.toString())
                .redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String line;
            StringBuilder said = new StringBuilder();
            while ((line = out.readLine()) != null && !line.equals("STORED")) {
                said.append(line).append('\n');
            }
            assertEquals("STORED", line, "the writer ended before storing:\n" + said);
            child.destroyForcibly(); // SIGKILL with the cache open: no close, no final sync
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the killed writer did not end");
        } finally {
            child.destroyForcibly();
            child.waitFor(60, TimeUnit.SECONDS);
        }
        assertChainsRecovered();
    }

    /** The writer JVM of the kill test: stores the chains, says {@code STORED}, then waits to be killed. */
    public static final class Writer {
        private Writer() {
        }

        /** @param args the disk directory */
        public static void main(String[] args) throws IOException {
            KvTierCache cache = KvTierCache.open(config(Path.of(args[0]), DiskPersistence.of(NAMESPACE)).build());
            storeChains(cache);
            System.out.println("STORED");
            System.out.flush();
            System.in.transferTo(java.io.OutputStream.nullOutputStream()); // until killed, or the parent's pipe closes
            Runtime.getRuntime().halt(0); // never closing the cache
        }
    }

    @Test
    void aBlockWhoseParentsRecordIsCorruptedIsNotServedAsAChainMember() throws IOException {
        List<BlockHash> a = chain(4, 4);
        try (KvTierCache cache = open()) {
            cache.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, a, contents(a), Tier.DISK);
        }
        List<Integer> offsets = recordOffsets();
        assertEquals(4, offsets.size(), offsets.toString()); // one PUT per block, in chain order
        byte[] bytes = Files.readAllBytes(journal());
        bytes[offsets.get(1) + 20] ^= 0x40; // block 1's record fails its checksum
        Files.write(journal(), bytes);
        try (KvTierCache cache = open()) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(1, report.recovered(), report.toString());
            assertEquals(1L, report.discarded().get(DiscardReason.CORRUPT_RECORD), report.toString());
            assertEquals(2L, report.discarded().get(DiscardReason.ORPHANED), report.toString());
            PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
            assertEquals(List.of(Tier.DISK), blocks.lookupPrefix(a).tiers());
            assertTrue(cache.get(PrefixBlockCache.keyOf(a.get(2))).isEmpty());
            assertTrue(cache.get(PrefixBlockCache.keyOf(a.get(3))).isEmpty());
        }
        try (KvTierCache cache = open()) { // the orphans' removal was recorded
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(1, report.recovered(), report.toString());
            assertEquals(0, report.discardedTotal(), report.toString());
            PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
            assertEquals(3, blocks.storeBlocks(BlockHash.ROOT, a, contents(a), Tier.DISK));
            assertEquals(4, blocks.lookupPrefix(a).cachedBlocks());
        }
    }

    @Test
    void aRecoveredBlockFailingItsFirstReadTakesItsDescendantsWithIt() throws IOException {
        List<BlockHash> a = chain(5, 5);
        try (KvTierCache cache = open()) {
            cache.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, a, contents(a), Tier.DISK);
        }
        corruptDataOf(a.get(2));
        try (KvTierCache cache = open()) {
            PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
            assertEquals(5, blocks.lookupPrefix(a).cachedBlocks()); // lazily: nothing was read yet
            SegmentCorruptedException e = assertThrows(SegmentCorruptedException.class,
                    () -> blocks.readBlock(a.get(2), MemorySegment.ofArray(new byte[PAGE])));
            assertTrue(e.removed(), e.getMessage());
            assertEquals(2, blocks.lookupPrefix(a).cachedBlocks());
            for (BlockHash gone : a.subList(2, 5)) {
                assertTrue(cache.get(PrefixBlockCache.keyOf(gone)).isEmpty(), gone + " outlived its parent");
            }
            assertEquals(1, cache.recovery().orElseThrow().failedFirstUse());
            assertFalse(assertThrows(IllegalStateException.class, () -> blocks.removeBlock(a.get(0)))
                    .getMessage().isEmpty()); // block 1 is still its child
            assertTrue(blocks.removeBlock(a.get(1))); // its child count dropped to 0 with the drop
            assertEquals(4, blocks.storeBlocks(BlockHash.ROOT, a, contents(a), Tier.CPU));
            for (BlockHash hash : a) {
                assertBytes(blocks, hash);
            }
        }
    }

    @Test
    void aRecoveredBlockFailingItsCheckInARestoreEndsThePrefixThereAndTakesItsDescendants() throws IOException {
        List<BlockHash> a = chain(6, 5);
        try (KvTierCache cache = open()) {
            cache.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, a, contents(a), Tier.DISK);
        }
        corruptDataOf(a.get(3));
        try (KvTierCache cache = open()) {
            PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
            try (PrefixPin pin = blocks.ensurePrefixResident(a, Tier.GPU)) {
                assertEquals(3, pin.size());
                for (ResidentBlock block : pin.blocks()) {
                    assertEquals(Tier.GPU, block.tier());
                }
            }
            assertEquals(List.of(Tier.GPU, Tier.GPU, Tier.GPU), blocks.lookupPrefix(a).tiers());
            assertTrue(cache.get(PrefixBlockCache.keyOf(a.get(4))).isEmpty());
            assertEquals(1, cache.recovery().orElseThrow().failedFirstUse());
            for (BlockHash hash : a.subList(0, 3)) {
                assertBytes(blocks, hash);
            }
        }
    }

    @Test
    void eagerVerificationDropsACorruptedParentsDescendantsAsOrphans() throws IOException {
        List<BlockHash> a = chain(7, 4);
        try (KvTierCache cache = open()) {
            cache.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, a, contents(a), Tier.DISK);
        }
        corruptDataOf(a.get(1));
        try (KvTierCache cache = open(DiskPersistence.of(NAMESPACE).verify(DiskPersistence.Verification.EAGER))) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(1, report.recovered(), report.toString());
            assertEquals(1L, report.discarded().get(DiscardReason.CHECKSUM_MISMATCH), report.toString());
            assertEquals(2L, report.discarded().get(DiscardReason.ORPHANED), report.toString());
            PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
            assertEquals(1, blocks.lookupPrefix(a).cachedBlocks());
            assertTrue(blocks.removeBlock(a.get(0))); // no child left counted
        }
    }

    @Test
    void aJournalOfTheFormerFormatWithoutBlockIdentitiesIsRefused() throws IOException {
        try (KvTierCache cache = open()) {
            cache.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, chain(8, 2), contents(chain(8, 2)), Tier.DISK);
        }
        byte[] bytes = Files.readAllBytes(journal());
        ByteBuffer header = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(3, header.getInt(8));
        int headerEnd = 28 + header.getInt(24);
        header.putInt(8, 1); // version 1: records without the block flag and parent key
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, headerEnd);
        header.putInt(headerEnd, (int) crc.getValue());
        Files.write(journal(), bytes);
        PersistedDirectoryMismatchException e = assertThrows(PersistedDirectoryMismatchException.class, this::open);
        assertEquals("format version", e.what());
        assertEquals("1", e.found());
        try (KvTierCache cache = open(DiskPersistence.of(NAMESPACE).onMismatch(DiskPersistence.OnMismatch.WIPE))) {
            assertEquals(0, cache.recovery().orElseThrow().recovered());
            assertTrue(cache.recovery().orElseThrow().wipedBecause().orElseThrow().contains("format version"));
        }
    }

    private Path journal() {
        return directory.resolve("kvtier.journal");
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

    /** Flips one byte of block {@code hash}'s bytes in whichever extent file holds them. */
    private void corruptDataOf(BlockHash hash) throws IOException {
        byte[] needle = Arrays.copyOf(content(hash), 64);
        try (DirectoryStream<Path> extents = Files.newDirectoryStream(directory, "kvtier-persistent-*.extent")) {
            for (Path extent : extents) {
                byte[] bytes = Files.readAllBytes(extent);
                for (int at = 0; at + needle.length <= bytes.length; at += PAGE) {
                    if (Arrays.equals(bytes, at, at + needle.length, needle, 0, needle.length)) {
                        bytes[at + 33] ^= 1;
                        Files.write(extent, bytes);
                        return;
                    }
                }
            }
        }
        throw new AssertionError("the bytes of " + hash + " are in no extent");
    }
}
