package dev.kvtier.exec.cuda;

import dev.kvtier.KvTierConfig;
import dev.kvtier.cuda.CudaProbe;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.exec.CopyEngineContract;
import dev.kvtier.exec.ExecutionBackend;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;

import java.nio.file.Path;

/** The copy-engine contract on a real GPU; skipped (with the probe's reason) where no CUDA device is usable. */
@Tag("gpu")
class CudaOnGpuCopyEngineContractTest extends CopyEngineContract {
    @Override
    protected ExecutionBackend openBackend(Path directory) {
        CudaProbe probe = CudaRuntime.probe();
        Assumptions.assumeTrue(probe.isUsable(), () -> "no usable CUDA device: " + probe.describe());
        return new CudaExecutionBackend(probe.runtime().orElseThrow(), directory, 2, true,
                ExtentRegistration.WHERE_SUPPORTED, 64 << 10, 2, KvTierConfig.DEFAULT_TRANSFER_TIMEOUT, "contract test on a GPU");
    }
}
