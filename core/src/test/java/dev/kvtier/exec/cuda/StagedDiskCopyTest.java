package dev.kvtier.exec.cuda;

import dev.kvtier.cuda.CudaException;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.FakeCuda;
import dev.kvtier.KvTierConfig;
import dev.kvtier.exec.PageAllocation;
import dev.kvtier.exec.TransferExecutor;
import dev.kvtier.exec.StorageKind;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The staged DISK path of the CUDA backend over the fake, with bounce buffers small enough (one
 * pair of 10000 bytes, not a page multiple) that every copy takes several chunks, regions end in
 * the middle of a buffer and copies wait for the one pair. Blocking and asynchronous copies, both
 * directions; leaks are checked in the fake after every test.
 */
class StagedDiskCopyTest {
    private static final int PAGE = 4096;
    private static final int BOUNCE = 10_000;
    private static final long EXTENT = 16L * PAGE;

    @TempDir
    Path directory;
    private FakeCuda fake;
    private TransferExecutor executor;

    @BeforeEach
    void open() {
        fake = FakeCuda.open();
        fake.reset();
        CudaRuntime cuda = CudaRuntime.probe(fake.library()).runtime().orElseThrow();
        CudaExecutionBackend backend = new CudaExecutionBackend(cuda, directory, 2, true, ExtentRegistration.NEVER,
                BOUNCE, 1, KvTierConfig.DEFAULT_TRANSFER_TIMEOUT, "test");
        executor = new TransferExecutor(backend, PAGE, Map.of(StorageKind.DEVICE, 4L << 20, StorageKind.PINNED_HOST, 1L << 20, StorageKind.MAPPED_FILE, EXTENT),
                1L << 20, KvTierConfig.DEFAULT_TRANSFER_TIMEOUT);
    }

    @AfterEach
    void close() {
        executor.close();
        fake.reset();
        fake.assertNothingLive();
    }

