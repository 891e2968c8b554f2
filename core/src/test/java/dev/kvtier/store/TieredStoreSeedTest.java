package dev.kvtier.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Rust seed's tests (tiered_storage.rs), one twin each, plus the module's doc example. Every
 * store here uses the seed's policy ({@link DemotionPolicy#leastAccessedFirst()}) explicitly: the
 * library's default is no longer the seed's.
 */
class TieredStoreSeedTest {

    /** The seed's store: its policy, these budgets. */
    private static TieredStore seedStore(long gpuBudget, long cpuBudget) {
        return new TieredStore(gpuBudget, cpuBudget, DemotionPolicy.leastAccessedFirst());
    }

    private static SegmentMeta seg(String key, long start, long end, long size) {
        return SegmentMeta.of(key, PositionRange.of(start, end), size);
    }

    @Test
    void moduleDocExample() {
        TieredStore store = seedStore(1_000_000, 8_000_000); // 1 MB GPU, 8 MB CPU

        SegmentMeta meta = seg("turn-1", 0, 512, 200_000);
        assertTrue(store.register(meta, Tier.GPU));
        assertEquals(200_000, store.gpuUsed());

        TierTransfer transfer = store.demote("turn-1", Tier.CPU).orElseThrow();
        assertEquals(Tier.GPU, transfer.from());
        assertEquals(Tier.CPU, transfer.to());
        assertEquals(0, store.gpuUsed());
        assertEquals(200_000, store.cpuUsed());

        store.promote("turn-1", Tier.GPU).orElseThrow();
        assertEquals(200_000, store.gpuUsed());
    }

    @Test
    void registerAndLookup() {
        TieredStore store = seedStore(1_000_000, 8_000_000);
        assertTrue(store.register(seg("s1", 0, 256, 100_000), Tier.GPU));

        SegmentMeta got = store.get("s1").orElseThrow();
        assertEquals(Tier.GPU, got.tier());
        assertEquals(100_000, got.sizeBytes());
        assertEquals(PositionRange.of(0, 256), got.positions());
        assertEquals(100_000, store.gpuUsed());
    }

    @Test
    void duplicateKeyRejected() {
        TieredStore store = seedStore(1_000_000, 8_000_000);
        store.register(seg("s1", 0, 10, 100), Tier.GPU);
        assertFalse(store.register(seg("s1", 10, 20, 200), Tier.GPU));
    }

    @Test
    void budgetOverflowRejected() {
        TieredStore store = seedStore(1000, 5000);
        assertFalse(store.register(seg("big", 0, 100, 2000), Tier.GPU));
        assertEquals(0, store.gpuUsed());
    }

    @Test
    void demoteGpuToCpu() {
        TieredStore store = seedStore(1_000_000, 8_000_000);
        store.register(seg("s1", 0, 512, 200_000), Tier.GPU);

        TierTransfer transfer = store.demote("s1", Tier.CPU).orElseThrow();
        assertEquals(Tier.GPU, transfer.from());
        assertEquals(Tier.CPU, transfer.to());
        assertEquals(PositionRange.of(0, 512), transfer.positions());
        assertEquals(0, store.gpuUsed());
        assertEquals(200_000, store.cpuUsed());
        assertEquals(Tier.CPU, store.get("s1").orElseThrow().tier());
    }

    @Test
    void demoteCpuToDisk() {
        TieredStore store = seedStore(1_000_000, 8_000_000);
        store.register(seg("s1", 0, 100, 50_000), Tier.CPU);

        TierTransfer transfer = store.demote("s1", Tier.DISK).orElseThrow();
        assertEquals(Tier.CPU, transfer.from());
        assertEquals(Tier.DISK, transfer.to());
        assertEquals(0, store.cpuUsed());
        assertEquals(50_000, store.diskUsed());
    }

    @Test
    void demoteToSameTierFails() {
        TieredStore store = seedStore(1_000_000, 8_000_000);
        store.register(seg("s1", 0, 100, 50_000), Tier.GPU);
        assertTrue(store.demote("s1", Tier.GPU).isEmpty());
    }

    @Test
    void demoteToFasterTierFails() {
        TieredStore store = seedStore(1_000_000, 8_000_000);
        store.register(seg("s1", 0, 100, 50_000), Tier.CPU);
        assertTrue(store.demote("s1", Tier.GPU).isEmpty());
    }

