package dev.kvtier;

import org.junit.jupiter.api.Tag;

/** The contract on a real GPU with DISK extents staged through pinned bounce buffers (skipped without a device). */
@Tag("gpu")
class CudaOnGpuStagedKvTierCacheTest extends CudaOnGpuKvTierCacheTest {
    @Override
    protected KvTierConfig.Builder configureBackend(KvTierConfig.Builder builder) {
        return super.configureBackend(builder).diskTransferMode(DiskTransferMode.STAGED);
    }
}
