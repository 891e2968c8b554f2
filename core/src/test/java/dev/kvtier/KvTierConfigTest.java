package dev.kvtier;

import dev.kvtier.exec.cuda.CudaExecutionBackend;
import dev.kvtier.store.DemotionPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
                Map.entry("pageSizeBytes must be > 0, was 0", () -> KvTierConfig.builder().pageSizeBytes(0)),
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
                Map.entry("gpuBudgetBytes must be set", () -> KvTierConfig.builder().cpuBudgetBytes(1).build()),
                Map.entry("cpuBudgetBytes must be set", () -> KvTierConfig.builder().gpuBudgetBytes(1).build()));
        bad.forEach((message, call) ->
                assertEquals(message, assertThrows(IllegalArgumentException.class, call, message).getMessage()));
    }
}
