package dev.kvtier.exec.cuda;

/**
 * The copy-engine contract on the CUDA backend over the fake with every mapped extent staged through
 * pinned bounce buffers (64 KiB, so a 300 KB copy goes through several chunks of one pair), and heap
 * memory taken through them too.
 */
class CudaOverFakeStagedCopyEngineContractTest extends CudaOverFakeCopyEngineContractTest {
    @Override
    protected ExtentRegistration registration() {
        return ExtentRegistration.NEVER;
    }
}
