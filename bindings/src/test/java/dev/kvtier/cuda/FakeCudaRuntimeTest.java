package dev.kvtier.cuda;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The contract against the host-emulated libcudart, plus what only the fake can show deterministically: held streams
 * (not-ready states), cross-stream ordering, callbacks, both batch ABIs and injected faults. After every test the fake
 * must hold no allocation, registration, stream or event.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FakeCudaRuntimeTest extends CudaRuntimeContract {

    private FakeCuda fake;
    private CudaRuntime cuda;

    @BeforeEach
    void openFake() {
        fake = FakeCuda.open();
        fake.reset();
        cuda = fake.runtime();
    }

    @AfterEach
    void nothingLeaks() {
        if (fake != null) {
            fake.reset();
            fake.assertNothingLive();
            assertEquals(0, HostCallbacks.pendingCount(), "host callbacks launched but never run");
            assertEquals(0, HostCallbacks.failedUpcalls(), "an upcall caught a Throwable");
        }
    }

    @Override
    protected CudaRuntime runtime() {
        return cuda;
    }

    @Test
    void probeDescribesTheFake() {
        assertEquals(13000, cuda.runtimeVersion());
        assertEquals(1, cuda.deviceCount());
        assertEquals(fake.library.toString(), cuda.libraryLocation());
        assertTrue(cuda.description().startsWith("libcudart 13.0 at " + fake.library), cuda.description());
        assertEquals(BatchCopyPath.BATCH_CUDA_13, cuda.batchCopyPath());
    }

    @Test
    void eventIsNotReadyWhileItsStreamIsHeldThenReady() {
        try (CudaStream stream = cuda.createStream(true); CudaEvent event = cuda.createEvent(false)) {
            assertTrue(event.isComplete(), "a never-recorded event is complete");
            try (FakeCuda.Gate gate = fake.hold(stream)) {
                event.record(stream);
                assertFalse(event.isComplete());
                assertFalse(stream.isIdle());
                gate.open();
                event.synchronize();
                assertTrue(event.isComplete());
                stream.synchronize();
                assertTrue(stream.isIdle());
            }
        }
    }

    @Test
    void elapsedTimeCoversTheWorkBetweenTwoEvents() {
        fake.configure("copydelayus=3000");
        try (CudaStream stream = cuda.createStream(true);
             CudaEvent start = cuda.createEvent(true);
             CudaEvent end = cuda.createEvent(true);
             DeviceAllocation device = cuda.allocateDevice(64)) {
            start.record(stream);
            cuda.memsetAsync(device.segment(), 1, 64, stream);
            end.record(stream);
            end.synchronize();
            float millis = end.elapsedMillisSince(start);
            assertTrue(millis >= 2.9f, "elapsed " + millis + " ms across a 3 ms operation");
            try (CudaEvent untimed = cuda.createEvent(false)) {
                assertThrows(IllegalArgumentException.class, () -> end.elapsedMillisSince(untimed));
            }
        }
    }

    @Test
    void streamWaitEventOrdersWorkAcrossStreams() {
        int size = 128 * 1024;
        byte[] expected = randomBytes(9, size);
        try (CudaStream producer = cuda.createStream(true);
             CudaStream consumer = cuda.createStream(true);
             CudaEvent produced = cuda.createEvent(false);
             PinnedAllocation source = cuda.allocatePinned(size);
             PinnedAllocation target = cuda.allocatePinned(size);
             DeviceAllocation device = cuda.allocateDevice(size)) {
            MemorySegment.copy(MemorySegment.ofArray(expected), 0, source.segment(), 0, size);
            try (FakeCuda.Gate gate = fake.hold(producer)) {
                cuda.memcpyAsync(device.segment(), source.segment(), size, MemcpyKind.HOST_TO_DEVICE, producer);
                produced.record(producer);
                consumer.waitFor(produced);
                cuda.memcpyAsync(target.segment(), device.segment(), size, MemcpyKind.DEVICE_TO_HOST, consumer);
                assertFalse(consumer.isIdle(), "the consumer must wait for the held producer");
                gate.open();
                consumer.synchronize();
            }
            assertArrayEquals(expected, bytesOf(target.segment(), size));
        }
    }

    @Test
    void onCompleteFiresAfterEarlierWorkAndNeverRunsUserCodeOnTheCallbackThread() throws Exception {
        try (CudaStream stream = cuda.createStream(true)) {
            AtomicReference<Thread> ranOn = new AtomicReference<>();
            CompletableFuture<Thread> dependent;
            try (FakeCuda.Gate gate = fake.hold(stream)) {
                CompletableFuture<Void> done = stream.onComplete();
                dependent = done.thenApply(ignored -> {
                    ranOn.set(Thread.currentThread());
                    return Thread.currentThread();
                });
                assertFalse(done.isDone(), "completed before the held work ran");
                gate.open();
                dependent.get(30, TimeUnit.SECONDS);
            }
            Thread callbackThread = HostCallbacks.lastUpcallThread();
            assertNotNull(callbackThread);
            assertNotEquals(callbackThread, ranOn.get());
            assertTrue(ranOn.get().getName().startsWith("kvtier-cuda-callback-"), ranOn.get().getName());
        }
    }

    @Test
    void manyCallbacksOnTwoStreamsAllComplete() throws Exception {
        List<CompletableFuture<Void>> futures = new ArrayList<>();
        try (CudaStream first = cuda.createStream(true); CudaStream second = cuda.createStream(true)) {
            for (int i = 0; i < 500; i++) {
                futures.add(cuda.onComplete(first));
                futures.add(second.onComplete());
            }
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            first.synchronize();
            second.synchronize();
        }
        assertTrue(futures.stream().allMatch(f -> f.isDone() && !f.isCompletedExceptionally()));
    }

    @Test
    void threadsWithTheirOwnStreamsNeverSeeEachOthersBytes() throws Exception {
        int threads = 4;
        int roundsPerThread = 25;
        int size = 16 * 1024;
        var pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        try {
            List<java.util.concurrent.Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                workers.add(pool.submit(() -> {
                    try (CudaStream stream = cuda.createStream(true);
                         PinnedAllocation source = cuda.allocatePinned(size);
                         PinnedAllocation target = cuda.allocatePinned(size);
                         DeviceAllocation device = cuda.allocateDevice(size)) {
                        for (int round = 0; round < roundsPerThread; round++) {
                            byte[] expected = randomBytes(1000L * thread + round, size);
                            MemorySegment.copy(MemorySegment.ofArray(expected), 0, source.segment(), 0, size);
                            cuda.memcpyAsync(device.segment(), source.segment(), size, MemcpyKind.HOST_TO_DEVICE, stream);
                            cuda.memcpyAsync(target.segment(), device.segment(), size, MemcpyKind.DEVICE_TO_HOST, stream);
                            // Wait through the callback path, as the executor will.
                            stream.onComplete().get(30, TimeUnit.SECONDS);
                            assertArrayEquals(expected, bytesOf(target.segment(), size), "thread " + thread + " round " + round);
                        }
                    }
                    return null;
                }));
            }
            for (var worker : workers) {
                worker.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void batchCopyUsesTheCuda12AbiOn129() {
        fake.configure("version=12090");
        CudaRuntime cuda12 = fake.runtime();
        assertEquals(12090, cuda12.runtimeVersion());
        assertEquals(BatchCopyPath.BATCH_CUDA_12_8, cuda12.batchCopyPath());
        assertTrue(cuda12.isBatchCopyAvailable());
        batchRoundTrip(cuda12, BatchCopyPath.BATCH_CUDA_12_8);
    }

    @Test
    void batchCopyUsesTheCuda13AbiOn130() {
        assertEquals(BatchCopyPath.BATCH_CUDA_13, cuda.batchCopyPath());
        batchRoundTrip(cuda, BatchCopyPath.BATCH_CUDA_13);
    }

    @Test
    void batchCopyIsAbsentBefore128AndFallsBackToOneCopyEach() {
        fake.configure("version=12040");
        CudaRuntime old = fake.runtime();
        assertFalse(old.isBatchCopyAvailable());
        assertEquals(BatchCopyPath.ONE_BY_ONE, old.batchCopyPath());
        batchRoundTrip(old, BatchCopyPath.ONE_BY_ONE);
    }

    @Test
    void batchCopyOfAnUnknownFutureMajorVersionFallsBack() {
        fake.configure("version=14000");
        CudaRuntime future = fake.runtime();
        assertEquals(BatchCopyPath.ONE_BY_ONE, future.batchCopyPath());
        batchRoundTrip(future, BatchCopyPath.ONE_BY_ONE);
    }

    @Test
    void batchFaultOn129SurfacesAsCudaException() {
        fake.configure("version=12090");
        CudaRuntime cuda12 = fake.runtime();
        try (CudaStream stream = cuda12.createStream(true); DeviceAllocation device = cuda12.allocateDevice(64)) {
            fake.configure("fail=cudaMemcpyBatchAsync:1:cudaErrorInvalidValue");
            CudaException failure = assertThrows(CudaException.class, () -> cuda12.memcpyBatchAsync(
                    List.of(device.segment()), List.of(device.segment().asSlice(0, 32)), new long[] {32},
                    MemcpyKind.DEVICE_TO_DEVICE, stream));
            assertEquals("cudaMemcpyBatchAsync", failure.call());
            assertEquals("cudaErrorInvalidValue", failure.errorName());
        }
    }

    private void batchRoundTrip(CudaRuntime runtime, BatchCopyPath expectedPath) {
        int pieces = 5;
        int size = 3000;
        byte[] expected = randomBytes(77, pieces * size);
        try (CudaStream stream = runtime.createStream(true);
             PinnedAllocation source = runtime.allocatePinned((long) pieces * size);
             PinnedAllocation target = runtime.allocatePinned((long) pieces * size);
             DeviceAllocation device = runtime.allocateDevice((long) pieces * size)) {
            MemorySegment.copy(MemorySegment.ofArray(expected), 0, source.segment(), 0, expected.length);
            List<MemorySegment> up = new ArrayList<>();
            List<MemorySegment> onDevice = new ArrayList<>();
            List<MemorySegment> down = new ArrayList<>();
            long[] sizes = new long[pieces];
            for (int i = 0; i < pieces; i++) {
                // Reversed on the device, so a copy that ignored the per-piece addresses shows.
                up.add(source.segment().asSlice((long) i * size, size));
                onDevice.add(device.segment().asSlice((long) (pieces - 1 - i) * size, size));
                down.add(target.segment().asSlice((long) i * size, size));
                sizes[i] = size;
            }
            assertEquals(expectedPath, runtime.memcpyBatchAsync(onDevice, up, sizes, MemcpyKind.HOST_TO_DEVICE, stream));
            assertEquals(expectedPath, runtime.memcpyBatchAsync(down, onDevice, sizes, MemcpyKind.DEVICE_TO_HOST, stream));
            stream.synchronize();
            assertArrayEquals(expected, bytesOf(target.segment(), expected.length));
        }
    }

    @Test
    void asyncFaultSurfacesAtTheNextSynchronization() {
        try (CudaStream stream = cuda.createStream(true); DeviceAllocation device = cuda.allocateDevice(64);
             PinnedAllocation host = cuda.allocatePinned(64)) {
            fake.configure("failasync=cudaMemcpyAsync:1:cudaErrorLaunchFailure");
            cuda.memcpyAsync(device.segment(), host.segment(), 64, MemcpyKind.HOST_TO_DEVICE, stream);
            CudaException failure = assertThrows(CudaException.class, stream::synchronize);
            assertEquals("cudaStreamSynchronize", failure.call());
            assertEquals("cudaErrorLaunchFailure", failure.errorName());
            assertEquals(719, failure.code());
            assertTrue(failure.getMessage().contains("unspecified launch failure")
                    || failure.getMessage().contains(failure.errorText()), failure.getMessage());
        }
    }
}
