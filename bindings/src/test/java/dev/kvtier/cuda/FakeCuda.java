package dev.kvtier.cuda;

import dev.kvtier.cuda.runtime.CudartDescriptors;
import dev.kvtier.cuda.runtime.cudaHostFn_t;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The host-emulated libcudart (native/fakecudart) and its control API ({@code kvtierfake_configure}, {@code _reset},
 * {@code _live_count}, {@code _call_count}), looked up in the same loaded library the runtime under test uses (dlopen of
 * one path is one library, so one configuration). Also gates: a host function that holds a stream until the test opens
 * it, which makes "not ready yet" states deterministic instead of timing-dependent.
 *
 * <p>A test helper, published in this module's test-jar for core's tests too. A test that opens it is skipped, with the
 * native build's reason, where the fake was not built. A rejected configuration fails the test (a JUnit assertion). The
 * control calls are thread-safe (the fake locks); a configuration is process-wide.
 */
@SuppressWarnings("restricted")
public final class FakeCuda {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Map<Long, CountDownLatch> GATES = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_GATE = new AtomicLong(1);
    private static final MemorySegment GATE_STUB = cudaHostFn_t.allocate(FakeCuda::holdUntilOpened, Arena.global());

    final Path library;
    private final MethodHandle configure;
    private final MethodHandle reset;
    private final MethodHandle liveCount;
    private final MethodHandle callCount;
    private final MethodHandle launchHostFunc;

    private FakeCuda(Path library) {
        this.library = library;
        SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
        configure = LINKER.downcallHandle(lookup.find("kvtierfake_configure").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
        reset = LINKER.downcallHandle(lookup.find("kvtierfake_reset").orElseThrow(), FunctionDescriptor.ofVoid());
        liveCount = LINKER.downcallHandle(lookup.find("kvtierfake_live_count").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
        callCount = LINKER.downcallHandle(lookup.find("kvtierfake_call_count").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
        launchHostFunc = LINKER.downcallHandle(lookup.find("cudaLaunchHostFunc").orElseThrow(),
                CudartDescriptors.cudaLaunchHostFunc);
    }

    /** The fake, or the calling test is skipped with the native build's reason. */
    public static FakeCuda open() {
        return new FakeCuda(NativeBuild.fakeLibrary());
    }

    /** The fake libcudart's path, to probe or configure a runtime over it. */
    public Path library() {
        return library;
    }

    /** A runtime over the fake, probed now (so it sees the current {@code version=} configuration). */
    CudaRuntime runtime() {
        CudaProbe probe = CudaRuntime.probe(library);
        if (!probe.isUsable()) {
            fail("the fake libcudart should be usable: " + probe.describe());
        }
        return probe.runtime().orElseThrow();
    }

    /** Applies a {@code kvtierfake_configure} spec (e.g. {@code "fail=cudaMemcpyAsync:1:cudaErrorLaunchFailure"}); fails the test if rejected. */
    public void configure(String spec) {
        try (Arena arena = Arena.ofConfined()) {
            int bad = (int) configure.invokeExact(arena.allocateFrom(spec));
            assertEquals(0, bad, "kvtierfake_configure rejected item " + bad + " of '" + spec + "'");
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Drains the work in flight, then drops the configured faults and the sticky error (back to the environment's configuration). */
    public void reset() {
        try {
            reset.invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** How many of {@code what} ({@code "device"}, {@code "pinned"}, {@code "registered"}, {@code "streams"}, {@code "events"}, {@code "device_bytes"}) are alive. */
    public long liveCount(String what) {
        try (Arena arena = Arena.ofConfined()) {
            return (long) liveCount.invokeExact(arena.allocateFrom(what));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** How often {@code function} (a bound CUDA symbol) was called in this process, or -1 for a name the fake lacks; never reset. */
    public long callCount(String function) {
        try (Arena arena = Arena.ofConfined()) {
            return (long) callCount.invokeExact(arena.allocateFrom(function));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Asserts no device/pinned/registered memory, stream or event is left alive in the fake. */
    public void assertNothingLive() {
        for (String kind : new String[] {"device", "pinned", "registered", "streams", "events", "device_bytes"}) {
            assertEquals(0, liveCount(kind), "live " + kind + " in the fake after the test");
        }
    }

    /** Holds {@code stream} (work enqueued after this waits) until {@link Gate#open()}; opens by itself after 30 s. */
    Gate hold(CudaStream stream) {
        long id = NEXT_GATE.getAndIncrement();
        var latch = new CountDownLatch(1);
        GATES.put(id, latch);
        try {
            int code = (int) launchHostFunc.invokeExact(stream.handle(), GATE_STUB, MemorySegment.ofAddress(id));
            assertEquals(0, code, "cudaLaunchHostFunc for a gate");
        } catch (Throwable t) {
            throw rethrow(t);
        }
        return new Gate(latch);
    }

    /** A held stream; open it in a finally block. */
    record Gate(CountDownLatch latch) implements AutoCloseable {
        void open() {
            latch.countDown();
        }

        @Override
        public void close() {
            open();
        }
    }

    private static void holdUntilOpened(MemorySegment userData) {
        try {
            CountDownLatch latch = GATES.remove(userData.address());
            if (latch != null) {
                latch.await(30, TimeUnit.SECONDS);
            }
        } catch (Throwable t) {
            // Never throw from an upcall.
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new RuntimeException(t);
    }
}
