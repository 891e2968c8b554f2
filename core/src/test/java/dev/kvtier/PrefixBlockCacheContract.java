package dev.kvtier;

import dev.kvtier.exec.ExecutionBackend;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockHasher;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixLookup;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.prefix.PrefixRestore;
import dev.kvtier.prefix.ResidentBlock;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The contract of {@link PrefixBlockCache} on every backend (subclasses only configure, as for
 * {@link KvTierCacheContract}): longest cached prefix, batched and layered restores with pins and intact bytes,
 * all-or-nothing failures, and eviction that takes chains from the tail.
 */
abstract class PrefixBlockCacheContract {
    static final int PAGE = 4096;
    /** One block = one page: budgets below are in blocks. */
    static final BlockLayout LAYOUT = BlockLayout.of(16, PAGE);
    /** Four layers, K and V regions of 512 bytes each, K regions first: two ranges per layer. */
    static final BlockLayout LAYERED = BlockLayout.layered(16, 4, PAGE / 8, BlockLayout.LayerOrder.KV_MAJOR);

    @TempDir
    Path diskDirectory;

    private final List<KvTierCache> opened = new ArrayList<>();
    private final BlockHasher hasher = new BlockHasher();

    protected abstract KvTierConfig.Builder configureBackend(KvTierConfig.Builder builder);

    /** The bytes of memory a resident block's pages point to (device memory copied back on CUDA). */
    protected abstract byte[] pageContent(MemorySegment page);

    /** Copy calls made so far by the backend (driver calls), or -1 where the backend cannot count them. */
    protected long copyCalls() {
        return -1;
    }

    /** Runs after every test's caches are closed: backends check for leaks here. */
    protected void afterCachesClosed() {
    }

    @AfterEach
    void closeCaches() {
        opened.forEach(KvTierCache::close);
        afterCachesClosed();
    }

    KvTierCache open(long gpuBlocks, long cpuBlocks) {
        return open(gpuBlocks, cpuBlocks, UnaryOperator.identity());
    }

    KvTierCache open(long gpuBlocks, long cpuBlocks, UnaryOperator<ExecutionBackend> decorate) {
        KvTierConfig config = configureBackend(KvTierConfig.builder())
                .gpuBudgetBytes(gpuBlocks * PAGE).cpuBudgetBytes(cpuBlocks * PAGE).pageSizeBytes(PAGE)
                .diskExtentBytes(16L * PAGE).diskDirectory(diskDirectory).build();
        KvTierCache cache = KvTierCache.open(config, decorate);
        opened.add(cache);
        return cache;
    }

