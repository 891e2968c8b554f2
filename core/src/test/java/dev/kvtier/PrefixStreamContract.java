package dev.kvtier;

import org.junit.jupiter.api.Tag;
import dev.kvtier.testing.FaultLogRouting;
import dev.kvtier.exec.ExecutionBackend;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockHasher;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixLayer;
import dev.kvtier.prefix.PrefixStream;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The contract of {@link PrefixBlockCache#streamPrefixByLayer} on every backend (subclasses only configure): a prefix
 * larger than the GPU tier streamed layer by layer through two staging slots with every byte intact, the staging area
 * taken from the GPU budget and given back, the sources pinned where they are (eviction and removal meanwhile change
 * no byte handed out), and failure, cancellation, timeout and close during a stream releasing everything.
 */
@Tag(FaultLogRouting.TAG) // failed and late copies injected on purpose: the library's warnings go to target/test-logs
abstract class PrefixStreamContract {
    static final int PAGE = 4096;
    static final int LAYERS = 4;
    /** Four layers, K and V regions of 512 bytes each, K regions first: two ranges per layer, 1 KiB a layer. */
    static final BlockLayout LAYERED = BlockLayout.layered(16, LAYERS, PAGE / 8, BlockLayout.LayerOrder.KV_MAJOR);
    static final int BLOCK = (int) LAYERED.bytesPerBlock();
    static final int LAYER_BYTES = BLOCK / LAYERS;

    @TempDir
    Path diskDirectory;

    private final List<KvTierCache> opened = new ArrayList<>();

    protected abstract KvTierConfig.Builder configureBackend(KvTierConfig.Builder builder);

    /** The bytes of memory a page points to (device memory copied back on CUDA). */
    protected abstract byte[] pageContent(MemorySegment page);

    /** Runs after every test's caches are closed: backends check for leaks here. */
    protected void afterCachesClosed() {
    }

    @AfterEach
    void closeCaches() {
        opened.forEach(KvTierCache::close);
        afterCachesClosed();
    }

    KvTierCache open(long gpuBlocks, long cpuBlocks, UnaryOperator<ExecutionBackend> decorate) {
        KvTierConfig config = configureBackend(KvTierConfig.builder())
                .gpuBudgetBytes(gpuBlocks * PAGE).cpuBudgetBytes(cpuBlocks * PAGE).pageSizeBytes(PAGE)
                .diskExtentBytes(16L * PAGE).diskDirectory(diskDirectory).transferTimeout(Duration.ofSeconds(5)).build();
        KvTierCache cache = KvTierCache.open(config, decorate);
        opened.add(cache);
        return cache;
    }

    static List<BlockHash> chain(int seed, int blocks) {
        int[] tokens = new int[blocks * LAYERED.tokensPerBlock()];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = seed * 100_003 + i;
        }
        return new BlockHasher().chain(BlockHasher.namespaceRoot("stream"), tokens, LAYERED.tokensPerBlock());
    }

    static byte[] content(BlockHash hash) {
        return KvTierCacheContract.randomBytes(hash.high() ^ hash.low(), BLOCK);
    }

    static MemorySegment contents(List<BlockHash> hashes) {
        byte[] all = new byte[hashes.size() * BLOCK];
        for (int i = 0; i < hashes.size(); i++) {
            System.arraycopy(content(hashes.get(i)), 0, all, i * BLOCK, BLOCK);
        }
        return MemorySegment.ofArray(all);
    }

    /** A 6-block chain: blocks 0-1 on GPU, 2-3 on CPU, 4-5 on DISK (GPU budget 4 blocks: it cannot hold all 6). */
    static List<BlockHash> storeAcrossTiers(PrefixBlockCache blocks, int seed) {
        List<BlockHash> a = chain(seed, 6);
        blocks.storeBlocks(BlockHash.ROOT, a.subList(0, 2), contents(a.subList(0, 2)), Tier.GPU);
        blocks.storeBlocks(a.get(1), a.subList(2, 4), contents(a.subList(2, 4)), Tier.CPU);
        blocks.storeBlocks(a.get(3), a.subList(4, 6), contents(a.subList(4, 6)), Tier.DISK);
        assertEquals(List.of(Tier.GPU, Tier.GPU, Tier.CPU, Tier.CPU, Tier.DISK, Tier.DISK), blocks.lookupPrefix(a).tiers());
        return a;
    }

    /** Layer {@code layer}'s bytes of block {@code hash}: its K range then its V range (KV_MAJOR). */
    static byte[] expectedLayer(BlockHash hash, int layer) {
        byte[] block = content(hash);
        long[] offsets = LAYERED.layerOffsets(layer);
        long[] lengths = LAYERED.layerLengths(layer);
        byte[] out = new byte[LAYER_BYTES];
        int at = 0;
        for (int r = 0; r < offsets.length; r++) {
            System.arraycopy(block, (int) offsets[r], out, at, (int) lengths[r]);
            at += (int) lengths[r];
        }
        return out;
    }

    byte[] pagesContent(List<MemorySegment> pages) {
        byte[] out = new byte[pages.stream().mapToInt(p -> (int) p.byteSize()).sum()];
        int at = 0;
        for (MemorySegment page : pages) {
            byte[] part = pageContent(page);
            System.arraycopy(part, 0, out, at, part.length);
            at += part.length;
        }
        return out;
    }

    void assertLayerIntact(List<BlockHash> hashes, PrefixLayer layer) {
        assertEquals(hashes.size(), layer.blocks());
        for (int b = 0; b < hashes.size(); b++) {
            assertArrayEquals(expectedLayer(hashes.get(b), layer.layer()), pagesContent(layer.pages(b)),
                    "layer " + layer.layer() + " of block " + b);
        }
    }

    static PrefixLayer await(CompletableFuture<PrefixLayer> layer) throws Exception {
        return layer.get(30, TimeUnit.SECONDS);
    }

    // ------------------------------------------------------------------ streaming

    @Test
    void aPrefixLargerThanTheGpuTierStreamsEveryLayerIntactAndStaysWhereItIs() throws Exception {
        KvTierCache cache = open(4, 4, UnaryOperator.identity());
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = storeAcrossTiers(blocks, 1);
        assertThrows(TierFullException.class, () -> blocks.ensurePrefixResident(a, Tier.GPU),
                "the whole prefix does not fit the GPU tier: what the stream is for");
        long gpuBefore = cache.stats().gpuUsed();
        try (PrefixStream stream = blocks.streamPrefixByLayer(a)) {
            assertEquals(6, stream.size());
            assertEquals(a, stream.hashes());
            assertEquals(List.of(Tier.GPU, Tier.GPU, Tier.CPU, Tier.CPU, Tier.DISK, Tier.DISK), stream.foundOn());
            assertEquals(2L * 4 * LAYER_BYTES, stream.stagingBytes(), "two slots of one layer of the 4 blocks off the GPU");
            assertEquals(gpuBefore + stream.stagingBytes(), cache.stats().gpuUsed(), "staging is taken from the GPU budget");
            for (int l = 0; l < LAYERS; l++) {
                PrefixLayer layer = await(stream.layer(l));
                assertEquals(l, layer.layer());
                assertLayerIntact(a, layer);
                layer.release();
                layer.release(); // idempotent
            }
            assertEquals(List.of(Tier.GPU, Tier.GPU, Tier.CPU, Tier.CPU, Tier.DISK, Tier.DISK), blocks.lookupPrefix(a).tiers(),
                    "no block was promoted");
            assertThrows(SegmentPinnedException.class, () -> cache.demote(PrefixBlockCache.keyOf(a.get(1)), Tier.CPU),
                    "the sources are pinned while streaming");
        }
        awaitGpuUsed(cache, gpuBefore); // staging given back at close (the pins before it)
        cache.demote(PrefixBlockCache.keyOf(a.get(1)), Tier.CPU); // the pins are gone
    }

    @Test
    void aLayerArrivesOnlyOnceTheLayerTwoBeforeItWasReleased() throws Exception {
        KvTierCache cache = open(4, 8, UnaryOperator.identity());
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(2, 3);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a), Tier.CPU);
        try (PrefixStream stream = blocks.streamPrefixByLayer(a)) {
            PrefixLayer zero = await(stream.layer(0));
            PrefixLayer one = await(stream.layer(1));
            // Layer 2 needs layer 0's slot: held, it cannot arrive (waited long enough for a copy of 3 KiB to land).
            assertThrows(TimeoutException.class, () -> stream.layer(2).get(300, TimeUnit.MILLISECONDS));
            assertLayerIntact(a, zero);
            one.release();
            assertFalse(stream.layer(2).isDone(), "layer 1's slot is layer 3's, not layer 2's");
            zero.release();
            assertLayerIntact(a, await(stream.layer(2)));
            assertLayerIntact(a, await(stream.layer(3)));
        }
    }

    @Test
    void aPrefixAllOnTheGpuIsHandedOverInPlaceWithNoStaging() throws Exception {
        KvTierCache cache = open(8, 8, UnaryOperator.identity());
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(3, 3);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a), Tier.GPU);
        long gpuBefore = cache.stats().gpuUsed();
        List<BlockHash> asked = new ArrayList<>(a);
        asked.add(chain(4, 4).get(3)); // not cached: the stream covers the cached prefix only
        try (PrefixStream stream = blocks.streamPrefixByLayer(asked)) {
            assertEquals(3, stream.size());
            assertEquals(0, stream.stagingBytes());
            assertEquals(gpuBefore, cache.stats().gpuUsed());
            for (int l = 0; l < LAYERS; l++) {
                assertLayerIntact(a, await(stream.layer(l))); // no release needed: nothing is staged
            }
        }
        try (PrefixStream none = blocks.streamPrefixByLayer(chain(5, 2))) {
            assertEquals(0, none.size());
            assertEquals(0, await(none.layer(LAYERS - 1)).blocks());
        }
    }

    @Test
    void sourcesRemovedOrCrowdedOutWhileStreamingKeepEveryByteHandedOut() throws Exception {
        KvTierCache cache = open(2, 4, UnaryOperator.identity());
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(6, 4);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a), Tier.CPU);
        try (PrefixStream stream = blocks.streamPrefixByLayer(a)) {
            PrefixLayer zero = await(stream.layer(0));
            assertLayerIntact(a, zero);
            // The runtime's neighbours: every source removed (tail first), then the CPU tier filled with other blocks,
            // whose pages would be the freed ones if the sources were not pinned.
            for (int i = a.size() - 1; i >= 0; i--) {
                assertTrue(blocks.removeBlock(a.get(i)));
            }
            assertEquals(0, blocks.lookupPrefix(a).cachedBlocks());
            List<BlockHash> other = chain(7, 4);
            blocks.storeBlocks(BlockHash.ROOT, other, contents(other), Tier.CPU);
            zero.release();
            for (int l = 1; l < LAYERS; l++) {
                PrefixLayer layer = await(stream.layer(l));
                assertLayerIntact(a, layer);
                layer.release();
            }
            for (BlockHash hash : other) {
                byte[] read = new byte[BLOCK];
                blocks.readBlock(hash, MemorySegment.ofArray(read));
                assertArrayEquals(content(hash), read, "the other blocks' bytes are theirs");
            }
        }
    }

    @Test
    void aFailedLayerCopyFailsThatLayerAndTheLaterOnesAndLeavesTheBlocksIntact() throws Exception {
        // Copies: three block stores, then the stream's first layer batch fails.
        KvTierCache cache = open(4, 8, FaultInjectingBackend.failingCopy(4));
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(8, 3);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a), Tier.CPU);
        try (PrefixStream stream = blocks.streamPrefixByLayer(a)) {
            for (int l = 0; l < LAYERS; l++) {
                int layer = l;
                ExecutionException failed = assertThrows(ExecutionException.class,
                        () -> stream.layer(layer).get(30, TimeUnit.SECONDS));
                assertInstanceOf(TransferFailedException.class, failed.getCause(), "layer " + l);
            }
        }
        awaitGpuUsed(cache, 0); // staging given back
        assertEquals(List.of(Tier.CPU, Tier.CPU, Tier.CPU), blocks.lookupPrefix(a).tiers());
        for (BlockHash hash : a) {
            byte[] read = new byte[BLOCK];
            blocks.readBlock(hash, MemorySegment.ofArray(read));
            assertArrayEquals(content(hash), read);
        }
        try (PrefixStream again = blocks.streamPrefixByLayer(a)) {
            assertLayerIntact(a, await(again.layer(0)));
        }
    }

    @Test
    void closingAStreamMidwayFailsTheLayersLeftAndReleasesPinsAndStaging() throws Exception {
        KvTierCache cache = open(4, 8, UnaryOperator.identity());
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(9, 3);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a), Tier.CPU);
        PrefixStream stream = blocks.streamPrefixByLayer(a);
        assertLayerIntact(a, await(stream.layer(0)));
        assertTrue(cache.stats().gpuUsed() > 0);
        stream.close();
        stream.close(); // idempotent
        for (int l = 2; l < LAYERS; l++) {
            int layer = l;
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> stream.layer(layer).get(30, TimeUnit.SECONDS));
            assertInstanceOf(CancellationException.class, failed.getCause());
        }
        awaitGpuUsed(cache, 0); // at once, or just after the copy of layer 1 (started with layer 0) has ended
        cache.demote(PrefixBlockCache.keyOf(a.get(2)), Tier.DISK); // unpinned
        await(stream.layer(0)).release(); // a release after the close does nothing
    }

    @Test
    void aTimedOutLayerLeavesTheStreamAndACloseDuringASlowCopyIsBoundedAndReleasesAfterIt() throws Exception {
        AtomicLong slow = new AtomicLong();
        KvTierCache cache = open(4, 8, FaultInjectingBackend.slowCopies(slow));
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(10, 3);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a), Tier.CPU);
        slow.set(400);
        PrefixStream stream = blocks.streamPrefixByLayer(a);
        CompletableFuture<PrefixLayer> zero = stream.layer(0);
        ExecutionException timedOut = assertThrows(ExecutionException.class,
                () -> zero.orTimeout(10, TimeUnit.MILLISECONDS).get(30, TimeUnit.SECONDS));
        assertInstanceOf(TimeoutException.class, timedOut.getCause());
        // The stream goes on: layer 1 arrives (slowly) although the runtime gave up on layer 0.
        assertLayerIntact(a, await(stream.layer(1)));
        CompletableFuture<PrefixLayer> three = stream.layer(3);
        long start = System.nanoTime();
        stream.close();
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2), "close waits for no copy");
        assertThrows(CompletionException.class, three::join);
        slow.set(0);
        awaitGpuUsed(cache, 0); // released once no copy can write the staging area
    }

    /** Waits (at most 10 s) until the GPU tier holds {@code bytes}: a close releases after a copy in flight ends. */
    static void awaitGpuUsed(KvTierCache cache, long bytes) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (cache.stats().gpuUsed() != bytes && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(bytes, cache.stats().gpuUsed(), "GPU bytes once no copy of the stream can write its staging area");
    }

    @Test
    void closingTheCacheDuringAStreamIsBoundedAndFailsTheLayersLeft() throws Exception {
        KvTierCache cache = open(4, 8, UnaryOperator.identity());
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(11, 3);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a), Tier.CPU);
        PrefixStream stream = blocks.streamPrefixByLayer(a);
        await(stream.layer(0));
        long start = System.nanoTime();
        cache.close();
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "close() is bounded");
        ExecutionException failed = assertThrows(ExecutionException.class, () -> stream.layer(3).get(30, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, failed.getCause());
        stream.close(); // after the cache closed: nothing to release, no error
        assertThrows(IllegalStateException.class, () -> blocks.streamPrefixByLayer(a));
    }

    @Test
    void aDependentOfALayerMayCallTheCacheAndCloseIt() throws Exception {
        KvTierCache cache = open(4, 8, UnaryOperator.identity());
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(12, 3);
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a), Tier.CPU);
        PrefixStream stream = blocks.streamPrefixByLayer(a);
        CompletableFuture<Integer> found = stream.layer(0).thenApply(layer -> {
            try (PrefixStream nested = blocks.streamPrefixByLayer(a)) { // a second stream of the same blocks
                return blocks.lookupPrefix(a).cachedBlocks() + nested.size();
            }
        });
        assertEquals(6, found.get(30, TimeUnit.SECONDS));
        CompletableFuture<Void> closed = stream.layer(1).thenAccept(layer -> cache.close());
        closed.get(30, TimeUnit.SECONDS);
        stream.close();
    }

    @Test
    void noRoomForTheStagingAreaFailsTheStreamAndPinsNothing() {
        KvTierCache cache = open(1, 8, UnaryOperator.identity());
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(13, 4); // staging: 2 x 4 KiB, more than the 4 KiB GPU budget
        blocks.storeBlocks(BlockHash.ROOT, a, contents(a), Tier.CPU);
        assertThrows(TierFullException.class, () -> blocks.streamPrefixByLayer(a));
        assertEquals(0, cache.stats().gpuUsed());
        cache.demote(PrefixBlockCache.keyOf(a.get(3)), Tier.DISK); // not pinned
        assertEquals(Arrays.asList(Tier.CPU, Tier.CPU, Tier.CPU, Tier.DISK), blocks.lookupPrefix(a).tiers());
    }
}
