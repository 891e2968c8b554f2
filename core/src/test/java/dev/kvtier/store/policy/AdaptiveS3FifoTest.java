package dev.kvtier.store.policy;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link DemotionPolicy#adaptiveS3Fifo()}: the retention naming its GPU tier switches to, and the miniature
 * simulations ({@link RetentionShadows}) that decide when.
 */
class AdaptiveS3FifoTest {
    private static final long SIZE = 10;

    /** A segment alone in its chain (start 0 continues nothing, so it never waits to be judged a chain tail). */
    private static SegmentMeta seg(String key) {
        return SegmentMeta.of(key, PositionRange.of(0, 1), SIZE);
    }

    @Test
    void retentionNamesStaleSegmentsFirstThenTheNewestArrivalsThenTheUsedOnes() {
        // Factor 1: a segment is stale once unused for as many accesses as the tier holds segments.
        TieredStore store = new TieredStore(1_000, 1_000, S3FifoPolicy.pinnedRetention(1));
        for (String key : List.of("a", "b", "c", "d")) {
            assertTrue(store.register(seg(key), Tier.GPU));
        }
        assertEquals(List.of("d"), store.candidatesForDemotion(Tier.GPU, SIZE), "nothing stale: the newest first");
        assertEquals(List.of("d", "c", "b", "a"), store.candidatesForDemotion(Tier.GPU, 4 * SIZE));

        assertTrue(store.touch("c"));
        assertTrue(store.register(seg("e"), Tier.GPU));
        // 6 accesses, 5 segments: a (last used at 1) is stale; c was used, so it moves to main and goes last.
        assertEquals(List.of("a"), store.candidatesForDemotion(Tier.GPU, SIZE));
        assertEquals(List.of("a", "e", "d", "b", "c"), store.candidatesForDemotion(Tier.GPU, 5 * SIZE));
    }

    @Test
    void retentionNamesHeldSegmentsLast() {
        TieredStore store = new TieredStore(1_000, 1_000, S3FifoPolicy.pinnedRetention(1));
        for (String key : List.of("a", "b", "c")) {
            assertTrue(store.register(seg(key), Tier.GPU));
        }
        assertTrue(store.hold("c"));
        assertEquals(List.of("b"), store.candidatesForDemotion(Tier.GPU, SIZE));
        assertEquals(List.of("b", "a", "c"), store.candidatesForDemotion(Tier.GPU, 3 * SIZE), "held: named last");
        assertTrue(store.release("c"));
        assertEquals(List.of("c"), store.candidatesForDemotion(Tier.GPU, SIZE), "released: in its old place");
    }

    @Test
    void retentionIsOnlyForTheGpuTier() {
        TieredStore pinned = new TieredStore(1_000, 1_000, S3FifoPolicy.pinnedRetention(1));
        TieredStore plain = new TieredStore(1_000, 1_000, DemotionPolicy.chainAwareS3Fifo());
        for (TieredStore store : List.of(pinned, plain)) {
            for (String key : List.of("a", "b", "c")) {
                assertTrue(store.register(seg(key), Tier.CPU));
            }
        }
        assertEquals(plain.candidatesForDemotion(Tier.CPU, 3 * SIZE), pinned.candidatesForDemotion(Tier.CPU, 3 * SIZE));
        assertEquals(List.of("a", "b", "c"), pinned.candidatesForDemotion(Tier.CPU, 3 * SIZE));
    }

