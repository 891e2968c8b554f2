package dev.kvtier.exec.cuda;

import dev.kvtier.KvTierConfig;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.FakeCuda;
import dev.kvtier.exec.CopyEngineContract;
import dev.kvtier.exec.ExecutionBackend;

import java.nio.file.Path;

/**
 * The copy-engine contract on the CUDA backend over the host-emulated libcudart, extents registered
 * ({@code cudaHostRegister}); the fake delays each copy on its stream so that a future completed
 * before its copy, or a copy read before its predecessor finished, shows as wrong bytes. Nothing
 * CUDA allocated may be left afterwards.
 */
class CudaOverFakeCopyEngineContractTest extends CopyEngineContract {
    protected FakeCuda fake;

    @Override
    protected ExecutionBackend openBackend(Path directory) {
        fake = FakeCuda.open();
        fake.reset();
        fake.configure("copydelayus=200");
        CudaRuntime cuda = CudaRuntime.probe(fake.library()).runtime().orElseThrow();
        return new CudaExecutionBackend(cuda, directory, 2, true, registration(), 64 << 10, 2, KvTierConfig.DEFAULT_TRANSFER_TIMEOUT, "contract test");
    }

    /** How mapped extents reach the device in this configuration. */
    protected ExtentRegistration registration() {
        return ExtentRegistration.ALWAYS;
    }

    @Override
    protected void afterBackendClosed() {
        fake.reset();
        fake.assertNothingLive();
    }
}
