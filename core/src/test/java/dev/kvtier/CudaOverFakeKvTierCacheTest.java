package dev.kvtier;

import dev.kvtier.cuda.CudaException;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.FakeCuda;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The contract on the CUDA backend over the host-emulated libcudart (runs in CI, no GPU), plus
 * faults only the fake can inject: a CUDA call failing, synchronously or asynchronously. DISK
 * extents per {@link #diskTransferMode()} (here the default, AUTO: registered, as the fake supports
 * it); {@link CudaOverFakeStagedKvTierCacheTest} runs it all again with staged DISK copies.
 */
class CudaOverFakeKvTierCacheTest extends KvTierCacheContract {
    FakeCuda fake;
    private TestDeviceMemory deviceMemory;

    @BeforeEach
    void loadFake() {
        fake = FakeCuda.open();
        fake.reset();
        deviceMemory = new TestDeviceMemory(CudaRuntime.probe(fake.library()).runtime().orElseThrow());
    }

    @Override
    protected KvTierConfig.Builder configureBackend(KvTierConfig.Builder builder) {
        return builder.backend(Backend.CUDA).cudaLibrary(fake.library()).diskTransferMode(diskTransferMode());
    }

    /** How DISK bytes reach the device in every test of this class. */
    protected DiskTransferMode diskTransferMode() {
        return DiskTransferMode.AUTO;
    }

    @Override
    protected void afterCachesClosed() {
        deviceMemory.close();
        fake.reset();
        fake.assertNothingLive();
    }

    @Override
    protected MemorySegment deviceMemoryHolding(Arena arena, byte[] content) {
        return deviceMemory.holding(arena, content);
    }

    @Override
    protected byte[] deviceMemoryContent(MemorySegment device) {
        return deviceMemory.content(device);
    }

    @Test
    void theCudaBackendIsTheOneInUse() {
        try (KvTierCache cache = open(config(8, 8))) {
            assertTrue(cache.backendDescription().startsWith("cuda ("), cache.backendDescription());
        }
    }

    /** Four victims demoted to make room cost one copy call, not four (each call costs 5-7 us on a real driver). */
    @Test
    void theVictimsOfOneRoundOfMakingRoomMoveInOneCopyCall() {
        try (KvTierCache cache = open(config(8, 64))) {
            for (int i = 0; i < 8; i++) {
                cache.put("small-" + i, PositionRange.of(i, i + 1), MemorySegment.ofArray(randomBytes(40 + i, PAGE)), Tier.GPU);
            }
            cache.put("big", PositionRange.of(100, 104), MemorySegment.ofArray(randomBytes(50, 4 * PAGE)), Tier.CPU);
            long before = copyCalls();
            assertEquals(Tier.GPU, cache.ensureResident("big", Tier.GPU).tier());
            long calls = copyCalls() - before;
            assertEquals(4L * PAGE, cache.stats().bytesMoved(Tier.GPU, Tier.CPU));
            assertEquals(2, calls, "four demotions and one promotion should take one batch and one copy");
            for (int i = 0; i < 8; i++) {
                assertArrayEquals(randomBytes(40 + i, PAGE), readAll(cache, "small-" + i), "small-" + i);
            }
            assertArrayEquals(randomBytes(50, 4 * PAGE), readAll(cache, "big"));
        }
    }

    private long copyCalls() {
        return fake.callCount("cudaMemcpyAsync") + fake.callCount("cudaMemcpyBatchAsync");
    }

    @Test
    void aFailingCudaMemcpyAsyncIsRolledBackAndNamed() {
        byte[] data = randomBytes(3, 3 * PAGE);
        try (KvTierCache cache = open(config(64, 64))) {
            cache.put("k", PositionRange.of(0, 3), MemorySegment.ofArray(data), Tier.GPU);
            fake.configure("fail=cudaMemcpyAsync:1:cudaErrorLaunchFailure");
            TransferFailedException e = assertThrows(TransferFailedException.class, () -> cache.demote("k", Tier.CPU));
            CudaException cause = assertInstanceOf(CudaException.class, e.getCause());
            assertTrue(cause.getMessage().contains("cudaMemcpyAsync"), cause.getMessage());
            assertTrue(cause.getMessage().contains("cudaErrorLaunchFailure"), cause.getMessage());
            assertEquals(Tier.GPU, tierOf(cache, "k"));
            assertEquals(0, cache.stats().allocated(Tier.CPU));
            assertArrayEquals(data, readAll(cache, "k"));
            cache.demote("k", Tier.CPU);
            assertArrayEquals(data, readAll(cache, "k"));
        }
    }