    @Test
    void promoteCpuToGpu() {
        TieredStore store = seedStore(1_000_000, 8_000_000);
        store.register(seg("s1", 100, 200, 80_000), Tier.CPU);

        TierTransfer transfer = store.promote("s1", Tier.GPU).orElseThrow();
        assertEquals(Tier.CPU, transfer.from());
        assertEquals(Tier.GPU, transfer.to());
        assertEquals(0, store.cpuUsed());
        assertEquals(80_000, store.gpuUsed());
        assertEquals(1, store.get("s1").orElseThrow().accessCount());
    }

    @Test
    void promoteIncrementsAccessCount() {
        TieredStore store = seedStore(1_000_000, 8_000_000);
        store.register(seg("s1", 0, 10, 1000), Tier.DISK);

        store.promote("s1", Tier.CPU);
        assertEquals(1, store.get("s1").orElseThrow().accessCount());

        store.promote("s1", Tier.GPU);
        assertEquals(2, store.get("s1").orElseThrow().accessCount());
    }

    @Test
    void promoteToSlowerFails() {
        TieredStore store = seedStore(1_000_000, 8_000_000);
        store.register(seg("s1", 0, 10, 1000), Tier.GPU);
        assertTrue(store.promote("s1", Tier.CPU).isEmpty());
    }

    @Test
    void removeFreesBudget() {
        TieredStore store = seedStore(1_000_000, 8_000_000);
        store.register(seg("s1", 0, 100, 50_000), Tier.GPU);
        assertEquals(50_000, store.gpuUsed());

        SegmentMeta removed = store.remove("s1").orElseThrow();
        assertEquals("s1", removed.key());
        assertEquals(0, store.gpuUsed());
        assertEquals(0, store.numSegments());
    }

    @Test
    void candidatesForDemotionByAccessCount() {
        TieredStore store = seedStore(1_000_000, 8_000_000);
        store.register(seg("hot", 0, 100, 30_000), Tier.GPU);
        store.register(seg("cold", 100, 200, 30_000), Tier.GPU);
        store.register(seg("warm", 200, 300, 30_000), Tier.GPU);

        store.touch("hot");
        store.touch("hot");
        store.touch("hot");
        store.touch("warm");

        List<String> candidates = store.candidatesForDemotion(Tier.GPU, 50_000);
        // "cold" (0 accesses) first, then "warm" (1 access); 60 000 >= 50 000 so "hot" is not needed
        assertEquals(List.of("cold", "warm"), candidates);
    }

    @Test
    void diskIsUnbounded() {
        TieredStore store = seedStore(100, 100);
        assertTrue(store.register(seg("huge", 0, 10_000, 999_999_999), Tier.DISK));
        assertEquals(999_999_999, store.diskUsed());
    }

    @Test
    void positionRangePreservedAcrossTiers() {
        TieredStore store = seedStore(1_000_000, 8_000_000);
        store.register(seg("s1", 42, 99, 10_000), Tier.GPU);

        store.demote("s1", Tier.CPU);
        assertEquals(PositionRange.of(42, 99), store.get("s1").orElseThrow().positions());

        store.demote("s1", Tier.DISK);
        assertEquals(PositionRange.of(42, 99), store.get("s1").orElseThrow().positions());

        store.promote("s1", Tier.CPU);
        assertEquals(PositionRange.of(42, 99), store.get("s1").orElseThrow().positions());
    }

    @Test
    void promoteBlockedByBudget() {
        TieredStore store = seedStore(100, 8_000_000);
        store.register(seg("s1", 0, 10, 200), Tier.CPU);

        // GPU budget is 100, the segment is 200: no promotion
        assertTrue(store.promote("s1", Tier.GPU).isEmpty());
        assertEquals(Tier.CPU, store.get("s1").orElseThrow().tier());
    }

    @Test
    void tierOrdering() {
        assertTrue(Tier.GPU.isFasterThan(Tier.CPU));
        assertTrue(Tier.CPU.isFasterThan(Tier.DISK));
        assertTrue(Tier.GPU.isFasterThan(Tier.DISK));
        assertFalse(Tier.DISK.isFasterThan(Tier.GPU));
        assertFalse(Tier.GPU.isFasterThan(Tier.GPU));
    }
}
