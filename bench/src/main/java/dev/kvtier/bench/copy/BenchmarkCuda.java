package dev.kvtier.bench.copy;

import dev.kvtier.cuda.CudaProbe;
import dev.kvtier.cuda.CudaRuntime;

import java.nio.file.Path;

/** The libcudart the CUDA copy benchmarks run over. Stateless; thread-safe. */
final class BenchmarkCuda {
    private BenchmarkCuda() {
    }

    /**
     * The runtime loaded from system property {@code kvtier.cudart}, by default the host-emulated
     * {@code native/build/fakecudart/libcudart.so} (relative to the repository root, where the JMH
     * profiles run), so the benchmarks measure the per-call path, not a bus.
     *
     * @throws IllegalStateException naming the file and why it is not usable
     */
    static CudaRuntime runtime() {
        Path library = Path.of(System.getProperty("kvtier.cudart", "native/build/fakecudart/libcudart.so"));
        CudaProbe probe = CudaRuntime.probe(library);
        return probe.runtime().orElseThrow(() -> new IllegalStateException(
                "no usable libcudart at " + library + " (set -Dkvtier.cudart): " + probe.describe()));
    }
}
