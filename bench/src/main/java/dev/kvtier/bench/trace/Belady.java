package dev.kvtier.bench.trace;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * The offline optimum for one cache of {@code capacity} blocks (Belady's MIN): on a miss with the cache full,
 * evict the cached block whose next use is farthest in the future, a block never used again first. No
 * caching policy that must admit every block it serves can have more hits on the same sequence, so a
 * policy's hit count divided by this one says how much of the possible is reached.
 *
 * <p>Demand admission, like the cache under test: every referenced block is in the cache right after its
 * reference (a miss brings it in, evicting one other block when full); the optimum may not bypass.
 * O(n log n) in the sequence length: next uses are found in one backward pass, and the cached blocks sit in
 * a priority queue keyed by next use, whose stale entries (a block's earlier next use, overtaken when the
 * block was used again) are skipped when they surface. Stateless; thread-safe.
 */
public final class Belady {
    private Belady() {
    }

    /**
     * Hits of the optimum over {@code references} (block ids, any {@code int}s) with room for
     * {@code capacity} blocks. The first reference of every block is a miss, whatever the capacity.
     *
     * @throws IllegalArgumentException naming the value when {@code capacity} is negative
     */
    public static long hits(int[] references, int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must be at least 0 blocks, got " + capacity);
        }
        int n = references.length;
        if (capacity == 0 || n == 0) {
            return 0;
        }
        int[] nextUse = nextUses(references);
        // The position each cached block is next used at; absent when not cached.
        Map<Integer, Integer> cachedNextUse = new HashMap<>(Math.min(n, 2 * capacity + 16));
        // Entries {nextUse, block}, farthest first. An entry is current when cachedNextUse agrees with it.
        PriorityQueue<long[]> farthest = new PriorityQueue<>((a, b) -> Long.compare(b[0], a[0]));
        long hits = 0;
        for (int i = 0; i < n; i++) {
            int block = references[i];
            if (cachedNextUse.containsKey(block)) {
                hits++;
            } else if (cachedNextUse.size() == capacity) {
                while (true) {
                    long[] top = farthest.poll();
                    Integer current = cachedNextUse.get((int) top[1]);
                    if (current != null && current == top[0]) {
                        cachedNextUse.remove((int) top[1]);
                        break;
                    }
                }
            }
            cachedNextUse.put(block, nextUse[i]);
            farthest.add(new long[] {nextUse[i], block});
            // Stale entries are at most one per reference; rebuild when they dominate, so memory stays O(capacity).
            if (farthest.size() > 4 * capacity + 1024) {
                farthest.clear();
                cachedNextUse.forEach((b, next) -> farthest.add(new long[] {next, b}));
            }
        }
        return hits;
    }

    /**
     * For each position, the position of the next reference to the same block; {@code Integer.MAX_VALUE}
     * (farther than any position) when the block is never used again.
     */
    static int[] nextUses(int[] references) {
        int n = references.length;
        int[] next = new int[n];
        Map<Integer, Integer> seen = new HashMap<>();
        for (int i = n - 1; i >= 0; i--) {
            Integer later = seen.put(references[i], i);
            next[i] = later == null ? Integer.MAX_VALUE : later;
        }
        return next;
    }

    /**
     * Hits of the optimum for each capacity in {@code capacities} (one pass each).
     *
     * @see #hits(int[], int)
     */
    public static long[] hitsForEach(int[] references, int... capacities) {
        long[] hits = new long[capacities.length];
        for (int i = 0; i < capacities.length; i++) {
            hits[i] = hits(references, capacities[i]);
        }
        return hits;
    }

    /** Dense ids {@code 0..u-1} in order of first appearance, for sequences of arbitrary {@code long} ids. */
    public static int[] dense(long[] ids) {
        Map<Long, Integer> index = new HashMap<>();
        int[] dense = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            dense[i] = index.computeIfAbsent(ids[i], k -> index.size());
        }
        return dense;
    }

    /** Number of distinct values in {@code references}. */
    public static int distinct(int[] references) {
        return (int) Arrays.stream(references).distinct().count();
    }
}
