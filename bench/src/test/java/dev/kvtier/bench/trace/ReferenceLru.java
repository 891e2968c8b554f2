package dev.kvtier.bench.trace;

import java.util.LinkedHashMap;
import java.util.Map;

/** The reference LRU the tests compare against: a LinkedHashMap in access order, evicting its eldest entry. */
public final class ReferenceLru {
    private ReferenceLru() {
    }

    /** Hits of an LRU cache of {@code capacity} entries over {@code refs}, every miss admitted. */
    public static long hits(int[] refs, int capacity) {
        Map<Integer, Boolean> cache = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Integer, Boolean> eldest) {
                return size() > capacity;
            }
        };
        long hits = 0;
        for (int r : refs) {
            if (cache.get(r) != null) {
                hits++;
            } else {
                cache.put(r, Boolean.TRUE);
            }
        }
        return hits;
    }
}
