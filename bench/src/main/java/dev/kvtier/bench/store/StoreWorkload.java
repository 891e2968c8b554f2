package dev.kvtier.bench.store;

import java.util.SplittableRandom;

/**
 * What both store benchmarks share: {@code n} segments of {@link #SEGMENT_BYTES} each, all on the
 * GPU tier with budgets roomy enough for every move, and a fixed pseudo-random key sequence so the
 * two stores see the same accesses.
 */
final class StoreWorkload {
    static final long SEGMENT_BYTES = 4_096;
    /** A few candidates: this many segments' worth of bytes is asked for. */
    static final int CANDIDATES_WANTED = 4;
    /** Keys registered and removed again by the register benchmark, on top of the {@code n} resident ones. */
    static final int SPARE_KEYS = 1_024;
    private static final int RANDOM_INDICES = 1 << 16;

    final String[] keys;
    final String[] spareKeys;
    private final int[] randomIndices = new int[RANDOM_INDICES];
    private int cursor;
    private int spareCursor;

    StoreWorkload(int segments) {
        keys = new String[segments];
        for (int i = 0; i < segments; i++) {
            keys[i] = "seg-" + i;
        }
        spareKeys = new String[SPARE_KEYS];
        for (int i = 0; i < SPARE_KEYS; i++) {
            spareKeys[i] = "spare-" + i;
        }
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < RANDOM_INDICES; i++) {
            randomIndices[i] = random.nextInt(segments);
        }
    }

    /** Bytes every budget gets: all segments plus the spares fit on any tier. */
    long budget() {
        return (keys.length + (long) SPARE_KEYS) * SEGMENT_BYTES;
    }

    /** The next resident key of the shared pseudo-random sequence. */
    String nextKey() {
        return keys[nextIndex()];
    }

    /** The index in {@link #keys} of the next resident key of the sequence (for callers holding per-key handles). */
    int nextIndex() {
        return randomIndices[cursor++ & (RANDOM_INDICES - 1)];
    }

    /** The next spare slot, cycling. */
    int nextSpare() {
        return spareCursor++ & (SPARE_KEYS - 1);
    }
}
