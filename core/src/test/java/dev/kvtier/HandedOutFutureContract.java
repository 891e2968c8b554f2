package dev.kvtier;

import org.junit.jupiter.api.Tag;
import dev.kvtier.testing.FaultLogRouting;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockHasher;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.prefix.PrefixRestore;
import dev.kvtier.prefix.ResidentBlock;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The promise behind every future kvtier hands out (DESIGN principle 12), run against each of them
 * ({@link Handed}: {@code KvTierCache.ensureResidentAsync}, a {@link PrefixRestore}'s first and last layer and its
 * {@code pinned()}) on every backend (subclasses only configure, as for {@link PrefixBlockCacheContract}): cancelled
 * before, during and after the operation, timed out ({@code orTimeout}), and with dependents that re-enter the same
 * keys, pin them, remove them, or close the cache, and a {@code close()} from another thread while a dependent runs.
 * After each, the invariants: no pin left open (every block and segment can be demoted), bytes exact (also through
 * pins taken in dependents, after the pages they moved from were reused), no page leaked (nothing used once all is
 * removed), {@code close()} within {@code transferTimeout}, and no kvtier thread left once it returned. Copies are
 * slowed (by {@link FaultInjectingBackend}) wherever a future must still be pending when the test acts on it.
 * The cluster module hands out no future (its callbacks are listeners), so nothing of it is here.
 */
@Tag(FaultLogRouting.TAG) // faults injected on purpose: the library's warnings go to target/test-logs
abstract class HandedOutFutureContract {
    static final int PAGE = 4096;
    /** Two layers of a one-page block, each a K and a V region of 1 KiB. */
    static final BlockLayout LAYERED = BlockLayout.layered(16, 2, PAGE / 4, BlockLayout.LayerOrder.LAYER_MAJOR);
    static final Duration TRANSFER_TIMEOUT = Duration.ofSeconds(2);
    /** What every copy waits while a future must stay pending (far below {@link #TRANSFER_TIMEOUT}). */
    static final long SLOW_COPY_MILLIS = 200;
    /** How long the checks wait for what happens asynchronously (a pin released after a cancel, a dependent). */
    static final Duration SETTLE = Duration.ofSeconds(10);
    /** Scheduling slack over {@link #TRANSFER_TIMEOUT} a close may take on a loaded machine. */
    static final Duration CLOSE_SLACK = Duration.ofMillis(2500);
    static final String SEGMENT = "chat-1/turn-1";
    static final int BLOCKS = 3;

    /** The futures kvtier hands out, each as the test gets it. */
    enum Handed {
        /** {@code KvTierCache.ensureResidentAsync} of a segment on CPU to GPU. */
        ENSURE_RESIDENT_ASYNC,
        /** {@code ensurePrefixResidentByLayer(...).layer(0)} of a chain on CPU to GPU. */
        FIRST_LAYER,
        /** The last layer of the same. */
        LAST_LAYER,
        /** {@code ensurePrefixResidentByLayer(...).pinned()}. */
        PINNED;

        boolean isPrefix() {
            return this != ENSURE_RESIDENT_ASYNC;
        }
    }

    @TempDir
    Path diskDirectory;

    private final AtomicLong copyDelay = new AtomicLong();
    private Set<Thread> threadsBefore;
    private KvTierCache cache;
    private PrefixBlockCache blocks;
    private List<BlockHash> chain;
    /** What the test expects cached: the segment, and how many leading blocks of the chain. */
    private boolean segmentCached = true;
    private int blocksCached = BLOCKS;

    protected abstract KvTierConfig.Builder configureBackend(KvTierConfig.Builder builder);

    /** The bytes of memory a resident page points to (device memory copied back on CUDA). */
    protected abstract byte[] pageContent(MemorySegment page);

    /** Runs after every test's cache is closed: backends check for leaks here. */
    protected void afterCachesClosed() {
    }