    /** Sizes around the buffer, above the whole pool, and across several extents (several regions). */
    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {0, 1, BOUNCE - 1, BOUNCE, BOUNCE + 1, 2 * BOUNCE + 1, 3 * 16 * PAGE + 7})
    void gpuToDiskToGpuIsByteExactBlockingAndAsync(int size) {
        byte[] data = random(size, size);
        PageAllocation gpu = onGpu(data);
        PageAllocation disk = allocate(StorageKind.MAPPED_FILE, size);
        executor.transfer(gpu, disk).join();
        assertArrayEquals(data, read(disk), "the bytes on disk");
        PageAllocation back = allocate(StorageKind.DEVICE, size);
        executor.transferAndWait(disk, back);
        assertArrayEquals(data, read(back));

        PageAllocation disk2 = allocate(StorageKind.MAPPED_FILE, size);
        executor.transferAndWait(back, disk2);
        PageAllocation again = allocate(StorageKind.DEVICE, size);
        executor.transfer(disk2, again).join();
        assertArrayEquals(data, read(again));
        for (PageAllocation allocation : List.of(gpu, disk, back, disk2, again)) {
            executor.release(allocation);
        }
    }

    @Test
    void theFailingChunkCopyFailsTheFutureWithTheCudaErrorAndLeavesTheSourceWhole() {
        int size = 3 * BOUNCE + 11;
        byte[] data = random(7, size);
        PageAllocation gpu = onGpu(data);
        PageAllocation disk = allocate(StorageKind.MAPPED_FILE, size);
        fake.configure("fail=cudaMemcpyAsync:2:cudaErrorLaunchFailure");
        CompletionException down = assertThrows(CompletionException.class, () -> executor.transfer(gpu, disk).join());
        CudaException cause = assertInstanceOf(CudaException.class, down.getCause());
        assertTrue(cause.getMessage().contains("cudaMemcpyAsync") && cause.getMessage().contains("cudaErrorLaunchFailure"),
                cause.getMessage());
        assertArrayEquals(data, read(gpu), "the source is untouched");
        executor.transfer(gpu, disk).join();
        assertArrayEquals(data, read(disk));

        PageAllocation target = allocate(StorageKind.DEVICE, size);
        fake.configure("failasync=cudaMemcpyAsync:3:cudaErrorLaunchFailure");
        CompletionException up = assertThrows(CompletionException.class, () -> executor.transferAndWait(disk, target));
        assertTrue(String.valueOf(up.getCause()).contains("cudaErrorLaunchFailure"), String.valueOf(up.getCause()));
        assertArrayEquals(data, read(disk), "the disk copy is untouched");
        executor.transferAndWait(disk, target);
        assertArrayEquals(data, read(target));
        assertEquals(0, executor.bytesInFlight());
    }

    @Test
    void aFailingBounceAllocationFailsTheCopyAndTheNextOneAllocatesAgain() {
        byte[] data = random(9, 2 * BOUNCE);
        PageAllocation gpu = onGpu(data);
        PageAllocation disk = allocate(StorageKind.MAPPED_FILE, data.length);
        fake.configure("fail=cudaHostAlloc:2:cudaErrorMemoryAllocation");
        CompletionException e = assertThrows(CompletionException.class, () -> executor.transferAndWait(gpu, disk));
        assertTrue(String.valueOf(e.getCause()).contains("cudaHostAlloc"), String.valueOf(e.getCause()));
        assertEquals(0, fake.liveCount("pinned"), "the first buffer of the pair was freed again");
        executor.transferAndWait(gpu, disk);
        assertArrayEquals(data, read(disk));
        assertEquals(2, fake.liveCount("pinned"));
    }

    /** More copies than pairs at once: they take turns with the one pair; every byte checked. */
    @Test
    void concurrentStagedCopiesShareTheOnePairAndStayExact() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> results = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                results.add(threads.submit(() -> {
                    SplittableRandom random = new SplittableRandom(thread);
                    for (int i = 0; i < 15; i++) {
                        int size = 1 + random.nextInt(5 * BOUNCE);
                        byte[] data = random(thread * 1000L + i, size);
                        PageAllocation gpu = onGpu(data);
                        PageAllocation disk = allocate(StorageKind.MAPPED_FILE, size);
                        PageAllocation back = allocate(StorageKind.DEVICE, size);
                        if (random.nextBoolean()) {
                            executor.transfer(gpu, disk).join();
                            executor.transferAndWait(disk, back);
                        } else {
                            executor.transferAndWait(gpu, disk);
                            executor.transfer(disk, back).join();
                        }
                        assertArrayEquals(data, read(back));
                        executor.release(gpu);
                        executor.release(disk);
                        executor.release(back);
                    }
                    return null;
                }));
            }
            for (Future<?> result : results) {
                result.get();
            }
        } finally {
            threads.shutdown();
        }
        assertEquals(2, fake.liveCount("pinned"), "one pair, however many copies");
        assertEquals(0, executor.bytesInUse(StorageKind.MAPPED_FILE));
    }

    private PageAllocation allocate(StorageKind tier, long size) {
        try {
            return executor.allocate(tier, size);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** From native memory: heap bytes would go through the bounce buffers these tests count. */
    private PageAllocation onGpu(byte[] data) {
        PageAllocation gpu = allocate(StorageKind.DEVICE, data.length);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment source = arena.allocate(Math.max(1, data.length)).asSlice(0, data.length);
            MemorySegment.copy(data, 0, source, ValueLayout.JAVA_BYTE, 0, data.length);
            executor.copyIn(source, gpu);
        }
        return gpu;
    }

    private byte[] read(PageAllocation allocation) {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment out = arena.allocate(Math.max(1, allocation.sizeBytes())).asSlice(0, allocation.sizeBytes());
            executor.copyOut(allocation, out);
            return out.toArray(ValueLayout.JAVA_BYTE);
        }
    }

    private static byte[] random(long seed, int size) {
        byte[] bytes = new byte[size];
        new SplittableRandom(seed).nextBytes(bytes);
        return bytes;
    }
}
