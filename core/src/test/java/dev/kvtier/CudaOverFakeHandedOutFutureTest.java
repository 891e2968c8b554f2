package dev.kvtier;

import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.FakeCuda;

import java.lang.foreign.MemorySegment;

/**
 * The handed-out future contract on the CUDA backend over the host-emulated libcudart (CI, no GPU), which also
 * checks that no device memory, stream or event is left once the cache is closed.
 */
class CudaOverFakeHandedOutFutureTest extends HandedOutFutureContract {
    private FakeCuda fake;
    private TestDeviceMemory deviceMemory;

    @Override
    protected KvTierConfig.Builder configureBackend(KvTierConfig.Builder builder) {
        // Here, not in a @BeforeEach of this class: the contract's own @BeforeEach, which opens the cache, runs first.
        fake = FakeCuda.open();
        fake.reset();
        deviceMemory = new TestDeviceMemory(CudaRuntime.probe(fake.library()).runtime().orElseThrow());
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
