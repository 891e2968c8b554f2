package dev.kvtier;

import dev.kvtier.exec.cuda.CudaExecutionBackend;
import dev.kvtier.store.DemotionPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KvTierConfigTest {

    private static KvTierConfig.Builder budgets() {
        return KvTierConfig.builder().gpuBudgetBytes(1 << 20).cpuBudgetBytes(2 << 20);
    }

    @Test
    void defaultsAreTheDocumentedOnes() {
        KvTierConfig config = budgets().build();
        assertEquals(1 << 20, config.gpuBudgetBytes());
        assertEquals(2 << 20, config.cpuBudgetBytes());
        assertTrue(config.diskDirectory().isEmpty());
        assertEquals(KvTierConfig.DEFAULT_PAGE_SIZE, config.pageSizeBytes());
        assertEquals(DemotionPolicy.defaultPolicy().name(), config.policy().name());
        assertEquals(Backend.AUTO, config.backend());
        assertEquals(KvTierConfig.DEFAULT_MAX_BYTES_IN_FLIGHT, config.maxBytesInFlight());
        assertEquals(KvTierConfig.DEFAULT_DISK_EXTENT_BYTES, config.diskExtentBytes());
        assertTrue(config.copyThreads() >= 2 && config.copyThreads() <= 4, String.valueOf(config.copyThreads()));
        assertTrue(config.cudaLibrary().isEmpty());
        assertEquals(DiskTransferMode.AUTO, config.diskTransferMode());
        assertEquals(KvTierConfig.DEFAULT_BOUNCE_BUFFER_BYTES, config.bounceBufferBytes());
        assertEquals(KvTierConfig.DEFAULT_BOUNCE_BUFFER_PAIRS, config.bounceBufferPairs());
        assertEquals(KvTierConfig.DEFAULT_ROOM_BATCH_FRACTION, config.roomBatchFraction());
        assertEquals(Long.MAX_VALUE, config.diskBudgetBytes());
        assertFalse(config.diskBounded());
    }

    @Test
    void theCpuBudgetDefaultsToAQuarterOfPhysicalMemory() {
        long physical = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getTotalMemorySize();
        KvTierConfig config = KvTierConfig.builder().gpuBudgetBytes(1).build();
        assertEquals(physical / 4, config.cpuBudgetBytes(), 1);
        assertEquals(physical / 10, KvTierConfig.builder().gpuBudgetBytes(1).cpuBudgetShare(0.1).build().cpuBudgetBytes(), 1);
        assertEquals(5, KvTierConfig.builder().gpuBudgetBytes(1).cpuBudgetShare(0.1).cpuBudgetBytes(5).build()
                .cpuBudgetBytes(), "the last setter wins");
    }

    @Test
    void pageSizesAreMultiplesOf4096OrSmallPowersOfTwo() {
        for (int ok : new int[] {512, 1024, 2048, 4096, 12288, 64 << 10, 1 << 20}) {
            assertEquals(ok, budgets().pageSizeBytes(ok).build().pageSizeBytes());
        }
    }

    @Test
    void settingsFromAMapTakeUnitsSharesAndNames(@TempDir Path directory) {
        Map<String, String> settings = new HashMap<>();
        settings.put("kvtier.gpu.budget", "64GiB");
        settings.put("kvtier.cpu.budget", "1.5 GiB");
        settings.put("kvtier.disk.budget", "10%");
        settings.put("kvtier.disk.directory", directory.toString());
        settings.put("kvtier.page.size", "16KiB");
        settings.put("kvtier.policy", "least-recently-used");
        settings.put("kvtier.backend", "host");
        settings.put("kvtier.max.bytes.in.flight", "64MB");
        settings.put("kvtier.transfer.timeout", "500ms");
        settings.put("kvtier.disk.extent.size", "32MiB");
        settings.put("kvtier.copy.threads", "3");
        settings.put("kvtier.cuda.library", "/opt/cuda/libcudart.so");
        settings.put("kvtier.disk.transfer.mode", "STAGED");
        settings.put("kvtier.bounce.buffer.size", "4MiB");
        settings.put("kvtier.bounce.buffer.pairs", "3");
        settings.put("kvtier.room.batch.fraction", "1%");
        settings.put("kvtier.persistence.namespace", "model-a");
        settings.put("java.home", "/ignored: not a kvtier setting");
        KvTierConfig config = KvTierConfig.from(settings);
        assertEquals(64L << 30, config.gpuBudgetBytes());
        assertEquals(3L << 29, config.cpuBudgetBytes());
        long fileSystem = assertDoesNotThrow(() -> Files.getFileStore(directory).getTotalSpace());
        assertEquals(fileSystem / 10, config.diskBudgetBytes(), 1);
        assertTrue(config.diskBounded());
        assertEquals(directory, config.diskDirectory().orElseThrow());
        assertEquals(16 << 10, config.pageSizeBytes());
        assertEquals("least-recently-used", config.policy().name());
        assertEquals(Backend.HOST, config.backend());
        assertEquals(64_000_000, config.maxBytesInFlight());
        assertEquals(Duration.ofMillis(500), config.transferTimeout());
        assertEquals(32L << 20, config.diskExtentBytes());
        assertEquals(3, config.copyThreads());
        assertEquals(Path.of("/opt/cuda/libcudart.so"), config.cudaLibrary().orElseThrow());
        assertEquals(DiskTransferMode.STAGED, config.diskTransferMode());
        assertEquals(4L << 20, config.bounceBufferBytes());
        assertEquals(3, config.bounceBufferPairs());
        assertEquals(0.01, config.roomBatchFraction(), 1e-12);
        assertEquals("model-a", config.persistence().orElseThrow().namespace());
    }

    /** The README's configuration example, verbatim but for the directory. */
    @Test
    void theReadmeExampleReadsAsItSays(@TempDir Path kv) {
        KvTierConfig config = KvTierConfig.from(Map.of(
                "kvtier.gpu.budget", "8GiB",                 // required: only the runtime knows what its weights leave free
                "kvtier.cpu.budget", "25%",                  // of physical memory; this is the default
                "kvtier.disk.budget", "200GiB",              // or "10%" of the directory's file system; default unbounded
                "kvtier.disk.directory", kv.toString()));    // default: a temporary directory, deleted on close
        assertEquals(8L << 30, config.gpuBudgetBytes());
        assertEquals(KvTierConfig.builder().gpuBudgetBytes(1).build().cpuBudgetBytes(), config.cpuBudgetBytes());
        assertEquals(200L << 30, config.diskBudgetBytes());
        assertEquals(kv, config.diskDirectory().orElseThrow());
    }

    @Test
    void propertiesAndTheEnvironmentSpellTheSameSettings() {
        Properties properties = new Properties();
        properties.setProperty("kvtier.gpu.budget", "1GiB");
        properties.setProperty("kvtier.cpu.budget", "2GiB");
        properties.setProperty("kvtier.transfer.timeout", "PT2M");
        KvTierConfig fromProperties = KvTierConfig.from(properties);
        KvTierConfig fromEnvironment = KvTierConfig.fromEnvironment(Map.of("KVTIER_GPU_BUDGET", "1GiB",
                "KVTIER_CPU_BUDGET", "2GiB", "KVTIER_TRANSFER_TIMEOUT", "2m", "PATH", "/usr/bin",
                "KVTIER_CUDART", "/opt/libcudart.so", "KVTIER_SEED_DIR", "/seed"));
        for (KvTierConfig config : List.of(fromProperties, fromEnvironment)) {
            assertEquals(1L << 30, config.gpuBudgetBytes());
            assertEquals(2L << 30, config.cpuBudgetBytes());
            assertEquals(Duration.ofMinutes(2), config.transferTimeout());
        }
        KvTierConfig.Builder builder = KvTierConfig.builder().copyThreads(1);
        builder.apply(Map.of("kvtier.gpu.budget", "1MiB"));
        assertEquals(1, builder.build().copyThreads(), "settings not given keep what the builder holds");
    }

    @Test
    void aBadSettingIsRefusedNamingTheKeyAndTheValue() {
        Map<Map<String, String>, String> bad = Map.of(
                Map.of("kvtier.gpu.budget", "64XB"), "bad value for kvtier.gpu.budget: '64XB': unknown unit 'XB'",
                Map.of("kvtier.gpu.budget", "25%"), "bad value for kvtier.gpu.budget: '25%': a GPU budget must be a size",
                Map.of("kvtier.gpu.budget", "1", "kvtier.cpu.budget", "150%"),
                "bad value for kvtier.cpu.budget: '150%': cpuBudgetShare must be in (0, 1], was 1.5",
                Map.of("kvtier.gpu.budget", "1", "kvtier.page.size", "5000"),
                "bad value for kvtier.page.size: '5000': pageSizeBytes must be a multiple of 4096",
                Map.of("kvtier.gpu.budget", "1", "kvtier.backend", "gpu"),
                "bad value for kvtier.backend: 'gpu': expected one of auto, cuda, host",
                Map.of("kvtier.gpu.budget", "1", "kvtier.policy", "lru"),
                "bad value for kvtier.policy: 'lru': no built-in demotion policy is named \"lru\"",
                Map.of("kvtier.gpu.budget", "1", "kvtier.transfer.timeout", "30"),
                "bad value for kvtier.transfer.timeout: '30': expected a duration such as 30s",
                Map.of("kvtier.gpu.budget", "1", "kvtier.copy.threads", "two"),
                "bad value for kvtier.copy.threads: 'two': expected an integer",
                Map.of("kvtier.gpu.budgte", "1"), "unknown setting kvtier.gpu.budgte (did you mean kvtier.gpu.budget?)",
                Map.of("kvtier.cpu.budget", "1GiB"), "gpuBudgetBytes must be set");
        bad.forEach((settings, message) -> {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KvTierConfig.from(settings),
                    settings::toString);
            assertTrue(e.getMessage().startsWith(message), () -> settings + ": " + e.getMessage());
        });
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KvTierConfig.fromEnvironment(Map.of("KVTIER_GPU_BUDGE", "1")));
        assertTrue(e.getMessage().startsWith("unknown environment variable KVTIER_GPU_BUDGE (did you mean"
                + " KVTIER_GPU_BUDGET?"), e.getMessage());
        KvTierConfig.Builder builder = KvTierConfig.builder().gpuBudgetBytes(7);
        assertThrows(IllegalArgumentException.class,
                () -> builder.apply(Map.of("kvtier.gpu.budget", "1GiB", "kvtier.copy.threads", "0")));
        assertEquals(7, builder.build().gpuBudgetBytes(), "a bad setting applies none of them");
    }

    @Test
    void everySetterKeepsWhatItIsGiven() {
        KvTierConfig config = budgets().diskDirectory(Path.of("/tmp/kv")).pageSizeBytes(4096)
                .policy(DemotionPolicy.leastRecentlyUsed()).backend(Backend.HOST).maxBytesInFlight(5)
                .diskExtentBytes(7).copyThreads(3).cudaLibrary(Path.of("/opt/libcudart.so"))
                .diskTransferMode(DiskTransferMode.STAGED).bounceBufferBytes(1 << 16).bounceBufferPairs(3)
                .roomBatchFraction(0.25).build();
        assertEquals(Path.of("/tmp/kv"), config.diskDirectory().orElseThrow());
        assertEquals(4096, config.pageSizeBytes());
        assertEquals(DemotionPolicy.leastRecentlyUsed().name(), config.policy().name());
        assertEquals(Backend.HOST, config.backend());
        assertEquals(5, config.maxBytesInFlight());
        assertEquals(7, config.diskExtentBytes());
        assertEquals(3, config.copyThreads());
        assertEquals(Path.of("/opt/libcudart.so"), config.cudaLibrary().orElseThrow());
        assertEquals(DiskTransferMode.STAGED, config.diskTransferMode());
        assertEquals(1 << 16, config.bounceBufferBytes());
        assertEquals(3, config.bounceBufferPairs());
        assertEquals(0.25, config.roomBatchFraction());
        assertTrue(config.toString().contains("bounceBuffers=3x2x65536"), config.toString());
        assertTrue(config.toString().contains("roomBatchFraction=0.25"), config.toString());
        assertEquals(0.0, budgets().roomBatchFraction(0).build().roomBatchFraction());
        assertEquals(KvTierConfig.MAX_ROOM_BATCH_FRACTION,
                budgets().roomBatchFraction(KvTierConfig.MAX_ROOM_BATCH_FRACTION).build().roomBatchFraction());
    }

    @Test
    void aBadValueIsRefusedNamingTheSettingAndTheValue() {
        Map<String, Executable> bad = Map.ofEntries(
                Map.entry("gpuBudgetBytes must be >= 0, was -1", () -> KvTierConfig.builder().gpuBudgetBytes(-1)),
                Map.entry("cpuBudgetBytes must be >= 0, was -2", () -> KvTierConfig.builder().cpuBudgetBytes(-2)),
                Map.entry("diskDirectory must not be null", () -> KvTierConfig.builder().diskDirectory(null)),
                Map.entry("pageSizeBytes must be a multiple of 4096 or a power of two from 512 to 2048, was 0",
                        () -> KvTierConfig.builder().pageSizeBytes(0)),
                Map.entry("pageSizeBytes must be a multiple of 4096 or a power of two from 512 to 2048, was 5000"
                        + " (nearest: 4096 or 8192)", () -> KvTierConfig.builder().pageSizeBytes(5000)),
                Map.entry("pageSizeBytes must be a multiple of 4096 or a power of two from 512 to 2048, was 256",
                        () -> KvTierConfig.builder().pageSizeBytes(256)),
                Map.entry("pageSizeBytes must be a multiple of 4096 or a power of two from 512 to 2048, was 3000",
                        () -> KvTierConfig.builder().pageSizeBytes(3000)),
                Map.entry("diskBudgetBytes must be > 0, was 0", () -> KvTierConfig.builder().diskBudgetBytes(0)),
                Map.entry("cpuBudgetShare must be in (0, 1], was 1.5", () -> KvTierConfig.builder().cpuBudgetShare(1.5)),
                Map.entry("diskBudgetShare must be in (0, 1], was 0.0", () -> KvTierConfig.builder().diskBudgetShare(0)),
                Map.entry("settings must not be null", () -> KvTierConfig.builder().apply(null)),
                Map.entry("policy must not be null", () -> KvTierConfig.builder().policy(null)),
                Map.entry("backend must not be null", () -> KvTierConfig.builder().backend(null)),
                Map.entry("maxBytesInFlight must be > 0, was 0", () -> KvTierConfig.builder().maxBytesInFlight(0)),
                Map.entry("diskExtentBytes must be > 0, was -5", () -> KvTierConfig.builder().diskExtentBytes(-5)),
                Map.entry("copyThreads must be >= 1, was 0", () -> KvTierConfig.builder().copyThreads(0)),
                Map.entry("cudaLibrary must not be null", () -> KvTierConfig.builder().cudaLibrary(null)),
                Map.entry("diskTransferMode must not be null", () -> KvTierConfig.builder().diskTransferMode(null)),
                Map.entry("bounceBufferBytes must be > 0, was 0", () -> KvTierConfig.builder().bounceBufferBytes(0)),
                Map.entry("bounceBufferPairs must be >= 1, was 0", () -> KvTierConfig.builder().bounceBufferPairs(0)),
                Map.entry("roomBatchFraction must be in [0, 0.5], was -0.1", () -> KvTierConfig.builder().roomBatchFraction(-0.1)),
                Map.entry("roomBatchFraction must be in [0, 0.5], was 0.6", () -> KvTierConfig.builder().roomBatchFraction(0.6)),
                Map.entry("roomBatchFraction must be in [0, 0.5], was NaN", () -> KvTierConfig.builder().roomBatchFraction(Double.NaN)),
                Map.entry("gpuBudgetBytes must be set", () -> KvTierConfig.builder().cpuBudgetBytes(1).build()));
        bad.forEach((message, call) ->
                assertEquals(message, assertThrows(IllegalArgumentException.class, call, message).getMessage()));
    }
}
