package dev.kvtier.bench.trace;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

class BeladyTest {

    @Test
    void theTextbookSequence() {
        // 1 2 3 4 1 2 5 1 2 3 4 5 with 3 frames: the optimum faults 7 times (5 hits), with 4 frames 6 (6 hits).
        int[] refs = {1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5};
        assertEquals(5, Belady.hits(refs, 3));
        assertEquals(6, Belady.hits(refs, 4));
        assertEquals(7, Belady.hits(refs, 5), "everything fits: only the 5 first uses miss");
        assertEquals(0, Belady.hits(refs, 0));
        assertArrayEquals(new long[] {5, 6}, Belady.hitsForEach(refs, 3, 4));
    }

    @Test
    void aLoopOneLargerThanTheCacheKeepsOneBlockWhereLruKeepsNone() {
        // a b c a b c, 2 blocks: miss a, miss b; c evicts b (next use 4 is farther than a's 3); a hits;
        // b evicts a (never used again); c hits. LRU misses all six.
        int[] refs = {0, 1, 2, 0, 1, 2};
        assertEquals(2, Belady.hits(refs, 2));
        assertEquals(0, ReferenceLru.hits(refs, 2));
    }

    @Test
    void aBlockNeverUsedAgainGoesFirst() {
        // 7 is never used again after position 1: on the miss of 9 it goes, and 8 and 5 stay.
        int[] refs = {5, 7, 8, 9, 8, 5};
        assertEquals(2, Belady.hits(refs, 3));
        assertArrayEquals(new int[] {5, Integer.MAX_VALUE, 4, Integer.MAX_VALUE, Integer.MAX_VALUE, Integer.MAX_VALUE},
                Belady.nextUses(refs));
    }

    @Test
    void badCapacityIsNamed() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Belady.hits(new int[] {1}, -1))
                .getMessage().contains("got -1"));
        assertArrayEquals(new int[] {0, 1, 0, 2}, Belady.dense(new long[] {90, 1L << 40, 90, 3}));
    }

    @Property(tries = 300)
    void neverBelowLru(@ForAll("sequences") int[] refs, @ForAll @IntRange(min = 1, max = 12) int capacity) {
        long optimum = Belady.hits(refs, capacity);
        long lru = ReferenceLru.hits(refs, capacity);
        assertTrue(optimum >= lru, "optimum " + optimum + " < LRU " + lru);
        assertTrue(optimum <= refs.length - Belady.distinct(refs), "at most every non-first reference hits");
    }

    @Property(tries = 200)
    void equalToAnExhaustiveSearchOnTinySequences(@ForAll("tiny") int[] refs, @ForAll @IntRange(min = 1, max = 3) int capacity) {
        assertEquals(bestHits(refs, 0, new HashSet<>(), capacity), Belady.hits(refs, capacity));
    }

    @Provide
    Arbitrary<int[]> sequences() {
        return Arbitraries.integers().between(0, 20).array(int[].class).ofMinSize(0).ofMaxSize(300);
    }

    @Provide
    Arbitrary<int[]> tiny() {
        return Arbitraries.integers().between(0, 4).array(int[].class).ofMinSize(0).ofMaxSize(10);
    }

    /** Every choice of victim on every miss with a full cache (demand admission): the true optimum. */
    private static long bestHits(int[] refs, int i, Set<Integer> cached, int capacity) {
        if (i == refs.length) {
            return 0;
        }
        int block = refs[i];
        if (cached.contains(block)) {
            return 1 + bestHits(refs, i + 1, cached, capacity);
        }
        if (cached.size() < capacity) {
            Set<Integer> next = new HashSet<>(cached);
            next.add(block);
            return bestHits(refs, i + 1, next, capacity);
        }
        long best = 0;
        for (int victim : cached) {
            Set<Integer> next = new HashSet<>(cached);
            next.remove(victim);
            next.add(block);
            best = Math.max(best, bestHits(refs, i + 1, next, capacity));
        }
        return best;
    }
}