    @Test
    void anAsynchronousCopyFaultIsCaughtByTheEventAfterIt() {
        byte[] data = randomBytes(4, 2 * PAGE + 1);
        try (KvTierCache cache = open(config(64, 64))) {
            cache.put("k", PositionRange.of(0, 3), MemorySegment.ofArray(data), Tier.CPU);
            fake.configure("failasync=cudaMemcpyAsync:1:cudaErrorLaunchFailure");
            TransferFailedException e = assertThrows(TransferFailedException.class, () -> cache.promote("k", Tier.GPU));
            assertTrue(String.valueOf(e.getCause()).contains("cudaErrorLaunchFailure"), String.valueOf(e.getCause()));
            assertEquals(Tier.CPU, tierOf(cache, "k"));
            assertEquals(0, cache.stats().gpuUsed());
            cache.promote("k", Tier.GPU);
            assertArrayEquals(data, readAll(cache, "k"));
        }
    }

    /**
     * Issue 9, item 5: with the device's memory exactly the GPU budget, four threads churning puts,
     * promotions and removals never see {@code cudaMalloc} fail: the GPU tier never asks for more
     * than its budget, even while victims booked off it still hold their pages. On main at 212fa8f,
     * 71,579 of 97,411 such operations failed with cudaMalloc out of memory.
     */
    @Test
    void aDeviceExactlyAsLargeAsTheBudgetNeverRunsOutOfMemory() throws Exception {
        long gpuBudget = 16L * PAGE;
        fake.configure("memtotal=" + gpuBudget);
        java.util.concurrent.atomic.AtomicInteger outOfMemory = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger operations = new java.util.concurrent.atomic.AtomicInteger();
        try (KvTierCache cache = open(config(16, 32))) {
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(3);
            java.util.List<Thread> threads = new java.util.ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                threads.add(Thread.ofPlatform().start(() -> {
                    java.util.SplittableRandom random = new java.util.SplittableRandom(thread);
                    while (System.nanoTime() < deadline) {
                        String key = "t" + thread + "-" + random.nextInt(6);
                        try {
                            switch (random.nextInt(3)) {
                                case 0 -> {
                                    cache.remove(key);
                                    cache.put(key, PositionRange.of(0, 1),
                                            MemorySegment.ofArray(randomBytes(thread, (1 + random.nextInt(3)) * PAGE)), Tier.GPU);
                                }
                                case 1 -> cache.ensureResident(key, Tier.GPU);
                                default -> cache.remove(key);
                            }
                        } catch (RuntimeException e) { // not cached, no room: expected; out of device memory: not
                            if (String.valueOf(e.getMessage()).contains("cudaMalloc")
                                    || String.valueOf(e.getCause()).contains("cudaMalloc")) {
                                outOfMemory.incrementAndGet();
                            }
                        }
                        operations.incrementAndGet();
                    }
                }));
            }
            for (Thread thread : threads) {
                thread.join();
            }
            assertTrue(operations.get() > 100, "the churn ran: " + operations.get());
            assertEquals(0, outOfMemory.get(), "cudaMalloc failures among " + operations.get() + " operations");
            assertTrue(cache.stats().allocated(Tier.GPU) <= gpuBudget);
        }
    }

    /**
     * Issue 9, item 1: the host function that should announce a batch of demotions never runs (as
     * CUDA allows after a device error). On main at 212fa8f the put waited forever in the batch's
     * join, holding the locks of the segment and every victim, so get and close hung too. Now the
     * waiter polls the event recorded after the copies and does not depend on the callback.
     */
    @Test
    void aHostFunctionThatNeverRunsDoesNotHangMakingRoom() {
        assertTimeoutPreemptively(java.time.Duration.ofSeconds(60), () -> {
            try (KvTierCache cache = open(config(4, 64))) {
                for (int i = 0; i < 4; i++) {
                    cache.put("small-" + i, PositionRange.of(i, i + 1), MemorySegment.ofArray(randomBytes(60 + i, PAGE)), Tier.GPU);
                }
                fake.configure("failasync=cudaLaunchHostFunc:1:cudaErrorLaunchFailure");
                cache.put("big", PositionRange.of(10, 14), MemorySegment.ofArray(randomBytes(70, 4 * PAGE)), Tier.GPU);
                for (int i = 0; i < 4; i++) {
                    assertEquals(Tier.CPU, tierOf(cache, "small-" + i));
                    assertArrayEquals(randomBytes(60 + i, PAGE), readAll(cache, "small-" + i), "small-" + i);
                }
                assertArrayEquals(randomBytes(70, 4 * PAGE), readAll(cache, "big"));
            }
        });
    }

    /**
     * Issue 9, item 1: a copy that does not complete within the transfer timeout (here the fake delays
     * it far beyond) fails naming the timeout; the segment stays readable where it was, its lock is
     * released, and close() returns within a bound instead of waiting for the device. On main at
     * 212fa8f there was no timeout: the call waited as long as the device did.
     */
    @Test
    void aCopyBeyondTheTransferTimeoutFailsAndCloseStillReturns() {
        byte[] data = randomBytes(80, 2 * PAGE);
        assertTimeoutPreemptively(java.time.Duration.ofSeconds(60), () -> {
            KvTierCache cache = open(config(64, 64).transferTimeout(java.time.Duration.ofMillis(300)));
            cache.put("k", PositionRange.of(0, 2), MemorySegment.ofArray(data), Tier.CPU);
            fake.configure("copydelayus=3000000");
            long start = System.nanoTime();
            TransferFailedException e = assertThrows(TransferFailedException.class, () -> cache.promote("k", Tier.GPU));
            assertTrue(e.getMessage().contains("did not complete within 300 ms"), e.getMessage());
            assertTrue(System.nanoTime() - start < java.util.concurrent.TimeUnit.SECONDS.toNanos(2),
                    "the call gave up at the timeout, not when the device finished");
            assertEquals(Tier.CPU, tierOf(cache, "k"), "the segment stays where it was");
            assertArrayEquals(data, readAll(cache, "k"), "and readable (a CPU read is a host copy)");
            long closing = System.nanoTime();
            cache.close();
            assertTrue(System.nanoTime() - closing < java.util.concurrent.TimeUnit.SECONDS.toNanos(2),
                    "close() is bounded by the transfer timeout");
            assertTrue(fake.liveCount("device") > 0, "the device memory the late copy writes is not freed under it");
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
            // The reaper frees the late copy's device memory, its pinned staging and its stream one after the
            // other: wait for all of them, or the after-test check can run between two of those frees.
            String[] kinds = {"device", "pinned", "streams", "events"};
            while (anyLive(kinds) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            for (String kind : kinds) {
                assertEquals(0, fake.liveCount(kind), "once the copy drained, its " + kind + " were freed");
            }
        });
    }

    private boolean anyLive(String... kinds) {
        for (String kind : kinds) {
            if (fake.liveCount(kind) > 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * Fragmented segments (several runs each) move with one cudaMemcpyBatchAsync on either ABI
     * (12.8's with failIdx, 13's without) and one cudaMemcpyAsync per run on a runtime without it.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "runtime {0}")
    @org.junit.jupiter.params.provider.ValueSource(ints = {12000, 12080, 13000})
    void multiRunSegmentsMoveExactlyOnEveryBatchAbi(int version) {
        fake.configure("version=" + version);
        try (KvTierCache cache = open(config(16, 64))) {   // GPU arenas of 4 pages: 6 pages take 2+ runs
            String path = version == 12000 ? "one call per run" : version == 12080 ? "BATCH_CUDA_12_8" : "BATCH_CUDA_13";
            assertTrue(cache.backendDescription().contains(path), cache.backendDescription());
            for (int i = 0; i < 6; i++) {
                cache.put("small-" + i, PositionRange.of(i, i + 1), MemorySegment.ofArray(randomBytes(i, PAGE)), Tier.GPU);
            }
            for (int i = 0; i < 6; i += 2) {
                cache.remove("small-" + i);
            }
            byte[] data = randomBytes(77, 5 * PAGE + 9);
            cache.put("fragmented", PositionRange.of(40, 50), MemorySegment.ofArray(data), Tier.GPU);
            assertTrue(cache.ensureResident("fragmented", Tier.GPU).pages().size() > 1, "the segment spans several runs");
            long batchesBefore = fake.callCount("cudaMemcpyBatchAsync");
            cache.demote("fragmented", Tier.CPU);
            cache.promote("fragmented", Tier.GPU);
            long batches = fake.callCount("cudaMemcpyBatchAsync") - batchesBefore;
            assertEquals(version == 12000 ? 0 : 2, batches, "batch calls for two multi-run transfers");
            assertArrayEquals(data, readAll(cache, "fragmented"));
            for (int i = 1; i < 6; i += 2) {
                assertArrayEquals(randomBytes(i, PAGE), readAll(cache, "small-" + i));
            }
        }
    }

    @Test
    void diskExtentsAreRegisteredOneByOneAndStagedWhereTheDeviceCannotRegister() {
        byte[] data = randomBytes(5, 20 * PAGE + 3);
        try (KvTierCache cache = open(config(64, 64).diskTransferMode(DiskTransferMode.AUTO))) {
            assertTrue(cache.backendDescription().contains("DISK: cudaHostRegister'ed"), cache.backendDescription());
            assertTrue(cache.backendDescription().contains("AUTO: device supports cudaHostRegister"),
                    cache.backendDescription());
            cache.put("k", PositionRange.of(0, 1), MemorySegment.ofArray(data), Tier.GPU);
            cache.demote("k", Tier.DISK);
            assertEquals(2, fake.liveCount("registered"), "20 pages over 16-page extents: two extents, two registrations");
            cache.promote("k", Tier.GPU);
            assertArrayEquals(data, readAll(cache, "k"));
        }
        assertEquals(0, fake.liveCount("registered"), "unregistered before unmapping");
        fake.configure("attr=cudaDevAttrHostRegisterSupported:0");
        try (KvTierCache cache = open(config(64, 64).diskTransferMode(DiskTransferMode.AUTO))) {
            assertTrue(cache.backendDescription().contains("DISK: staged through"), cache.backendDescription());
            assertTrue(cache.backendDescription().contains("AUTO: device lacks cudaHostRegister"),
                    cache.backendDescription());
            long pinnedBefore = fake.liveCount("pinned");
            cache.put("k", PositionRange.of(0, 1), MemorySegment.ofArray(data), Tier.GPU); // heap bytes: staged too
            cache.demote("k", Tier.DISK);
            assertEquals(0, fake.liveCount("registered"));
            assertEquals(pinnedBefore + 2, fake.liveCount("pinned"), "one pair of bounce buffers, allocated on first use");
            cache.ensureResident("k", Tier.GPU);
            assertArrayEquals(data, readAll(cache, "k"));
        }
    }

    @Test
    void aDeviceOutOfMemoryFailsThePutClearly() {
        try (KvTierCache cache = open(config(64, 64))) {
            fake.configure("fail=cudaMalloc:1:cudaErrorMemoryAllocation");
            TransferFailedException e = assertThrows(TransferFailedException.class, () ->
                    cache.put("k", PositionRange.of(0, 1), MemorySegment.ofArray(new byte[PAGE]), Tier.GPU));
            assertTrue(e.getMessage().contains("cudaMalloc"), e.getMessage());
            assertTrue(cache.get("k").isEmpty());
            cache.put("k", PositionRange.of(0, 1), MemorySegment.ofArray(new byte[PAGE]), Tier.GPU);
        }
    }
}
