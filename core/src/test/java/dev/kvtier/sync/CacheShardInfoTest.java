package dev.kvtier.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class CacheShardInfoTest {

    static void assertRejected(Executable call, String... fragments) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        for (String fragment : fragments) {
            assertTrue(e.getMessage().contains(fragment), () -> "message '" + e.getMessage() + "' lacks '" + fragment + "'");
        }
    }

    @Test
    void accessorsReturnTheShape() {
        CacheShardInfo shard = new CacheShardInfo(2, 3, 10);
        assertEquals(2, shard.rank());
        assertEquals(3, shard.worldSize());
        assertEquals(10, shard.numLayers());
        assertEquals(List.of(7, 8, 9), shard.layers());
    }

    @Test
    void moreRanksThanLayersLeavesTheLastRanksEmpty() {
        assertEquals(List.of(0), new CacheShardInfo(0, 4, 2).layers());
        assertEquals(List.of(1), new CacheShardInfo(1, 4, 2).layers());
        assertEquals(List.of(), new CacheShardInfo(2, 4, 2).layers());
        assertEquals(List.of(), new CacheShardInfo(3, 4, 2).layers());
    }

    @Test
    void zeroLayersIsAnEmptyShard() {
        CacheShardInfo shard = new CacheShardInfo(0, 1, 0);
        assertEquals(List.of(), shard.layers());
        assertRejected(() -> shard.ownsLayer(0), "layer", "0");
    }

    @Test
    void ownsLayerAnswersForEveryLayer() {
        CacheShardInfo shard = new CacheShardInfo(1, 3, 10); // layers 4, 5, 6
        for (int layer = 0; layer < 10; layer++) {
            assertEquals(layer >= 4 && layer <= 6, shard.ownsLayer(layer), "layer " + layer);
        }
    }

    @Test
    void layersAreUnmodifiable() {
        CacheShardInfo even = new CacheShardInfo(0, 2, 4);
        CacheShardInfo explicit = CacheShardInfo.withLayers(0, 2, 4, new ArrayList<>(List.of(3, 1)));
        assertThrows(UnsupportedOperationException.class, () -> even.layers().add(9));
        assertThrows(UnsupportedOperationException.class, () -> explicit.layers().set(0, 0));
    }

    @Test
    void withLayersKeepsTheGivenOrderAndCopiesTheList() {
        List<Integer> given = new ArrayList<>(List.of(5, 0, 3));
        CacheShardInfo shard = CacheShardInfo.withLayers(1, 2, 6, given);
        given.set(0, 1);
        given.add(2);
        assertEquals(List.of(5, 0, 3), shard.layers());
        assertTrue(shard.ownsLayer(5));
        assertTrue(shard.ownsLayer(0));
        assertTrue(shard.ownsLayer(3));
        assertFalse(shard.ownsLayer(1));
        assertFalse(shard.ownsLayer(2));
        assertEquals(1, shard.rank());
        assertEquals(2, shard.worldSize());
        assertEquals(6, shard.numLayers());
    }

    @Test
    void withLayersMayBeEmpty() {
        CacheShardInfo shard = CacheShardInfo.withLayers(0, 1, 3, List.of());
        assertEquals(List.of(), shard.layers());
        assertFalse(shard.ownsLayer(0));
    }

    @Test
    void equalShardsAreEqual() {
        assertEquals(new CacheShardInfo(1, 3, 10), CacheShardInfo.withLayers(1, 3, 10, List.of(4, 5, 6)));
        assertEquals(new CacheShardInfo(1, 3, 10).hashCode(), CacheShardInfo.withLayers(1, 3, 10, List.of(4, 5, 6)).hashCode());
        assertNotEquals(new CacheShardInfo(1, 3, 10), CacheShardInfo.withLayers(1, 3, 10, List.of(6, 5, 4)));
        assertNotEquals(new CacheShardInfo(1, 3, 10), new CacheShardInfo(1, 3, 11));
        assertEquals("CacheShardInfo[rank=1, worldSize=3, numLayers=10, layers=[4, 5, 6]]",
                new CacheShardInfo(1, 3, 10).toString());
    }

    @Test
    void rejectsNonPositiveWorldSize() {
        assertRejected(() -> new CacheShardInfo(0, 0, 4), "worldSize", "0");
        assertRejected(() -> new CacheShardInfo(0, -2, 4), "worldSize", "-2");
        assertRejected(() -> CacheShardInfo.withLayers(0, 0, 4, List.of()), "worldSize", "0");
    }

    @Test
    void rejectsRankOutsideWorld() {
        assertRejected(() -> new CacheShardInfo(4, 4, 32), "rank", "4");
        assertRejected(() -> new CacheShardInfo(-1, 4, 32), "rank", "-1");
        assertRejected(() -> CacheShardInfo.withLayers(7, 4, 32, List.of()), "rank", "7");
    }

    @Test
    void rejectsNegativeLayerCount() {
        assertRejected(() -> new CacheShardInfo(0, 4, -3), "numLayers", "-3");
        assertRejected(() -> CacheShardInfo.withLayers(0, 4, -1, List.of()), "numLayers", "-1");
    }

    @Test
    void withLayersRejectsLayersOutOfRange() {
        assertRejected(() -> CacheShardInfo.withLayers(0, 2, 4, List.of(0, 4)), "layers[1]", "4");
        assertRejected(() -> CacheShardInfo.withLayers(0, 2, 4, List.of(-1)), "layers[0]", "-1");
    }

    @Test
    void withLayersRejectsRepeatedLayers() {
        assertRejected(() -> CacheShardInfo.withLayers(0, 2, 4, List.of(1, 2, 1)), "layers[2]", "1", "repeated");
    }

    @Test
    void withLayersRejectsNull() {
        assertRejected(() -> CacheShardInfo.withLayers(0, 2, 4, null), "layers", "null");
        assertRejected(() -> CacheShardInfo.withLayers(0, 2, 4, Arrays.asList(0, null)), "layers[1]", "null");
    }

    @Test
    void ownsLayerRejectsLayersTheModelDoesNotHave() {
        CacheShardInfo shard = new CacheShardInfo(0, 2, 8);
        assertRejected(() -> shard.ownsLayer(8), "layer", "8");
        assertRejected(() -> shard.ownsLayer(-1), "layer", "-1");
    }
}
