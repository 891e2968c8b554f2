package dev.kvtier;

import org.junit.jupiter.api.Tag;
import dev.kvtier.testing.FaultLogRouting;
import dev.kvtier.cuda.CudaException;
import dev.kvtier.cuda.FakeCuda;
import dev.kvtier.exec.ExecutionBackend;
import dev.kvtier.exec.TransferTimeoutException;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockHasher;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.prefix.PrefixRestore;
import dev.kvtier.prefix.ResidentBlock;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Regression tests for the layered restore of issue 24 (items 1, 2, 3 and 8), on the host backend (item 8 also on
 * CUDA over the fake libcudart). Every test here failed (or, bounded, would have hung) on main at commit 8d41ee6:
 * the pin of a cancelled or timed-out {@code pinned()} was never released, the futures were completed on the restore
 * thread inside the operation gate and under the chain's locks (a dependent closing the cache deadlocked, a
 * {@code close()} from another thread waited for a dependent, a nested restore in a dependent pinned the source pages
 * the commit then freed, a nested {@code removeBlock} threw a {@code NullPointerException}), and a failed layered
 * copy surfaced as the raw backend exception, not counted in {@code stats().failures()}. Every wait is bounded, so a
 * hang fails instead of hanging the build.
 */
@Tag(FaultLogRouting.TAG) // faults injected on purpose: the library's warnings go to target/test-logs
class PrefixRestoreRegressionTest {
    static final int PAGE = 4096;
    /** Two layers of a one-page block, each a K and a V region of 1 KiB. */
    static final BlockLayout LAYERED = BlockLayout.layered(16, 2, PAGE / 4, BlockLayout.LayerOrder.LAYER_MAJOR);
    static final Duration TRANSFER_TIMEOUT = Duration.ofSeconds(1);

    @TempDir
    Path diskDirectory;

    private final List<KvTierCache> opened = new ArrayList<>();
    private final BlockHasher hasher = new BlockHasher();

    @AfterEach
    void closeCaches() {
        for (KvTierCache cache : opened) {
            closeWithin(cache, Duration.ofSeconds(20)); // a cache that deadlocked is left behind, not waited for forever
        }
    }

    private KvTierCache open(long gpuBlocks, long cpuBlocks, UnaryOperator<ExecutionBackend> decorate) {
        return open(KvTierConfig.builder().backend(Backend.HOST), gpuBlocks, cpuBlocks, decorate);
    }

    private KvTierCache open(KvTierConfig.Builder backend, long gpuBlocks, long cpuBlocks,
                             UnaryOperator<ExecutionBackend> decorate) {
        KvTierConfig config = backend.gpuBudgetBytes(gpuBlocks * PAGE).cpuBudgetBytes(cpuBlocks * PAGE)
                .pageSizeBytes(PAGE).diskExtentBytes(16L * PAGE).diskDirectory(diskDirectory)
                .transferTimeout(TRANSFER_TIMEOUT).build();
        KvTierCache cache = KvTierCache.open(config, decorate);
        opened.add(cache);
        return cache;
    }

