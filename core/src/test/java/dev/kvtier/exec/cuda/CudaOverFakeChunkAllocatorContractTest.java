package dev.kvtier.exec.cuda;

import dev.kvtier.KvTierConfig;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.FakeCuda;
import dev.kvtier.exec.ChunkAllocator;
import dev.kvtier.exec.ChunkAllocatorContract;
import dev.kvtier.exec.StorageKind;
import org.junit.jupiter.api.Nested;

import java.nio.file.Path;

/**
 * The chunk-allocator contract on each allocator of the CUDA backend over the host-emulated libcudart:
 * {@code cudaMalloc} arenas, {@code cudaHostAlloc} blocks, and mapped extents registered with
 * {@code cudaHostRegister} or staged. Nothing CUDA allocated, pinned or registered may be left after
 * the chunks are closed.
 */
class CudaOverFakeChunkAllocatorContractTest {
    abstract static class OverFake extends ChunkAllocatorContract {
        private FakeCuda fake;
        private CudaExecutionBackend backend;

        @Override
        protected ChunkAllocator openAllocator(Path directory) {
            fake = FakeCuda.open();
            fake.reset();
            CudaRuntime cuda = CudaRuntime.probe(fake.library()).runtime().orElseThrow();
            backend = new CudaExecutionBackend(cuda, directory, 1, true, registration(), 64 << 10, 1, KvTierConfig.DEFAULT_TRANSFER_TIMEOUT, "contract test");
            return backend.chunkAllocator(kind());
        }

        abstract StorageKind kind();

        ExtentRegistration registration() {
            return ExtentRegistration.ALWAYS;
        }

        @Override
        protected boolean hostAccessible() {
            return kind() != StorageKind.DEVICE;
        }

        @Override
        protected void afterChunksClosed() {
            backend.close();
            fake.reset();
            fake.assertNothingLive();
        }
    }

    @Nested
    class DeviceArenas extends OverFake {
        @Override
        StorageKind kind() {
            return StorageKind.DEVICE;
        }
    }

    @Nested
    class PinnedBlocks extends OverFake {
        @Override
        StorageKind kind() {
            return StorageKind.PINNED_HOST;
        }
    }

    @Nested
    class RegisteredExtents extends OverFake {
        @Override
        StorageKind kind() {
            return StorageKind.MAPPED_FILE;
        }
    }

    @Nested
    class StagedExtents extends OverFake {
        @Override
        StorageKind kind() {
            return StorageKind.MAPPED_FILE;
        }

        @Override
        ExtentRegistration registration() {
            return ExtentRegistration.NEVER;
        }
    }
}
