package dev.kvtier;

import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.FakeCuda;
import org.junit.jupiter.api.BeforeEach;

import java.lang.foreign.MemorySegment;

/**
 * The prefix-stream contract on the CUDA backend over the host-emulated libcudart (CI, no GPU): staging in device
 * memory, layers gathered with the batched copy.
 */
class CudaOverFakePrefixStreamTest extends PrefixStreamContract {
    private FakeCuda fake;
    private TestDeviceMemory deviceMemory;

    @BeforeEach
    void loadFake() {
        fake = FakeCuda.open();
        fake.reset();
        deviceMemory = new TestDeviceMemory(CudaRuntime.probe(fake.library()).runtime().orElseThrow());
    }

    @Override
    protected KvTierConfig.Builder configureBackend(KvTierConfig.Builder builder) {
        return builder.backend(Backend.CUDA).cudaLibrary(fake.library());
    }

    @Override
    protected byte[] pageContent(MemorySegment page) {
        return deviceMemory.content(page);
    }

    @Override
    protected void afterCachesClosed() {
        deviceMemory.close();
        fake.reset();
        fake.assertNothingLive();
    }
}
