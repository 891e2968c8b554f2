package dev.kvtier.cuda;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every CUDA function the safe layer calls, failed once by the fake ({@code fail=FUNC:1:ERR}): the failure must surface
 * as a {@link CudaException} naming that call, the error's name and code, and nothing may leak (the fake's live counts
 * return to 0 once the test's handles are closed; a failed release is retried by the next close).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FakeFaultInjectionTest {

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
            assertEquals(0, HostCallbacks.pendingCount(), "a failed launch left its callback ticket behind");
        }
    }

    /** Handles a fault case may use; everything here is closed after the case, after the fault rules are cleared. */
    static final class Fixture implements AutoCloseable {
        final CudaRuntime cuda;
        final Arena arena = Arena.ofConfined();
        final CudaStream stream;
        final CudaEvent start;
        final CudaEvent end;
        final DeviceAllocation device;
        final DeviceAllocation otherDevice;
        final PinnedAllocation pinned;
        final List<AutoCloseable> extra = new ArrayList<>();

        Fixture(CudaRuntime cuda) {
            this.cuda = cuda;
            stream = cuda.createStream(true);
            start = cuda.createEvent(true);
            end = cuda.createEvent(true);
            device = cuda.allocateDevice(4096);
            otherDevice = cuda.allocateDevice(4096);
            pinned = cuda.allocatePinned(4096);
        }

        <T extends AutoCloseable> T keep(T handle) {
            extra.add(handle);
            return handle;
        }

        @Override
        public void close() {
            for (AutoCloseable handle : extra) {
                try {
                    handle.close();
                } catch (Exception e) {
                    throw new AssertionError("closing " + handle, e);
                }
            }
            pinned.close();
            otherDevice.close();
            device.close();
            end.close();
            start.close();
            stream.close();
            arena.close();
        }
    }

    static Stream<Arguments> everyCheckedCall() {
        return Stream.of(
                fault("cudaMalloc", "cudaErrorMemoryAllocation", f -> f.keep(f.cuda.allocateDevice(128))),
                fault("cudaFree", "cudaErrorLaunchFailure", f -> f.device.close()),
                fault("cudaHostAlloc", "cudaErrorMemoryAllocation", f -> f.keep(f.cuda.allocatePinned(128))),
                fault("cudaFreeHost", "cudaErrorLaunchFailure", f -> f.pinned.close()),
                fault("cudaHostRegister", "cudaErrorHostMemoryAlreadyRegistered",
                        f -> f.keep(f.cuda.registerHost(f.arena.allocate(8192, 4096), false))),
                fault("cudaHostUnregister", "cudaErrorHostMemoryNotRegistered", f -> {
                    HostRegistration registration = f.keep(f.cuda.registerHost(f.arena.allocate(8192, 4096), true));
                    registration.close();
                }),
                fault("cudaMemsetAsync", "cudaErrorInvalidValue",
                        f -> f.cuda.memsetAsync(f.device.segment(), 0, 16, f.stream)),
                fault("cudaMemcpyAsync", "cudaErrorInvalidMemcpyDirection", f -> f.cuda.memcpyAsync(
                        f.device.segment(), f.pinned.segment(), 16, MemcpyKind.HOST_TO_DEVICE, f.stream)),
                fault("cudaMemcpyPeerAsync", "cudaErrorInvalidDevice", f -> f.cuda.memcpyPeerAsync(
                        f.otherDevice.segment(), 0, f.device.segment(), 0, 16, f.stream)),
                fault("cudaMemcpyBatchAsync", "cudaErrorInvalidValue", f -> f.cuda.memcpyBatchAsync(
                        List.of(f.device.segment()), List.of(f.pinned.segment()), new long[] {16},
                        MemcpyKind.HOST_TO_DEVICE, f.stream)),
                fault("cudaStreamCreateWithFlags", "cudaErrorLaunchFailure", f -> f.keep(f.cuda.createStream(true))),
                fault("cudaStreamDestroy", "cudaErrorInvalidResourceHandle", f -> f.stream.close()),
                fault("cudaStreamSynchronize", "cudaErrorLaunchFailure", f -> f.stream.synchronize()),
                fault("cudaStreamQuery", "cudaErrorIllegalAddress", f -> f.stream.isIdle()),
                fault("cudaStreamWaitEvent", "cudaErrorInvalidResourceHandle", f -> f.stream.waitFor(f.start)),
                fault("cudaLaunchHostFunc", "cudaErrorNotPermitted", f -> f.cuda.onComplete(f.stream)),
                fault("cudaEventCreateWithFlags", "cudaErrorLaunchFailure", f -> f.keep(f.cuda.createEvent(false))),
                fault("cudaEventRecord", "cudaErrorInvalidResourceHandle", f -> f.start.record(f.stream)),
                fault("cudaEventQuery", "cudaErrorLaunchFailure", f -> f.start.isComplete()),
                fault("cudaEventSynchronize", "cudaErrorLaunchFailure", f -> f.start.synchronize()),
                fault("cudaEventElapsedTime", "cudaErrorNotReady", f -> f.end.elapsedMillisSince(f.start)),
                fault("cudaEventDestroy", "cudaErrorInvalidResourceHandle", f -> f.end.close()),
                fault("cudaSetDevice", "cudaErrorInvalidDevice", f -> f.cuda.setDevice(0)),
                fault("cudaGetDevice", "cudaErrorInvalidDevice", f -> f.cuda.currentDevice()),
                fault("cudaDeviceGetAttribute", "cudaErrorInvalidValue",
                        f -> f.cuda.deviceAttribute(DeviceAttribute.ASYNC_ENGINE_COUNT, 0)),
                fault("cudaMemGetInfo", "cudaErrorLaunchFailure", f -> f.cuda.memoryInfo()),
                fault("cudaDeviceSynchronize", "cudaErrorLaunchFailure", f -> f.cuda.deviceSynchronize()),
                fault("cudaDeviceCanAccessPeer", "cudaErrorInvalidDevice", f -> f.cuda.canAccessPeer(0, 0)),
                fault("cudaGetLastError", "cudaErrorLaunchFailure", f -> f.cuda.checkLastError()));
    }

    private static Arguments fault(String call, String error, Consumer<Fixture> action) {
        return Arguments.of(call, error, action);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @MethodSource("everyCheckedCall")
    void anInjectedFaultSurfacesAsCudaExceptionNamingTheCall(String call, String error, Consumer<Fixture> action)
            throws Exception {
        int pendingBefore = HostCallbacks.pendingCount();
        try (Fixture fixture = new Fixture(cuda)) {
            fixture.start.record(fixture.stream);
            fixture.end.record(fixture.stream);
            fixture.stream.synchronize();
            fake.configure("fail=" + call + ":1:" + error);
            CudaException failure = assertThrows(CudaException.class, () -> action.accept(fixture));
            assertEquals(call, failure.call());
            assertEquals(error, failure.errorName());
            assertEquals(cuda.errorText(failure.code()), failure.errorText());
            assertEquals(error, cuda.errorName(failure.code()));
            assertTrue(failure.getMessage().startsWith(call + " failed: " + error + " (" + failure.code() + "): "),
                    failure.getMessage());
            assertEquals(pendingBefore, HostCallbacks.pendingCount());
            // Clear the rule before the fixture closes: a failed release must be retried and succeed.
            fake.reset();
        }
    }

    @Test
    void probeReportsNoDeviceWithTheCudaError() {
        fake.configure("nodevice=1");
        CudaProbe probe = CudaRuntime.probe(fake.library);
        CudaProbe.Unavailable unavailable = assertInstanceOf(CudaProbe.Unavailable.class, probe);
        CudaException error = unavailable.cudaError().orElseThrow();
        assertEquals("cudaGetDeviceCount", error.call());
        assertEquals("cudaErrorNoDevice", error.errorName());
        assertTrue(probe.describe().contains("cudaErrorNoDevice") && probe.describe().contains(fake.library.toString()),
                probe.describe());
    }

    @Test
    void probeReportsNoDriverWithTheCudaError() {
        fake.configure("nodriver=1");
        CudaProbe probe = CudaRuntime.probe(fake.library);
        assertFalse(probe.isUsable());
        CudaException error = ((CudaProbe.Unavailable) probe).cudaError().orElseThrow();
        assertEquals("cudaErrorInsufficientDriver", error.errorName());
        assertTrue(probe.describe().contains("driver none"), probe.describe());
    }

    @Test
    void probeReportsAFailingVersionQuery() {
        for (String call : List.of("cudaRuntimeGetVersion", "cudaDriverGetVersion", "cudaGetDeviceCount")) {
            fake.configure("fail=" + call + ":1:cudaErrorInitializationError");
            CudaProbe probe = CudaRuntime.probe(fake.library);
            CudaException error = ((CudaProbe.Unavailable) probe).cudaError().orElseThrow();
            assertEquals(call, error.call());
            assertEquals("cudaErrorInitializationError", error.errorName());
            fake.reset();
        }
    }

    @Test
    void aFailedLaunchLeavesNoTicketAndALaterLaunchStillCompletes() throws Exception {
        try (CudaStream stream = cuda.createStream(true)) {
            fake.configure("fail=cudaLaunchHostFunc:1:cudaErrorLaunchFailure");
            assertThrows(CudaException.class, () -> cuda.onComplete(stream));
            assertEquals(0, HostCallbacks.pendingCount());
            cuda.onComplete(stream).get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void heapSegmentsAreRefusedBeforeAnyNativeCall() {
        try (CudaStream stream = cuda.createStream(true); DeviceAllocation device = cuda.allocateDevice(16)) {
            MemorySegment heap = MemorySegment.ofArray(new byte[16]);
            assertThrows(IllegalArgumentException.class,
                    () -> cuda.memcpyAsync(device.segment(), heap, 16, MemcpyKind.HOST_TO_DEVICE, stream));
        }
    }
}