    private List<BlockHash> chain(int seed, int blocks) {
        int[] tokens = new int[blocks * LAYERED.tokensPerBlock()];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = seed * 100_003 + i;
        }
        return hasher.chain(BlockHasher.namespaceRoot("m"), tokens, LAYERED.tokensPerBlock());
    }

    /** Stores {@code hashes} as one chain on {@code tier}, each block's bytes {@link PrefixBlockCacheContract#content}. */
    private static void store(PrefixBlockCache blocks, List<BlockHash> hashes, Tier tier) {
        blocks.storeBlocks(BlockHash.ROOT, hashes, PrefixBlockCacheContract.contents(hashes, PAGE), tier);
    }

    private static byte[] expected(BlockHash hash) {
        return PrefixBlockCacheContract.content(hash, PAGE);
    }

    private static byte[] pagesContent(ResidentBlock block) {
        byte[] out = new byte[PAGE];
        int at = 0;
        for (MemorySegment page : block.pages()) {
            byte[] part = page.toArray(ValueLayout.JAVA_BYTE);
            System.arraycopy(part, 0, out, at, Math.min(part.length, PAGE - at));
            at += part.length;
        }
        return out;
    }

    // ------------------------------------------------------------------ item 1: cancel and timeout leak no pin

    @Test
    void cancellingPinnedWhileTheRestoreRunsReleasesItsPins() throws Exception {
        AtomicLong copyDelay = new AtomicLong();
        KvTierCache cache = open(4, 8, FaultInjectingBackend.slowCopies(copyDelay));
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(1, 3);
        store(blocks, a, Tier.CPU);
        copyDelay.set(100);
        PrefixRestore restore = blocks.ensurePrefixResidentByLayer(a, Tier.GPU);
        assertTrue(restore.pinned().cancel(true));
        restore.layer(1).get(10, TimeUnit.SECONDS); // the restore goes on and completes
        copyDelay.set(0);
        assertPinsReleased(cache, blocks, a);
    }

    @Test
    void aPinnedThatTimesOutReleasesItsPins() throws Exception {
        AtomicLong copyDelay = new AtomicLong();
        KvTierCache cache = open(4, 8, FaultInjectingBackend.slowCopies(copyDelay));
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(2, 3);
        store(blocks, a, Tier.CPU);
        copyDelay.set(100);
        PrefixRestore restore = blocks.ensurePrefixResidentByLayer(a, Tier.GPU);
        CompletableFuture<PrefixPin> timed = restore.pinned().orTimeout(20, TimeUnit.MILLISECONDS);
        ExecutionException timedOut = assertThrows(ExecutionException.class, () -> timed.get(10, TimeUnit.SECONDS));
        assertInstanceOf(TimeoutException.class, timedOut.getCause());
        restore.layer(1).get(10, TimeUnit.SECONDS);
        copyDelay.set(0);
        assertPinsReleased(cache, blocks, a);
    }

    /**
     * Within a few seconds the restored chain {@code a} (three blocks on a four-block GPU) can be demoted from its
     * tail, and a restore of another three-block chain to the GPU fits: no pin of {@code a} is left.
     */
    private void assertPinsReleased(KvTierCache cache, PrefixBlockCache blocks, List<BlockHash> a) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            try {
                cache.demote(PrefixBlockCache.keyOf(a.get(2)), Tier.CPU);
                break;
            } catch (SegmentPinnedException stillPinned) {
                if (System.nanoTime() > deadline) {
                    fail("the cancelled restore's pins were never released", stillPinned);
                }
                Thread.onSpinWait();
            }
        }
        List<BlockHash> b = chain(3, 3);
        store(blocks, b, Tier.CPU);
        try (PrefixPin pin = blocks.ensurePrefixResident(b, Tier.GPU)) {
            assertEquals(3, pin.size(), "room was made by demoting the blocks of the cancelled restore");
            for (int i = 0; i < 3; i++) {
                assertArrayEquals(expected(b.get(i)), pagesContent(pin.blocks().get(i)));
            }
        }
        for (BlockHash hash : a) {
            assertArrayEquals(expected(hash), PrefixBlockCacheContract.read(blocks, hash));
        }
    }

    // ------------------------------------------------------------------ item 2: no user code under our locks or gate

    @Test
    void aLayerDependentThatClosesTheCacheDoesNotDeadlock() throws Exception {
        AtomicLong copyDelay = new AtomicLong();
        KvTierCache cache = open(4, 8, FaultInjectingBackend.slowCopies(copyDelay));
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(4, 2);
        store(blocks, a, Tier.CPU);
        copyDelay.set(50); // the dependent is attached before layer 0 is in place: it runs where the cache completes it
        PrefixRestore restore = blocks.ensurePrefixResidentByLayer(a, Tier.GPU);
        CountDownLatch closed = new CountDownLatch(1);
        restore.layer(0).thenRun(cache::close).thenRun(closed::countDown);
        assertTrue(closed.await(10, TimeUnit.SECONDS), "close() from a layer's dependent returned");
        completesWithin(restore.pinned(), Duration.ofSeconds(10));
    }

    @Test
    void aPinnedDependentThatClosesTheCacheDoesNotDeadlock() throws Exception {
        AtomicLong copyDelay = new AtomicLong();
        KvTierCache cache = open(4, 8, FaultInjectingBackend.slowCopies(copyDelay));
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(5, 2);
        store(blocks, a, Tier.CPU);
        copyDelay.set(50);
        PrefixRestore restore = blocks.ensurePrefixResidentByLayer(a, Tier.GPU);
        CountDownLatch closed = new CountDownLatch(1);
        restore.pinned().thenAccept(pin -> {
            cache.close();
            pin.close(); // does nothing after close
            closed.countDown();
        });
        assertTrue(closed.await(10, TimeUnit.SECONDS), "close() from pinned()'s dependent returned");
    }

    @Test
    void whileALayerDependentRunsOtherCallsOnItsBlocksAndCloseFromAnotherThreadDoNotWaitForIt() throws Exception {
        AtomicLong copyDelay = new AtomicLong();
        KvTierCache cache = open(4, 8, FaultInjectingBackend.slowCopies(copyDelay));
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(6, 2);
        store(blocks, a, Tier.CPU);
        copyDelay.set(50);
        PrefixRestore restore = blocks.ensurePrefixResidentByLayer(a, Tier.GPU);
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        restore.layer(0).thenRun(() -> { // a runtime running attention right here, for long
            running.countDown();
            awaitQuietly(release, 30);
        });
        try {
            assertTrue(running.await(10, TimeUnit.SECONDS));
            copyDelay.set(0);
            CompletableFuture<Integer> other = CompletableFuture.supplyAsync(() -> {
                try (PrefixPin pin = blocks.ensurePrefixResident(a, Tier.GPU)) {
                    return pin.size();
                }
            });
            assertEquals(2, other.get(10, TimeUnit.SECONDS), "another call on the blocks did not wait for the dependent");
            long start = System.nanoTime();
            assertTrue(closeWithin(cache, TRANSFER_TIMEOUT.plusSeconds(5)), "close() returned");
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertTrue(took.compareTo(TRANSFER_TIMEOUT.plusMillis(1500)) < 0,
                    "close() took " + took.toMillis() + " ms with transferTimeout " + TRANSFER_TIMEOUT.toMillis() + " ms");
        } finally {
            release.countDown();
        }
    }

    /**
     * The README's "close() waits at most transferTimeout", for a layered restore whose layers each copy within the
     * timeout but together take longer: on main at 4c7eaf0 close() waited for every layer (16 x 300 ms here); now the
     * restore stops at the next layer once close() began, is undone, and its pinned() fails with
     * IllegalStateException (the cache is closing), not a TransferFailedException.
     */
    @Test
    void closeDuringALongLayeredRestoreWaitsAtMostTheTransferTimeout() throws Exception {
        AtomicLong copyDelay = new AtomicLong();
        KvTierCache cache = open(4, 8, FaultInjectingBackend.slowCopies(copyDelay));
        BlockLayout sixteenLayers = BlockLayout.layered(16, 16, PAGE / 32, BlockLayout.LayerOrder.LAYER_MAJOR);
        PrefixBlockCache blocks = cache.prefixBlocks(sixteenLayers);
        List<BlockHash> a = chain(9, 2);
        blocks.storeBlocks(BlockHash.ROOT, a, PrefixBlockCacheContract.contents(a, PAGE), Tier.CPU);
        copyDelay.set(300); // each layer well within the 1 s timeout, all 16 together ~4.8 s
        PrefixRestore restore = blocks.ensurePrefixResidentByLayer(a, Tier.GPU);
        restore.layer(0).get(10, TimeUnit.SECONDS);
        long start = System.nanoTime();
        assertTrue(closeWithin(cache, Duration.ofSeconds(20)), "close() returned");
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(took.compareTo(TRANSFER_TIMEOUT.plusMillis(1500)) < 0,
                "close() took " + took.toMillis() + " ms with transferTimeout " + TRANSFER_TIMEOUT.toMillis() + " ms");
        ExecutionException failed = assertThrows(ExecutionException.class,
                () -> restore.pinned().get(10, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, failed.getCause());
    }

    // ------------------------------------------------------------------ item 3: nested calls in a layer dependent

    @Test
    void aRestoreNestedInALayerDependentPinsBytesThatStayRightAfterPageReuse() throws Exception {
        AtomicLong copyDelay = new AtomicLong();
        KvTierCache cache = open(8, 8, FaultInjectingBackend.slowCopies(copyDelay));
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(7, 3);
        store(blocks, a, Tier.CPU);
        copyDelay.set(30);
        PrefixRestore restore = blocks.ensurePrefixResidentByLayer(a, Tier.GPU);
        CompletableFuture<PrefixPin> nested = restore.layer(0).thenApply(arrived -> blocks.ensurePrefixResident(a, Tier.GPU));
        CompletableFuture<SegmentPin> nestedSegmentPin = restore.layer(0)
                .thenApply(arrived -> cache.pin(PrefixBlockCache.keyOf(a.get(0)), Tier.GPU));
        restore.pinned().get(10, TimeUnit.SECONDS).close();
        copyDelay.set(0);
        try (PrefixPin pin = nested.get(10, TimeUnit.SECONDS);
             SegmentPin segmentPin = nestedSegmentPin.get(10, TimeUnit.SECONDS)) {
            // The pages the restore moved the blocks from are free again: new blocks take them.
            List<BlockHash> c = chain(8, 3);
            store(blocks, c, Tier.CPU);
            assertEquals(3, pin.size());
            for (int i = 0; i < 3; i++) {
                assertEquals(Tier.GPU, pin.blocks().get(i).tier());
                assertArrayEquals(expected(a.get(i)), pagesContent(pin.blocks().get(i)), "block " + i + " through the nested pin");
                assertArrayEquals(expected(c.get(i)), PrefixBlockCacheContract.read(blocks, c.get(i)));
            }
            byte[] viaSegmentPin = new byte[PAGE];
            int at = 0;
            for (MemorySegment page : segmentPin.segment().pages()) {
                byte[] part = page.toArray(ValueLayout.JAVA_BYTE);
                System.arraycopy(part, 0, viaSegmentPin, at, part.length);
                at += part.length;
            }
            assertArrayEquals(expected(a.get(0)), viaSegmentPin, "block 0 through the nested segment pin");
        }
        assertEquals(List.of(Tier.GPU, Tier.GPU, Tier.GPU), blocks.lookupPrefix(a).tiers());
    }

    @Test
    void removingTheTailInALayerDependentWorksAndKeepsEveryOtherByte() throws Exception {
        AtomicLong copyDelay = new AtomicLong();
        KvTierCache cache = open(8, 8, FaultInjectingBackend.slowCopies(copyDelay));
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(9, 3);
        store(blocks, a, Tier.CPU);
        copyDelay.set(30);
        PrefixRestore restore = blocks.ensurePrefixResidentByLayer(a, Tier.GPU);
        CompletableFuture<Boolean> removed = restore.layer(0).thenApply(arrived -> blocks.removeBlock(a.get(2)));
        try (PrefixPin pin = restore.pinned().get(10, TimeUnit.SECONDS)) {
            assertTrue(removed.get(10, TimeUnit.SECONDS), "the tail was removed, no internal exception");
            for (int i = 0; i < 3; i++) {
                assertArrayEquals(expected(a.get(i)), pagesContent(pin.blocks().get(i)), "the pin keeps block " + i);
            }
        }
        copyDelay.set(0);
        assertEquals(List.of(Tier.GPU, Tier.GPU), blocks.lookupPrefix(a).tiers());
        assertEquals(2L * PAGE, cache.stats().gpuUsed(), "the removed tail's pages were freed when the pin closed");
        for (int i = 0; i < 2; i++) {
            assertArrayEquals(expected(a.get(i)), PrefixBlockCacheContract.read(blocks, a.get(i)));
        }
    }

    // ------------------------------------------------------------------ item 8: failures translated and counted

    @Test
    void aLayeredCopyPastTheTimeoutIsATransferFailedExceptionCountedAsAFailure() {
        AtomicLong copyDelay = new AtomicLong();
        KvTierCache cache = open(4, 8, FaultInjectingBackend.slowCopies(copyDelay));
        PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
        List<BlockHash> a = chain(10, 2);
        store(blocks, a, Tier.CPU);
        long failuresBefore = cache.stats().failures();
        copyDelay.set(TRANSFER_TIMEOUT.toMillis() * 3);
        PrefixRestore restore = blocks.ensurePrefixResidentByLayer(a, Tier.GPU);
        CompletionException failed = assertThrows(CompletionException.class, () -> restore.pinned().join());
        TransferFailedException transfer = assertInstanceOf(TransferFailedException.class, failed.getCause());
        assertInstanceOf(TransferTimeoutException.class, transfer.getCause(), "the cause says what failed");
        assertEquals(failuresBefore + 1, cache.stats().failures());
        copyDelay.set(0);
        assertEquals(List.of(Tier.CPU, Tier.CPU), blocks.lookupPrefix(a).tiers());
        for (BlockHash hash : a) {
            assertArrayEquals(expected(hash), PrefixBlockCacheContract.read(blocks, hash));
        }
    }

    @Test
    void aFailedLayeredCudaCopyIsATransferFailedExceptionNamingTheCallCountedAsAFailure() {
        FakeCuda fake = FakeCuda.open();
        fake.reset();
        try {
            KvTierCache cache = open(KvTierConfig.builder().backend(Backend.CUDA).cudaLibrary(fake.library()), 4, 8,
                    UnaryOperator.identity());
            PrefixBlockCache blocks = cache.prefixBlocks(LAYERED);
            List<BlockHash> a = chain(11, 2);
            store(blocks, a, Tier.CPU);
            long failuresBefore = cache.stats().failures();
            fake.configure("fail=cudaMemcpyBatchAsync:1:cudaErrorLaunchFailure;fail=cudaMemcpyAsync:1:cudaErrorLaunchFailure");
            PrefixRestore restore = blocks.ensurePrefixResidentByLayer(a, Tier.GPU);
            CompletionException failed = assertThrows(CompletionException.class, () -> restore.pinned().join());
            TransferFailedException transfer = assertInstanceOf(TransferFailedException.class, failed.getCause());
            Throwable cause = transfer.getCause();
            while (cause != null && !(cause instanceof CudaException)) {
                cause = cause.getCause();
            }
            assertInstanceOf(CudaException.class, cause, "the CUDA call is the cause: " + transfer);
            assertTrue(transfer.getMessage().contains("cudaErrorLaunchFailure"), transfer.getMessage());
            assertEquals(failuresBefore + 1, cache.stats().failures());
            fake.reset();
            assertEquals(List.of(Tier.CPU, Tier.CPU), blocks.lookupPrefix(a).tiers());
            for (BlockHash hash : a) {
                assertArrayEquals(expected(hash), PrefixBlockCacheContract.read(blocks, hash));
            }
            cache.close();
        } finally {
            fake.reset();
        }
    }

    // ------------------------------------------------------------------ waiting and closing, bounded

    /** Closes {@code cache} on another thread; true if that returned within {@code bound}. */
    static boolean closeWithin(KvTierCache cache, Duration bound) {
        Thread closer = Thread.ofPlatform().daemon().name("test-close").start(cache::close);
        try {
            return closer.join(bound);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Waits for {@code future} to complete, either way (a pin it brings is closed). */
    static void completesWithin(CompletableFuture<PrefixPin> future, Duration bound) throws InterruptedException {
        try {
            future.get(bound.toMillis(), TimeUnit.MILLISECONDS).close();
        } catch (ExecutionException | CancellationException completedExceptionally) {
            // completed: that is all this asks
        } catch (TimeoutException e) {
            fail("pinned() did not complete within " + bound);
        }
    }

    static void awaitQuietly(CountDownLatch latch, long seconds) {
        try {
            latch.await(seconds, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
