package dev.kvtier.bench.cuda;

import dev.kvtier.cuda.CudaLibraryLoader;
import dev.kvtier.cuda.CudaProbe;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.runtime.cudart_h;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * What our binding layer costs on a trivial CUDA call ({@code cudaGetLastError}), against the raw mechanisms in the same
 * run: the C loop ({@code kvtier_call_n} in native/build/bench/libkvtier_benchnative.so, n calls per downcall) is the
 * floor; the raw downcall handle ({@code invokeExact}) is what FFM itself costs; the jextract-shaped static wrapper and
 * our checked {@link CudaRuntime#checkLastError()} are what users pay. Goal: ours within 20 ns of the raw handle.
 *
 * <p>The library is {@code -Dkvtier.cudart} when given, else the host-emulated fake under {@code -Dkvtier.native.dir}
 * (default native/build). Both the static bindings and the {@link CudaRuntime} instance use that one file.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class BindingOverheadBench {

    /** Calls per C-loop invocation; large enough that the one downcall into the loop is noise. */
    static final int C_LOOP_CALLS = 10_000;

    private CudaRuntime cuda;
    private MethodHandle callN;
    private MemorySegment getLastErrorAddress;

    /** Initialized on first use, after {@link #select()} has chosen the library: a constant handle, as in jextract. */
    private static final class Raw {
        static final MethodHandle GET_LAST_ERROR = cudart_h.cudaGetLastError$handle();
    }

    @Setup
    public void select() {
        String chosen = System.getProperty(CudaLibraryLoader.LIBRARY_PROPERTY);
        Path nativeDir = Path.of(System.getProperty("kvtier.native.dir", "native/build"));
        if (chosen == null) {
            Path fake = nativeDir.resolve("fakecudart/libcudart.so").toAbsolutePath();
            if (!Files.exists(fake)) {
                throw new IllegalStateException("no library to measure: build native/ (./mvnw -pl bindings "
                        + "generate-resources) or pass -Dkvtier.cudart=/path/to/libcudart.so; looked for " + fake);
            }
            chosen = fake.toString();
            // The static bindings (cudart_h) resolve in the process-wide library, chosen from this property.
            System.setProperty(CudaLibraryLoader.LIBRARY_PROPERTY, chosen);
        }
        CudaProbe probe = CudaRuntime.probe(Path.of(chosen));
        if (!probe.isUsable()) {
            throw new IllegalStateException("cannot measure: " + probe.describe());
        }
        cuda = probe.runtime().orElseThrow();
        Path benchNative = nativeDir.resolve("bench/libkvtier_benchnative.so").toAbsolutePath();
        SymbolLookup helper = SymbolLookup.libraryLookup(benchNative, Arena.global());
        callN = Linker.nativeLinker().downcallHandle(helper.find("kvtier_call_n").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
        getLastErrorAddress = cudart_h.cudaGetLastError$address();
        if (!CudaLibraryLoader.processWideLibrary().orElseThrow().location().equals(chosen)) {
            throw new IllegalStateException("cudart_h is bound to " + CudaLibraryLoader.processWideLibrary()
                    + ", not " + chosen + ": the comparison would mix libraries");
        }
    }

    /** The floor: the call made from C, per call. */
    @Benchmark
    @OperationsPerInvocation(C_LOOP_CALLS)
    public long cLoopBaseline() throws Throwable {
        return (long) callN.invokeExact(getLastErrorAddress, (long) C_LOOP_CALLS);
    }

    /** FFM alone: the raw downcall handle, a constant, {@code invokeExact}. */
    @Benchmark
    public int rawDowncallHandle() throws Throwable {
        return (int) Raw.GET_LAST_ERROR.invokeExact();
    }

    /** The jextract-shaped static wrapper {@code cudart_h.cudaGetLastError()}. */
    @Benchmark
    public int jextractStaticWrapper() {
        return cudart_h.cudaGetLastError();
    }

    /** Ours: {@link CudaRuntime#checkLastError()}, an instance handle plus the error check. */
    @Benchmark
    public void checkedWrapper() {
        cuda.checkLastError();
    }
}