    @BeforeEach
    void openWithASegmentAndAChainOnCpu() {
        threadsBefore = kvtierThreads();
        KvTierConfig config = configureBackend(KvTierConfig.builder())
                .gpuBudgetBytes(8L * PAGE).cpuBudgetBytes(8L * PAGE).pageSizeBytes(PAGE)
                .diskExtentBytes(16L * PAGE).diskDirectory(diskDirectory).transferTimeout(TRANSFER_TIMEOUT).build();
        cache = KvTierCache.open(config, FaultInjectingBackend.slowCopies(copyDelay));
        blocks = cache.prefixBlocks(LAYERED);
        int[] tokens = new int[BLOCKS * LAYERED.tokensPerBlock()];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = 7 * i + 1;
        }
        chain = new BlockHasher().chain(BlockHasher.namespaceRoot("m"), tokens, LAYERED.tokensPerBlock());
        blocks.storeBlocks(BlockHash.ROOT, chain, PrefixBlockCacheContract.contents(chain, PAGE), Tier.CPU);
        cache.put(SEGMENT, PositionRange.of(0, 16), MemorySegment.ofArray(segmentBytes()), Tier.CPU);
    }

    @AfterEach
    void closeCache() {
        if (cache == null) {
            return; // not opened: the backend is not usable here (the test was skipped)
        }
        PrefixRestoreRegressionTest.closeWithin(cache, Duration.ofSeconds(20)); // one that hangs is left, not waited for
        afterCachesClosed();
    }

    // ------------------------------------------------------------------ cancel and timeout

    @ParameterizedTest
    @EnumSource(Handed.class)
    void cancelledBeforeTheOperationRuns(Handed handed) throws Exception {
        copyDelay.set(SLOW_COPY_MILLIS);
        Call call = start(handed);
        assertTrue(call.future.cancel(true));
        call.awaitOperation();
        assertInvariants();
    }

    @ParameterizedTest
    @EnumSource(Handed.class)
    void cancelledWhileTheOperationRuns(Handed handed) throws Exception {
        copyDelay.set(SLOW_COPY_MILLIS);
        Call call = start(handed);
        Thread.sleep(SLOW_COPY_MILLIS / 2); // its first copy is under way
        call.future.cancel(true);
        call.awaitOperation();
        assertInvariants();
    }

    @ParameterizedTest
    @EnumSource(Handed.class)
    void cancelledAfterTheOperationCompleted(Handed handed) throws Exception {
        Call call = start(handed);
        call.future.get(SETTLE.toMillis(), TimeUnit.MILLISECONDS);
        assertFalse(call.future.cancel(true), "a completed future stays completed");
        call.awaitOperation();
        call.closeResult();
        assertInvariants();
    }

    @ParameterizedTest
    @EnumSource(Handed.class)
    void timedOut(Handed handed) throws Exception {
        copyDelay.set(SLOW_COPY_MILLIS);
        Call call = start(handed);
        CompletableFuture<?> timed = call.future.orTimeout(10, TimeUnit.MILLISECONDS);
        ExecutionException failed = assertThrows(ExecutionException.class,
                () -> timed.get(SETTLE.toMillis(), TimeUnit.MILLISECONDS));
        assertInstanceOf(TimeoutException.class, failed.getCause());
        call.awaitOperation();
        assertInvariants();
    }

    // ------------------------------------------------------------------ dependents

    @ParameterizedTest
    @EnumSource(Handed.class)
    void aDependentReenteringTheSameKeysGetsExactBytes(Handed handed) throws Exception {
        copyDelay.set(SLOW_COPY_MILLIS); // the dependent is attached before completion: it runs where kvtier completes
        Call call = start(handed);
        CompletableFuture<Boolean> reentered = call.future.thenApply(result -> {
            if (handed.isPrefix()) {
                try (PrefixPin pin = blocks.ensurePrefixResident(chain, Tier.GPU)) {
                    assertBlocksExact(pin);
                }
                for (BlockHash hash : chain) {
                    assertArrayEquals(blockBytes(hash), PrefixBlockCacheContract.read(blocks, hash));
                }
            } else {
                assertArrayEquals(segmentBytes(), pagesContent(cache.ensureResident(SEGMENT, Tier.GPU).pages()));
                byte[] read = new byte[PAGE];
                cache.read(SEGMENT, MemorySegment.ofArray(read));
                assertArrayEquals(segmentBytes(), read);
            }
            return true;
        });
        assertTrue(reentered.get(SETTLE.toMillis(), TimeUnit.MILLISECONDS));
        call.awaitOperation();
        call.closeResult();
        copyDelay.set(0);
        assertInvariants();
    }

    @ParameterizedTest
    @EnumSource(Handed.class)
    void aDependentPinningTheSameKeysHoldsExactBytesAfterPageReuse(Handed handed) throws Exception {
        copyDelay.set(SLOW_COPY_MILLIS);
        Call call = start(handed);
        CompletableFuture<AutoCloseable> pinned = call.future.thenApply(result -> handed.isPrefix()
                ? blocks.ensurePrefixResident(chain, Tier.GPU)
                : cache.pin(SEGMENT, Tier.GPU));
        AutoCloseable pin = pinned.get(SETTLE.toMillis(), TimeUnit.MILLISECONDS);
        call.awaitOperation();
        call.closeResult();
        copyDelay.set(0);
        // The CPU pages the operation moved from are free again: new data takes them.
        String other = "chat-2/turn-1";
        byte[] otherBytes = PrefixBlockCacheContract.content(BlockHash.ROOT, PAGE);
        for (int i = 0; i < BLOCKS + 1; i++) {
            cache.put(other + "/" + i, PositionRange.of(0, 16), MemorySegment.ofArray(otherBytes), Tier.CPU);
        }
        if (pin instanceof PrefixPin prefixPin) {
            assertEquals(Tier.GPU, prefixPin.blocks().get(0).tier());
            assertBlocksExact(prefixPin);
        } else {
            SegmentPin segmentPin = (SegmentPin) pin;
            assertEquals(Tier.GPU, segmentPin.segment().tier());
            assertArrayEquals(segmentBytes(), pagesContent(segmentPin.segment().pages()));
        }
        pin.close();
        for (int i = 0; i < BLOCKS + 1; i++) {
            cache.remove(other + "/" + i);
        }
        assertInvariants();
    }

    @ParameterizedTest
    @EnumSource(Handed.class)
    void aDependentRemovingTheKeysRemovesThemWhole(Handed handed) throws Exception {
        copyDelay.set(SLOW_COPY_MILLIS);
        Call call = start(handed);
        CompletableFuture<Boolean> removed = call.future.thenApply(result -> handed.isPrefix()
                ? blocks.removeBlock(chain.get(BLOCKS - 1))
                : cache.remove(SEGMENT).isPresent());
        assertTrue(removed.get(SETTLE.toMillis(), TimeUnit.MILLISECONDS));
        if (handed.isPrefix()) {
            blocksCached = BLOCKS - 1;
        } else {
            segmentCached = false;
        }
        call.awaitOperation();
        call.closeResult();
        copyDelay.set(0);
        assertInvariants();
    }

    @ParameterizedTest
    @EnumSource(Handed.class)
    void aDependentClosingTheCacheDoesNotDeadlock(Handed handed) throws Exception {
        copyDelay.set(SLOW_COPY_MILLIS);
        Call call = start(handed);
        CompletableFuture<Boolean> closed = call.future.handle((result, failure) -> {
            cache.close();
            if (result instanceof AutoCloseable pin) {
                closeQuietly(pin); // does nothing after close
            }
            return true;
        });
        assertTrue(closed.get(SETTLE.toMillis(), TimeUnit.MILLISECONDS));
        call.awaitOperation();
        assertThrows(IllegalStateException.class, () -> cache.stats(), "closed");
        assertNoKvTierThreadLeft();
    }

    @ParameterizedTest
    @EnumSource(Handed.class)
    void whileADependentRunsCallsOnTheSameKeysAndCloseFromAnotherThreadDoNotWaitForIt(Handed handed) throws Exception {
        copyDelay.set(SLOW_COPY_MILLIS);
        Call call = start(handed);
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<?> dependent = call.future.thenApply(result -> {
            running.countDown();
            PrefixRestoreRegressionTest.awaitQuietly(release, 60); // a runtime running attention right here, for long
            return result;
        });
        try {
            assertTrue(running.await(SETTLE.toMillis(), TimeUnit.MILLISECONDS));
            copyDelay.set(0);
            CompletableFuture<Boolean> other = CompletableFuture.supplyAsync(() -> {
                if (handed.isPrefix()) {
                    try (PrefixPin pin = blocks.ensurePrefixResident(chain, Tier.GPU)) {
                        assertBlocksExact(pin);
                    }
                } else {
                    try (SegmentPin pin = cache.pin(SEGMENT, Tier.GPU)) {
                        assertArrayEquals(segmentBytes(), pagesContent(pin.segment().pages()));
                    }
                }
                return true;
            });
            assertTrue(other.get(SETTLE.toMillis(), TimeUnit.MILLISECONDS), "a call on the same keys did not wait for the dependent");
            assertClosesWithinTransferTimeout();
        } finally {
            release.countDown();
        }
        Object result = dependent.get(SETTLE.toMillis(), TimeUnit.MILLISECONDS);
        if (result instanceof AutoCloseable pin) {
            pin.close(); // does nothing after close
        }
        call.closeResult();
        assertNoKvTierThreadLeft();
    }

    // ------------------------------------------------------------------ the calls and the invariants

    /** One call under test, started: the future as handed out, and how to wait for the work behind it. */
    private final class Call {
        final Handed handed;
        final CompletableFuture<?> future;
        final PrefixRestore restore;

        Call(Handed handed, CompletableFuture<?> future, PrefixRestore restore) {
            this.handed = handed;
            this.future = future;
            this.restore = restore;
        }

        /**
         * Waits until the operation behind the future has ended, whatever happened to the future: a restore's other
         * futures (taking the pin {@code pinned()} brings and closing it), a segment's residency joined by a second call.
         */
        void awaitOperation() throws Exception {
            if (!handed.isPrefix()) {
                try {
                    cache.ensureResidentAsync(SEGMENT, Tier.GPU).get(SETTLE.toMillis(), TimeUnit.MILLISECONDS);
                } catch (ExecutionException removed) {
                    assertInstanceOf(SegmentNotFoundException.class, removed.getCause());
                } catch (IllegalStateException closed) {
                    // the cache was closed: nothing runs any more
                }
                return;
            }
            CompletableFuture<?> last = handed == Handed.PINNED ? restore.layer(restore.layers() - 1) : restore.pinned();
            try {
                Object result = last.get(SETTLE.toMillis(), TimeUnit.MILLISECONDS);
                if (result instanceof AutoCloseable pin) {
                    pin.close();
                }
            } catch (ExecutionException | CancellationException completedOtherwise) {
                // ended all the same
            }
        }

        /** Closes the pin the future brought, if it completed with one. */
        void closeResult() throws Exception {
            if (future.isDone() && !future.isCompletedExceptionally() && future.getNow(null) instanceof AutoCloseable pin) {
                pin.close();
            }
        }
    }

    private Call start(Handed handed) {
        return switch (handed) {
            case ENSURE_RESIDENT_ASYNC -> new Call(handed, cache.ensureResidentAsync(SEGMENT, Tier.GPU), null);
            case FIRST_LAYER, LAST_LAYER, PINNED -> {
                PrefixRestore restore = blocks.ensurePrefixResidentByLayer(chain, Tier.GPU);
                CompletableFuture<?> future = switch (handed) {
                    case FIRST_LAYER -> restore.layer(0);
                    case LAST_LAYER -> restore.layer(restore.layers() - 1);
                    default -> restore.pinned();
                };
                yield new Call(handed, future, restore);
            }
        };
    }

    /**
     * No pin left (every block cached and the segment can be demoted to DISK, within {@link #SETTLE}: a pin of a
     * cancelled call is released asynchronously), every byte as stored, nothing used once all is removed, close
     * within the transfer timeout, no kvtier thread left.
     */
    private void assertInvariants() {
        List<BlockHash> cached = chain.subList(0, blocksCached);
        assertEquals(cached.size(), blocks.lookupPrefix(chain).cachedBlocks(), "the chain's cached blocks");
        assertEquals(segmentCached, cache.get(SEGMENT).isPresent(), "whether the segment is cached");
        for (int i = cached.size() - 1; i >= 0; i--) {
            demoteWhenUnpinned(PrefixBlockCache.keyOf(cached.get(i)));
        }
        if (segmentCached) {
            demoteWhenUnpinned(SEGMENT);
            byte[] read = new byte[PAGE];
            cache.read(SEGMENT, MemorySegment.ofArray(read));
            assertArrayEquals(segmentBytes(), read, "the segment's bytes");
            assertTrue(cache.remove(SEGMENT).isPresent());
        }
        for (int i = cached.size() - 1; i >= 0; i--) {
            assertArrayEquals(blockBytes(cached.get(i)), PrefixBlockCacheContract.read(blocks, cached.get(i)), "block " + i);
            assertTrue(blocks.removeBlock(cached.get(i)));
        }
        CacheStats stats = cache.stats();
        for (Tier tier : Tier.values()) {
            assertEquals(0, stats.used(tier), "nothing left on " + tier + ": " + stats);
        }
        assertClosesWithinTransferTimeout();
        assertNoKvTierThreadLeft();
    }

    private void demoteWhenUnpinned(String key) {
        long deadline = System.nanoTime() + SETTLE.toNanos();
        while (true) {
            try {
                cache.demote(key, Tier.DISK);
                return;
            } catch (SegmentPinnedException pinned) {
                if (System.nanoTime() > deadline) {
                    fail("a pin of \"" + key + "\" was never released", pinned);
                }
                Thread.onSpinWait();
            } catch (IllegalArgumentException alreadyOnDisk) {
                if (cache.get(key).orElseThrow().tier() != Tier.DISK) {
                    throw alreadyOnDisk;
                }
                return;
            }
        }
    }

    private void assertClosesWithinTransferTimeout() {
        long start = System.nanoTime();
        assertTrue(PrefixRestoreRegressionTest.closeWithin(cache, TRANSFER_TIMEOUT.plus(SETTLE)), "close() returned");
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(took.compareTo(TRANSFER_TIMEOUT.plus(CLOSE_SLACK)) < 0,
                "close() took " + took.toMillis() + " ms; transferTimeout is " + TRANSFER_TIMEOUT.toMillis() + " ms");
    }

    /** Every kvtier thread started since the test began ends (within {@link #SETTLE}) once the cache is closed. */
    private void assertNoKvTierThreadLeft() {
        long deadline = System.nanoTime() + SETTLE.toNanos();
        Set<Thread> left;
        do {
            left = kvtierThreads();
            left.removeAll(threadsBefore);
            if (left.isEmpty()) {
                return;
            }
            Thread.onSpinWait();
        } while (System.nanoTime() < deadline);
        fail("kvtier threads left after close: " + left.stream().map(Thread::getName).sorted().toList());
    }

    /**
     * The live kvtier threads a cache owns: all but the CUDA host-callback completers, one pool for the whole process
     * shared by every runtime, whose idle threads end on their own a minute later.
     */
    private static Set<Thread> kvtierThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.isAlive() && thread.getName().startsWith("kvtier-")
                        && !thread.getName().startsWith("kvtier-cuda-callback-"))
                .collect(Collectors.toSet());
    }

    private void assertBlocksExact(PrefixPin pin) {
        assertEquals(chain.size(), pin.size());
        for (int i = 0; i < pin.size(); i++) {
            ResidentBlock block = pin.blocks().get(i);
            assertArrayEquals(blockBytes(chain.get(i)), pagesContent(block.pages()), "block " + i + " through a pin");
        }
    }

    private byte[] pagesContent(List<MemorySegment> pages) {
        byte[] out = new byte[PAGE];
        int at = 0;
        for (MemorySegment page : pages) {
            byte[] part = pageContent(page);
            int n = Math.min(part.length, PAGE - at);
            System.arraycopy(part, 0, out, at, n);
            at += n;
        }
        return out;
    }

    private static byte[] blockBytes(BlockHash hash) {
        return PrefixBlockCacheContract.content(hash, PAGE);
    }

    private static byte[] segmentBytes() {
        return KvTierCacheContract.randomBytes(SEGMENT.hashCode(), PAGE);
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
