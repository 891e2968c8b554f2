package dev.kvtier;

import dev.kvtier.cuda.FakeCuda;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** AUTO picks CUDA when the probe finds a device and says why when it falls back; CUDA refuses clearly. */
class BackendSelectionTest {
    @TempDir
    Path disk;

    private KvTierConfig.Builder config() {
        return KvTierConfig.builder().gpuBudgetBytes(1 << 20).cpuBudgetBytes(1 << 20).diskDirectory(disk);
    }

    @Test
    void autoFallsBackToHostNamingWhyAndCudaRefuses() {
        Path missing = disk.resolve("no-such-libcudart.so");
        try (KvTierCache cache = KvTierCache.open(config().backend(Backend.AUTO).cudaLibrary(missing).build())) {
            String description = cache.backendDescription();
            assertTrue(description.startsWith("host (no GPU: "), description);
            assertTrue(description.contains("no-such-libcudart.so"), description);
        }
        CacheOpenException e = assertThrows(CacheOpenException.class,
                () -> KvTierCache.open(config().backend(Backend.CUDA).cudaLibrary(missing).build()));
        assertTrue(e.getMessage().contains("CUDA is not usable"), e.getMessage());
        assertTrue(e.getMessage().contains("Backend.HOST"), e.getMessage());
    }

    @Test
    void autoUsesCudaWhenTheProbeFindsADeviceAndHostWhenItFindsNone() {
        FakeCuda fake = FakeCuda.open();
        try {
            try (KvTierCache cache = KvTierCache.open(config().backend(Backend.AUTO).cudaLibrary(fake.library()).build())) {
                assertTrue(cache.backendDescription().startsWith("cuda ("), cache.backendDescription());
                assertTrue(cache.backendDescription().contains("AUTO found a usable device"), cache.backendDescription());
            }
            fake.configure("nodevice=1");
            try (KvTierCache cache = KvTierCache.open(config().backend(Backend.AUTO).cudaLibrary(fake.library()).build())) {
                assertTrue(cache.backendDescription().startsWith("host (no GPU: "), cache.backendDescription());
                assertTrue(cache.backendDescription().contains("cudaErrorNoDevice"), cache.backendDescription());
            }
        } finally {
            fake.reset();
        }
    }

    @Test
    void hostIsHostWhenAskedFor() {
        try (KvTierCache cache = KvTierCache.open(config().backend(Backend.HOST).build())) {
            assertTrue(cache.backendDescription().startsWith("host (HOST requested"), cache.backendDescription());
        }
    }
}
