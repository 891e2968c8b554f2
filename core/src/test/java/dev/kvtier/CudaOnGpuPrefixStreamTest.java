package dev.kvtier;

import dev.kvtier.cuda.CudaProbe;
import dev.kvtier.cuda.CudaRuntime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;

import java.lang.foreign.MemorySegment;

/** The prefix-stream contract on a real GPU; skipped (with the probe's reason) where no CUDA device is usable. */
@Tag("gpu")
class CudaOnGpuPrefixStreamTest extends PrefixStreamContract {
    private TestDeviceMemory deviceMemory;

    @BeforeEach
    void requireGpu() {
        CudaProbe probe = CudaRuntime.probe();
        Assumptions.assumeTrue(probe.isUsable(), () -> "no usable CUDA device: " + probe.describe());
        deviceMemory = new TestDeviceMemory(probe.runtime().orElseThrow());
    }

    @AfterEach
    void freeDeviceMemory() {
        if (deviceMemory != null) {
            deviceMemory.close();
        }
    }

    @Override
    protected KvTierConfig.Builder configureBackend(KvTierConfig.Builder builder) {
        return builder.backend(Backend.CUDA);
    }

    @Override
    protected byte[] pageContent(MemorySegment page) {
        return deviceMemory.content(page);
    }
}
