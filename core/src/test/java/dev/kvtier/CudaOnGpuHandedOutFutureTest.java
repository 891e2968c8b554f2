package dev.kvtier;

import dev.kvtier.cuda.CudaProbe;
import dev.kvtier.cuda.CudaRuntime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;

import java.lang.foreign.MemorySegment;

/** The handed-out future contract on a real GPU; skipped (with the probe's reason) where no CUDA device is usable. */
@Tag("gpu")
class CudaOnGpuHandedOutFutureTest extends HandedOutFutureContract {
    private TestDeviceMemory deviceMemory;

    @Override
    protected KvTierConfig.Builder configureBackend(KvTierConfig.Builder builder) {
        // Here, not in a @BeforeEach of this class: the contract's own @BeforeEach, which opens the cache, runs first.
        CudaProbe probe = CudaRuntime.probe();
        Assumptions.assumeTrue(probe.isUsable(), () -> "no usable CUDA device: " + probe.describe());
        deviceMemory = new TestDeviceMemory(probe.runtime().orElseThrow());
        return builder.backend(Backend.CUDA);
    }

    @AfterEach
    void freeDeviceMemory() {
        if (deviceMemory != null) {
            deviceMemory.close();
        }
    }

    @Override
    protected byte[] pageContent(MemorySegment page) {
        return deviceMemory.content(page);
    }
}