    /** A chain of {@code blocks} hashes under {@code namespace}, its tokens derived from {@code seed}. */
    List<BlockHash> chain(String namespace, int seed, int blocks) {
        int[] tokens = new int[blocks * LAYOUT.tokensPerBlock()];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = seed * 100_003 + i;
        }
        return hasher.chain(BlockHasher.namespaceRoot(namespace), tokens, LAYOUT.tokensPerBlock());
    }

    static byte[] content(BlockHash hash, int bytes) {
        return KvTierCacheContract.randomBytes(hash.high() ^ hash.low(), bytes);
    }

    /** The content of {@code hashes} laid end to end, as {@link PrefixBlockCache#storeBlocks} takes it. */
    static MemorySegment contents(List<BlockHash> hashes, int blockBytes) {
        byte[] all = new byte[hashes.size() * blockBytes];
        for (int i = 0; i < hashes.size(); i++) {
            System.arraycopy(content(hashes.get(i), blockBytes), 0, all, i * blockBytes, blockBytes);
        }
        return MemorySegment.ofArray(all);
    }

    static byte[] read(PrefixBlockCache blocks, BlockHash hash) {
        byte[] out = new byte[(int) blocks.layout().bytesPerBlock()];
        blocks.readBlock(hash, MemorySegment.ofArray(out));
        return out;
    }

    byte[] pagesContent(List<MemorySegment> pages) {
        int size = 0;
        for (MemorySegment page : pages) {
            size += (int) page.byteSize();
        }
        byte[] out = new byte[size];
        int at = 0;
        for (MemorySegment page : pages) {
            byte[] part = pageContent(page);
            System.arraycopy(part, 0, out, at, part.length);
            at += part.length;
        }
        return out;
    }

    static List<Tier> tiers(PrefixBlockCache blocks, List<BlockHash> hashes) {
        return blocks.lookupPrefix(hashes).tiers();
    }

    static String keyOf(BlockHash hash) {
        return PrefixBlockCache.keyOf(hash);
    }

    // ------------------------------------------------------------------ lookup and store

    @Test
    void lookupFindsTheLongestCachedPrefixAndTheTierOfEachBlock() {
        PrefixBlockCache blocks = open(8, 8).prefixBlocks(LAYOUT);
        List<BlockHash> a = chain("model", 1, 4);
        assertEquals(0, blocks.lookupPrefix(a).cachedBlocks());
        assertEquals(2, blocks.storeBlocks(BlockHash.ROOT, a.subList(0, 2), contents(a.subList(0, 2), PAGE), Tier.CPU));
        assertEquals(1, blocks.storeBlocks(a.get(1), a.subList(2, 3), contents(a.subList(2, 3), PAGE), Tier.DISK));
        PrefixLookup found = blocks.lookupPrefix(a);
        assertEquals(List.of(Tier.CPU, Tier.CPU, Tier.DISK), found.tiers());
        assertEquals(2, found.blocksOn(Tier.CPU));
        // A request that differs at block 1 shares only block 0.
        List<BlockHash> other = new ArrayList<>(a);
        other.set(1, chain("model", 2, 2).get(1));
        assertEquals(1, blocks.lookupPrefix(other).cachedBlocks());
        // The same tokens under another namespace share nothing.
        assertEquals(0, blocks.lookupPrefix(chain("other-model", 1, 4)).cachedBlocks());
        // Storing known blocks again changes nothing and stores nothing.
        assertEquals(0, blocks.storeBlocks(BlockHash.ROOT, a.subList(0, 3), contents(a.subList(0, 3), PAGE), Tier.GPU));
        assertEquals(List.of(Tier.CPU, Tier.CPU, Tier.DISK), tiers(blocks, a));
    }

    @Test
    void storedBlocksKeepTheirBytesAndTokenPositions() {
        KvTierCache cache = open(8, 8);
        PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
        List<BlockHash> a = chain("m", 3, 3);
        blocks.storeBlocks(BlockHash.ROOT, a.subList(0, 1), contents(a.subList(0, 1), PAGE));
        blocks.storeBlocks(a.get(0), a.subList(1, 3), contents(a.subList(1, 3), PAGE));
        for (int i = 0; i < 3; i++) {
            assertArrayEquals(content(a.get(i), PAGE), read(blocks, a.get(i)), "block " + i);
            assertEquals(PositionRange.of(16L * i, 16L * (i + 1)), cache.get(keyOf(a.get(i))).orElseThrow().positions());
        }
    }

    /**
     * A block's children are found whichever was asked for last (a parent remembers one child as a hint and the others
     * are found by hash), and a child removed and stored again under another parent belongs to that parent only.
     */
    @Test
    void childrenAreFoundWhicheverWasAskedLastAndARemovedChildStoredElsewhereMovesWithIt() {
        KvTierCache cache = open(8, 8);
        PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
        List<BlockHash> a = chain("m", 11, 2);
        List<BlockHash> b = chain("m", 12, 2);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a, PAGE), Tier.GPU);
        blocks.storeBlocks(BlockHash.ROOT, b.subList(0, 1), contents(b.subList(0, 1), PAGE), Tier.GPU);
        BlockHash sibling = chain("m", 14, 1).get(0);
        blocks.storeBlocks(a.get(0), List.of(sibling), contents(List.of(sibling), PAGE), Tier.GPU);
        for (int round = 0; round < 3; round++) {
            try (PrefixPin one = blocks.ensurePrefixResident(a, Tier.GPU);
                 PrefixPin two = blocks.ensurePrefixResident(List.of(a.get(0), sibling), Tier.GPU)) {
                assertEquals(2, one.size(), "round " + round);
                assertEquals(2, two.size(), "round " + round);
                assertEquals(sibling, two.blocks().get(1).hash());
            }
        }
        // a.get(1) leaves and comes back under b.get(0): a's chain is one block long now, b's two.
        assertTrue(blocks.removeBlock(a.get(1)));
        assertEquals(1, blocks.storeBlocks(b.get(0), List.of(a.get(1)), contents(List.of(a.get(1)), PAGE), Tier.GPU));
        try (PrefixPin pin = blocks.ensurePrefixResident(a, Tier.GPU)) {
            assertEquals(1, pin.size(), "block 1 of a continues b now");
        }
        assertEquals(1, blocks.lookupPrefix(a).cachedBlocks());
        try (PrefixPin pin = blocks.ensurePrefixResident(List.of(b.get(0), a.get(1)), Tier.GPU)) {
            assertEquals(2, pin.size());
            assertEquals(PositionRange.of(16, 32), pin.blocks().get(1).positions());
        }
        assertArrayEquals(content(a.get(1), PAGE), read(blocks, a.get(1)));
    }

    @Test
    void aNewBlockIsNeverPlacedHotterThanItsParent() {
        PrefixBlockCache blocks = open(8, 8).prefixBlocks(LAYOUT);
        List<BlockHash> a = chain("m", 4, 3);
        blocks.storeBlocks(BlockHash.ROOT, a.subList(0, 1), contents(a.subList(0, 1), PAGE), Tier.CPU);
        blocks.storeBlocks(a.get(0), a.subList(1, 3), contents(a.subList(1, 3), PAGE), Tier.GPU);
        assertEquals(List.of(Tier.CPU, Tier.CPU, Tier.CPU), tiers(blocks, a));
    }

    // ------------------------------------------------------------------ restore

    @Test
    void aRestoreToCpuMovesOnlyTheSlowerBlocksAndSaysWhereEachIsAndWasFound() {
        KvTierCache cache = open(8, 8);
        PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
        List<BlockHash> a = chain("m", 6, 3);
        blocks.storeBlocks(BlockHash.ROOT, a.subList(0, 1), contents(a.subList(0, 1), PAGE), Tier.GPU);
        blocks.storeBlocks(a.get(0), a.subList(1, 2), contents(a.subList(1, 2), PAGE), Tier.CPU);
        blocks.storeBlocks(a.get(1), a.subList(2, 3), contents(a.subList(2, 3), PAGE), Tier.DISK);
        try (PrefixPin pin = blocks.ensurePrefixResident(a, Tier.CPU)) {
            assertEquals(3, pin.size());
            List<Tier> now = List.of(Tier.GPU, Tier.CPU, Tier.CPU);
            List<Tier> found = List.of(Tier.GPU, Tier.CPU, Tier.DISK);
            for (int i = 0; i < 3; i++) {
                ResidentBlock block = pin.blocks().get(i);
                assertEquals(now.get(i), block.tier(), "where block " + i + " is pinned (a faster block stays)");
                assertEquals(found.get(i), block.foundOn(), "where the restore found block " + i);
            }
            assertEquals(now, tiers(blocks, a));
        }
        for (int i = 0; i < 3; i++) {
            assertArrayEquals(content(a.get(i), PAGE), read(blocks, a.get(i)), "block " + i + " after the restore");
        }
    }

    @Test
    void ensurePrefixResidentBringsTheCachedPrefixToGpuPinnedWithItsBytes() {
        KvTierCache cache = open(8, 8);
        PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
        List<BlockHash> a = chain("m", 5, 5);
        blocks.storeBlocks(BlockHash.ROOT, a.subList(0, 2), contents(a.subList(0, 2), PAGE), Tier.CPU);
        blocks.storeBlocks(a.get(1), a.subList(2, 4), contents(a.subList(2, 4), PAGE), Tier.DISK);
        try (PrefixPin pin = blocks.ensurePrefixResident(a, Tier.GPU)) {
            assertEquals(4, pin.size(), "block 4 is not cached: the prefix is 4 long");
            for (int i = 0; i < 4; i++) {
                ResidentBlock block = pin.blocks().get(i);
                assertEquals(a.get(i), block.hash());
                assertEquals(Tier.GPU, block.tier());
                assertEquals(i < 2 ? Tier.CPU : Tier.DISK, block.foundOn(), "where the restore found block " + i);
                assertEquals(PositionRange.of(16L * i, 16L * (i + 1)), block.positions());
                assertArrayEquals(content(a.get(i), PAGE), pagesContent(block.pages()), "the pinned pages of block " + i);
            }
            assertEquals(List.of(Tier.GPU, Tier.GPU, Tier.GPU, Tier.GPU), tiers(blocks, a));
            assertThrows(SegmentPinnedException.class, () -> cache.demote(keyOf(a.get(3)), Tier.CPU));
        }
        cache.demote(keyOf(a.get(3)), Tier.CPU); // the tail may leave once unpinned
        assertThrows(IllegalStateException.class, () -> cache.demote(keyOf(a.get(1)), Tier.CPU),
                "block 1 has a child on GPU: it may not leave GPU before it");
        for (int i = 0; i < 4; i++) {
            assertArrayEquals(content(a.get(i), PAGE), read(blocks, a.get(i)), "block " + i + " after the restore");
        }
    }

    @Test
    void aRestoreOfNothingCachedPinsNothing() {
        PrefixBlockCache blocks = open(4, 4).prefixBlocks(LAYOUT);
        try (PrefixPin pin = blocks.ensurePrefixResident(chain("m", 6, 3), Tier.GPU)) {
            assertEquals(0, pin.size());
        }
    }

    @Test
    void theBlocksARestoreMovesFromOneTierCostOneCopyCall() {
        long before = copyCalls();
        org.junit.jupiter.api.Assumptions.assumeTrue(before >= 0, "this backend does not count copy calls");
        PrefixBlockCache blocks = open(8, 8).prefixBlocks(LAYOUT);
        List<BlockHash> a = chain("m", 7, 6);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a, PAGE), Tier.CPU);
        long start = copyCalls();
        try (PrefixPin pin = blocks.ensurePrefixResident(a, Tier.GPU)) {
            assertEquals(6, pin.size());
        }
        assertEquals(1, copyCalls() - start, "six blocks from CPU to GPU: one batched copy call");
    }

    @Test
    void aRestoreMakesRoomForTheWholePrefixTakingOtherChainsFromTheTail() {
        PrefixBlockCache blocks = open(4, 8).prefixBlocks(LAYOUT);
        List<BlockHash> a = chain("m", 8, 4);
        List<BlockHash> b = chain("m", 9, 2);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a, PAGE), Tier.GPU);
        blocks.storeBlocks(BlockHash.ROOT, b, contents(b, PAGE), Tier.CPU);
        try (PrefixPin pin = blocks.ensurePrefixResident(b, Tier.GPU)) {
            assertEquals(2, pin.size());
        }
        try (PrefixPin again = blocks.ensurePrefixResident(b, Tier.GPU)) {
            assertEquals(List.of(Tier.GPU, Tier.GPU), again.blocks().stream().map(ResidentBlock::foundOn).toList(),
                    "on GPU already: found there");
        }
        assertEquals(List.of(Tier.GPU, Tier.GPU, Tier.CPU, Tier.CPU), tiers(blocks, a),
                "a's root was the least recently used, but a chain leaves GPU from its tail");
        for (BlockHash hash : a) {
            assertArrayEquals(content(hash, PAGE), read(blocks, hash));
        }
    }

    @Test
    void aPrefixLargerThanTheGpuFailsWholeAndMovesNothing() {
        PrefixBlockCache blocks = open(4, 8).prefixBlocks(LAYOUT);
        List<BlockHash> a = chain("m", 10, 6);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a, PAGE), Tier.CPU);
        assertThrows(TierFullException.class, () -> blocks.ensurePrefixResident(a, Tier.GPU));
        assertEquals(List.of(Tier.CPU, Tier.CPU, Tier.CPU, Tier.CPU, Tier.CPU, Tier.CPU), tiers(blocks, a));
    }

    @Test
    void aFailedCopyLeavesEveryBlockWhereItWas() {
        // Copies: three puts, then the restore's one batch fails.
        KvTierCache cache = open(8, 8, FaultInjectingBackend.failingCopy(4));
        PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
        List<BlockHash> a = chain("m", 11, 3);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a, PAGE), Tier.CPU);
        assertThrows(TransferFailedException.class, () -> blocks.ensurePrefixResident(a, Tier.GPU));
        assertEquals(List.of(Tier.CPU, Tier.CPU, Tier.CPU), tiers(blocks, a));
        assertEquals(0, cache.stats().gpuUsed());
        for (BlockHash hash : a) {
            assertArrayEquals(content(hash, PAGE), read(blocks, hash));
        }
        try (PrefixPin pin = blocks.ensurePrefixResident(a, Tier.GPU)) {
            assertEquals(3, pin.size(), "the next restore works");
        }
    }

    @Test
    void aLayeredRestoreCompletesLayerByLayerAndPinsTheWholePrefix() throws Exception {
        int bytes = (int) LAYERED.bytesPerBlock();
        KvTierCache cache = open(8, 8);
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain("m", 12, 4);
        blocks.storeBlocks(BlockHash.ROOT, a.subList(0, 1), contents(a.subList(0, 1), bytes), Tier.GPU);
        blocks.storeBlocks(a.get(0), a.subList(1, 3), contents(a.subList(1, 3), bytes), Tier.CPU);
        PrefixRestore restore = blocks.ensurePrefixResidentByLayer(a, Tier.GPU);
        assertEquals(4, restore.layers());
        for (int layer = 0; layer < 4; layer++) {
            List<ResidentBlock> arrived = restore.layer(layer).get(30, TimeUnit.SECONDS);
            assertEquals(3, arrived.size());
            assertEquals(List.of(Tier.GPU, Tier.CPU, Tier.CPU), arrived.stream().map(ResidentBlock::foundOn).toList(),
                    "where the restore found each block");
            for (int i = 0; i < 3; i++) {
                byte[] expected = content(a.get(i), bytes);
                byte[] layerBytes = pagesContent(arrived.get(i).layerPages(LAYERED, layer));
                long[] offsets = LAYERED.layerOffsets(layer);
                assertEquals(2, offsets.length, "KV_MAJOR: a K and a V range");
                int r = (int) LAYERED.regionBytes();
                assertArrayEquals(Arrays.copyOfRange(expected, (int) offsets[0], (int) offsets[0] + r),
                        Arrays.copyOfRange(layerBytes, 0, r), "K of layer " + layer + " of block " + i);
                assertArrayEquals(Arrays.copyOfRange(expected, (int) offsets[1], (int) offsets[1] + r),
                        Arrays.copyOfRange(layerBytes, r, 2 * r), "V of layer " + layer + " of block " + i);
            }
        }
        try (PrefixPin pin = restore.pinned().get(30, TimeUnit.SECONDS)) {
            assertEquals(3, pin.size());
            assertEquals(List.of(Tier.GPU, Tier.GPU, Tier.GPU), tiers(blocks, a));
            assertThrows(SegmentPinnedException.class, () -> cache.demote(keyOf(a.get(2)), Tier.CPU));
        }
        for (int i = 0; i < 3; i++) {
            assertArrayEquals(content(a.get(i), bytes), read(blocks, a.get(i)));
        }
    }

    @Test
    void aFailedLayeredRestoreFailsTheLayersLeftAndMovesNothing() throws Exception {
        int bytes = (int) LAYERED.bytesPerBlock();
        // Copies: two puts, then the restore's first layer batch fails.
        KvTierCache cache = open(8, 8, FaultInjectingBackend.failingCopy(3));
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain("m", 13, 2);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a, bytes), Tier.CPU);
        PrefixRestore restore = blocks.ensurePrefixResidentByLayer(a, Tier.GPU);
        CompletionException failed = assertThrows(CompletionException.class, () -> restore.pinned().join());
        assertInstanceOf(TransferFailedException.class, failed.getCause());
        assertThrows(CompletionException.class, () -> restore.layer(0).join());
        assertEquals(List.of(Tier.CPU, Tier.CPU), tiers(blocks, a));
        assertEquals(0, cache.stats().gpuUsed());
        for (BlockHash hash : a) {
            assertArrayEquals(content(hash, bytes), read(blocks, hash));
        }
    }

    // ------------------------------------------------------------------ eviction and removal

    @Test
    void makingRoomTakesChainsFromTheirTails() {
        PrefixBlockCache blocks = open(4, 8).prefixBlocks(LAYOUT);
        List<BlockHash> a = chain("m", 14, 4);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a, PAGE), Tier.GPU);
        List<BlockHash> b = chain("m", 15, 3);
        blocks.storeBlocks(BlockHash.ROOT, b, contents(b, PAGE), Tier.GPU);
        assertEquals(List.of(Tier.GPU, Tier.CPU, Tier.CPU, Tier.CPU), tiers(blocks, a));
        assertEquals(List.of(Tier.GPU, Tier.GPU, Tier.GPU), tiers(blocks, b));
    }

    @Test
    void aParentIsNotSentDownPastTheTierOfItsChild() {
        KvTierCache cache = open(1, 1);
        PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
        List<BlockHash> a = chain("m", 18, 2);
        blocks.storeBlocks(BlockHash.ROOT, a.subList(0, 1), contents(a.subList(0, 1), PAGE), Tier.GPU);
        blocks.storeBlocks(a.get(0), a.subList(1, 2), contents(a.subList(1, 2), PAGE), Tier.CPU);
        List<BlockHash> b = chain("m", 19, 1);
        List<BlockHash> c = chain("m", 20, 1);
        try (SegmentPin childHeld = cache.pin(keyOf(a.get(1)), Tier.CPU)) {
            // Room on GPU needs a's root to leave; CPU is full of its pinned child: DISK would leave the child faster
            // than its parent, so the root stays, and the new block, finding no room on GPU or CPU, goes to DISK.
            blocks.storeBlocks(BlockHash.ROOT, b, contents(b, PAGE), Tier.GPU);
            assertEquals(List.of(Tier.GPU, Tier.CPU), tiers(blocks, a));
            assertEquals(List.of(Tier.DISK), tiers(blocks, b));
        }
        blocks.storeBlocks(BlockHash.ROOT, c, contents(c, PAGE), Tier.GPU); // the child may now go to DISK first
        assertEquals(List.of(Tier.CPU, Tier.DISK), tiers(blocks, a));
        assertEquals(List.of(Tier.GPU), tiers(blocks, c));
    }

    @Test
    void aBlockWithCachedChildrenIsNotRemoved() {
        PrefixBlockCache blocks = open(4, 4).prefixBlocks(LAYOUT);
        List<BlockHash> a = chain("m", 16, 3);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a, PAGE), Tier.CPU);
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> blocks.removeBlock(a.get(1)));
        assertTrue(refused.getMessage().contains(a.get(1).toString()), refused.getMessage());
        assertTrue(blocks.removeBlock(a.get(2)));
        assertTrue(blocks.removeBlock(a.get(1)));
        assertTrue(blocks.removeBlock(a.get(0)));
        assertEquals(false, blocks.removeBlock(a.get(0)));
        assertEquals(0, blocks.lookupPrefix(a).cachedBlocks());
    }

    /**
     * Threads restoring, pinning and extending chains that share a prefix, on budgets that force every call to
     * make room: no deadlock (chains lock root to tail), and afterwards no child is faster than its parent and
     * every block reads back what was stored.
     */
    @Test
    void concurrentRestoresAndStoresOfSharedChainsNeitherDeadlockNorBreakTheInvariant() throws Exception {
        PrefixBlockCache blocks = open(6, 10).prefixBlocks(LAYOUT);
        List<BlockHash> trunk = chain("m", 30, 3);
        blocks.storeBlocks(BlockHash.ROOT, trunk, contents(trunk, PAGE), Tier.GPU);
        int threads = 4;
        List<List<BlockHash>> stored = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        try {
            List<java.util.concurrent.Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    java.util.SplittableRandom random = new java.util.SplittableRandom(thread);
                    for (int round = 0; round < 25; round++) {
                        // A branch of 1-3 blocks under the shared trunk, unique to this thread and round.
                        List<BlockHash> branch = new ArrayList<>();
                        BlockHash parent = trunk.get(random.nextInt(trunk.size()));
                        for (int i = 0; i < 1 + random.nextInt(3); i++) {
                            branch.add(new BlockHash(0xc0c0 + thread, round * 8L + i));
                        }
                        blocks.storeBlocks(parent, branch, contents(branch, PAGE), Tier.GPU);
                        List<BlockHash> request = new ArrayList<>(trunk.subList(0, trunk.indexOf(parent) + 1));
                        request.addAll(branch);
                        stored.add(request);
                        List<BlockHash> again = stored.get(random.nextInt(stored.size()));
                        try (PrefixPin pin = blocks.ensurePrefixResident(again, Tier.GPU)) {
                            assertEquals(again.size(), pin.size());
                        } catch (TierFullException busy) {
                            // The GPU held by the other threads' pins: allowed, nothing moved.
                        }
                    }
                    return null;
                }));
            }
            for (java.util.concurrent.Future<?> future : done) {
                future.get(60, TimeUnit.SECONDS); // a deadlock fails here instead of hanging the build
            }
        } finally {
            pool.shutdownNow();
        }
        for (List<BlockHash> request : stored) {
            List<Tier> tiers = tiers(blocks, request);
            assertEquals(request.size(), tiers.size(), "every block stored is cached");
            for (int i = 1; i < tiers.size(); i++) {
                assertTrue(!tiers.get(i).isFasterThan(tiers.get(i - 1)), "block " + i + " of " + request + " on "
                        + tiers.get(i) + ", its parent on " + tiers.get(i - 1));
            }
            for (BlockHash hash : request) {
                assertArrayEquals(content(hash, PAGE), read(blocks, hash));
            }
        }
    }

    @Test
    void badArgumentsAreNamedAndChangeNothing() {
        PrefixBlockCache blocks = open(4, 4).prefixBlocks(LAYOUT);
        List<BlockHash> a = chain("m", 17, 2);
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> blocks.storeBlocks(BlockHash.ROOT, a, MemorySegment.ofArray(new byte[PAGE]))).getMessage().contains("8192"));
        assertThrows(IllegalArgumentException.class, () -> blocks.lookupPrefix(Arrays.asList(a.get(0), null)));
        assertThrows(IllegalArgumentException.class, () -> blocks.ensurePrefixResident(a, null));
        assertThrows(IllegalStateException.class, () -> blocks.ensurePrefixResidentByLayer(a, Tier.GPU),
                "no layers declared");
        assertEquals(0, blocks.lookupPrefix(a).cachedBlocks());
    }
}
