package dev.kvtier.cuda;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The contract on a real GPU: the runtime the default search finds ({@code -Dkvtier.cudart}, {@code KVTIER_CUDART},
 * CUDA_HOME, /usr/local/cuda, the loader). Skipped, with the probe's reason, where there is no usable device.
 */
@Tag("gpu")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GpuCudaRuntimeTest extends CudaRuntimeContract {

    private static volatile CudaProbe probe;

    @Override
    protected CudaRuntime runtime() {
        CudaProbe result = probe;
        if (result == null) {
            result = CudaRuntime.probe();
            probe = result;
        }
        assumeTrue(result.isUsable(), "no usable CUDA device: " + result.describe());
        return result.runtime().orElseThrow();
    }
}
