package dev.kvtier.bench.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The store benchmarks' key sequence reaches the population it is named after (not a cache-sized subset of it). */
class StoreWorkloadTest {
    @Test
    void sequenceIsAPowerOfTwoOfAtLeastTwiceThePopulation() {
        assertEquals(StoreWorkload.MIN_SEQUENCE, StoreWorkload.sequenceLength(1_000));
        assertEquals(StoreWorkload.MIN_SEQUENCE, StoreWorkload.sequenceLength(StoreWorkload.MIN_SEQUENCE / 2));
        assertEquals(2 * StoreWorkload.MIN_SEQUENCE, StoreWorkload.sequenceLength(StoreWorkload.MIN_SEQUENCE / 2 + 1));
        assertEquals(1 << 18, StoreWorkload.sequenceLength(100_000));
        assertEquals(1 << 21, StoreWorkload.sequenceLength(1_000_000));
    }

    @Test
    void oneCycleOfTheSequenceReachesMostKeys() {
        int segments = 100_000;
        StoreWorkload workload = new StoreWorkload(segments, "random");
        Set<String> reached = new HashSet<>();
        for (int i = 0; i < StoreWorkload.sequenceLength(segments); i++) {
            reached.add(workload.nextKey());
        }
        // 2^18 uniform draws from 10^5 keys reach 1 - e^-2.62, about 93%; a fixed 65,536 draws reached 48%.
        assertTrue(reached.size() > 0.9 * segments, "reached " + reached.size() + " of " + segments + " keys");
    }
}