    @Test
    void aPinnedRetentionFactorMustBePositive() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> S3FifoPolicy.pinnedRetention(0));
        assertTrue(e.getMessage().contains("0.0"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new RetentionShadows(0));
    }

    /**
     * A loop over more keys than the tier holds (each key back only after all the others: a recency policy never
     * hits) makes the simulations choose retention; a stream of one-off keys with a hot set each reused only after
     * longer than any retention time (S3-FIFO keeps them in main while the stream passes through its small queue,
     * retention names them as stale) brings S3-FIFO back.
     */
    @Test
    void theSimulationsChooseRetentionForALoopLargerThanTheTierAndS3FifoForAHotSetReusedRarely() {
        RetentionShadows shadows = new RetentionShadows(100 * SIZE);
        assertEquals(0, shadows.retentionFactor(), "S3-FIFO until shown otherwise");
        for (int round = 0; round < 40; round++) {
            for (int key = 0; key < 150; key++) {
                shadows.reference(hash(key), SIZE);
            }
        }
        assertTrue(shadows.retentionFactor() > 0, shadows.toString());

        for (int t = 1_000_000; t < 1_200_000; t++) {
            shadows.reference(hash(t), SIZE);
            if (t % 20 == 0) {
                int hot = t / 20 % 50; // each of 50 hot keys every ~1,050 references: past 6 x the tier's 100
                shadows.reference(hash(hot), SIZE);
                shadows.reference(hash(hot), SIZE);
            }
        }
        assertEquals(0, shadows.retentionFactor(), shadows.toString());
    }

    @Test
    void theSimulationsHoldBoundedKeysWhateverTheTierSize() {
        RetentionShadows shadows = new RetentionShadows(1L << 40);
        for (int key = 0; key < 200_000; key++) {
            shadows.reference(hash(key), SIZE);
            assertTrue(shadows.residents() <= RetentionShadows.MAX_RESIDENTS + 1, shadows.toString());
        }
        assertTrue(shadows.residents() > RetentionShadows.MAX_RESIDENTS / 4, "still simulating: " + shadows);
    }

    /**
     * The simulations share one table of keys: a key leaves it when the last simulation holding it evicts it,
     * and not before. A stream of one-off keys through a tier of 100 (every simulation evicts on every miss)
     * keeps the table at most the simulations' residents together; a key still held is found again (a hit
     * adds no resident).
     */
    @Test
    void theSharedKeyTableKeepsAKeyWhileAnySimulationHoldsIt() {
        RetentionShadows shadows = new RetentionShadows(100 * SIZE);
        for (int key = 0; key < 50_000; key++) {
            shadows.reference(hash(key), SIZE);
            assertTrue(shadows.distinctKeys() >= shadows.residents(), shadows.toString());
            assertTrue(shadows.distinctKeys() <= (1 + RetentionShadows.FACTORS.length) * shadows.residents(),
                    shadows.distinctKeys() + " keys for " + shadows.residents() + " residents: " + shadows);
        }
        int before = shadows.distinctKeys();
        shadows.reference(hash(49_999), SIZE); // just referenced: every simulation holds it
        assertEquals(before, shadows.distinctKeys(), shadows.toString());
    }

    /**
     * A key's id (its place in the simulations' node arrays) is given back when no simulation holds the key and
     * reused by the next new one: a stream of one-off keys through a tier of 100 needs as many ids as keys held at
     * once (plus the one just arriving, added before the simulations make room), not one per key ever seen.
     */
    @Test
    void theIdsOfDroppedKeysAreReused() {
        RetentionShadows shadows = new RetentionShadows(100 * SIZE);
        int mostHeld = 0;
        for (int key = 0; key < 50_000; key++) {
            shadows.reference(hash(key), SIZE);
            mostHeld = Math.max(mostHeld, shadows.distinctKeys());
        }
        assertTrue(mostHeld <= (1 + RetentionShadows.FACTORS.length) * 100, mostHeld + " keys held: " + shadows);
        assertTrue(shadows.keyIds() <= mostHeld + 1, shadows.keyIds() + " ids for at most " + mostHeld + " keys held");
    }

    /**
     * The simulations index keys in an open-addressing table whose home slot is the top bits of the hash times
     * the golden-ratio constant: keys chosen so that product is k or -1 - k all start probing at the first or the
     * last slot (one long probe run, wrapping), the case where removing a key (the resampling when the
     * simulations pass {@link RetentionShadows#MAX_RESIDENTS}) must shift the others back for them to be found
     * again. A key not found would be inserted a second time, so re-referencing the survivors would add residents.
     */
    @Test
    void keysSharingAHomeSlotAreStillFoundAfterOthersAreDropped() {
        int inverse = 0x9E3779B9; // its inverse modulo 2^32 by Newton's iteration (odd, so one exists)
        for (int i = 0; i < 5; i++) {
            inverse *= 2 - 0x9E3779B9 * inverse;
        }
        int[] keys = new int[600];
        for (int k = 0; k < keys.length; k++) {
            keys[k] = (k % 2 == 0 ? k : -1 - k) * inverse;
        }
        RetentionShadows shadows = new RetentionShadows(1L << 40); // room for every sampled key: no evictions
        for (int key : keys) {
            shadows.reference(key, SIZE);
        }
        int residents = shadows.residents();
        assertTrue(residents > RetentionShadows.MAX_RESIDENTS / 8 && residents <= RetentionShadows.MAX_RESIDENTS,
                "resampled once or more, still simulating: " + shadows + ", " + residents + " residents");
        for (int round = 0; round < 3; round++) {
            for (int key : keys) {
                shadows.reference(key, SIZE);
                assertEquals(residents, shadows.residents(), "key " + key + " in round " + round + ": " + shadows);
            }
        }
    }

    /** The loop above played through stores: the adaptive policy's GPU keeps a stable part of it, S3-FIFO's none. */
    @Test
    void onALoopLargerThanTheGpuTheAdaptivePolicyHitsWhereS3FifoDoesNot() {
        long adaptive = loopHits(DemotionPolicy.adaptiveS3Fifo());
        long s3Fifo = loopHits(DemotionPolicy.chainAwareS3Fifo());
        assertTrue(adaptive > 1.5 * s3Fifo, "adaptive " + adaptive + " vs chain-s3-fifo " + s3Fifo);
    }

    /** GPU hits of 40 passes over 150 keys with a GPU of 100 and room for all on CPU. */
    private static long loopHits(DemotionPolicy policy) {
        TieredStore store = new TieredStore(100 * SIZE, 1_000 * SIZE, policy);
        long hits = 0;
        for (int round = 0; round < 40; round++) {
            for (int k = 0; k < 150; k++) {
                String key = "k" + k;
                Tier tier = store.get(key).map(SegmentMeta::tier).orElse(null);
                if (tier == Tier.GPU) {
                    hits++;
                    assertTrue(store.touch(key));
                    continue;
                }
                if (store.gpuFree() < SIZE) {
                    String victim = store.candidatesForDemotion(Tier.GPU, SIZE).getFirst();
                    store.demote(victim, Tier.CPU).orElseThrow();
                }
                if (tier == null) {
                    assertTrue(store.register(seg(key), Tier.GPU));
                } else {
                    store.promote(key, Tier.GPU).orElseThrow();
                }
            }
        }
        return hits;
    }

    private static int hash(int key) {
        int h = ("k" + key).hashCode() * 0x9E3779B9;
        return h ^ (h >>> 16);
    }
}
