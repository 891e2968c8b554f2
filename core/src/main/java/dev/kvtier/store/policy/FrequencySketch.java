package dev.kvtier.store.policy;

/**
 * A count-min sketch of recent popularity with 4-bit counters (TinyLFU: Einziger, Friedman and
 * Manes 2017; the layout follows Caffeine's {@code FrequencySketch} in spirit): four counters per
 * key in one table of longs (16 counters per long), the estimate is their minimum, and every
 * {@code 10 x width} increments all counters are halved so that old popularity fades. Not
 * thread-safe: owned by one tracker, used under its store's lock. Deterministic: no random seed.
 */
final class FrequencySketch {
    private static final long[] SEEDS = {
            0xc3a5c85c97cb3127L, 0xb492b66fbe98f273L, 0x9ae16a3b2f90404fL, 0xcbf29ce484222325L};
    private static final long RESET_MASK = 0x7777_7777_7777_7777L;
    /**
     * 8 KiB to start with: growing restarts the counts, so a store of up to ~1,000 segments should
     * never have to.
     */
    private static final int MIN_WIDTH = 1 << 10;
    /** Beyond this the table stops growing (8 MiB of longs); estimates only get coarser. */
    private static final int MAX_WIDTH = 1 << 20;

    private long[] table;
    private int sampleSize;
    private int additions;

    FrequencySketch() {
        resize(MIN_WIDTH);
    }

    /**
     * Grows the table to about one long per expected key when {@code keys} outgrows it; growing
     * starts the counts afresh (rare: at each doubling of the store's segment count).
     */
    void ensureCapacity(long keys) {
        if (keys > table.length && table.length < MAX_WIDTH) {
            resize((int) Math.min(MAX_WIDTH, Long.highestOneBit(keys) << 1));
        }
    }

    private void resize(int width) {
        table = new long[width];
        sampleSize = 10 * width;
        additions = 0;
    }

    /** The estimated recent popularity of the key with {@code hash}: 0 to 15. */
    int frequency(int hash) {
        int min = 15;
        for (int row = 0; row < SEEDS.length; row++) {
            long h = mix(hash, row);
            int slot = (int) (h >>> 32) & (table.length - 1);
            int shift = ((int) h & 15) << 2;
            min = Math.min(min, (int) (table[slot] >>> shift) & 15);
        }
        return min;
    }

    /** Counts one use of the key with {@code hash}. */
    void increment(int hash) {
        boolean added = false;
        for (int row = 0; row < SEEDS.length; row++) {
            long h = mix(hash, row);
            int slot = (int) (h >>> 32) & (table.length - 1);
            int shift = ((int) h & 15) << 2;
            if (((table[slot] >>> shift) & 15) < 15) {
                table[slot] += 1L << shift;
                added = true;
            }
        }
        if (added && ++additions >= sampleSize) {
            for (int i = 0; i < table.length; i++) {
                table[i] = (table[i] >>> 1) & RESET_MASK;
            }
            additions /= 2;
        }
    }

    private static long mix(int hash, int row) {
        long h = (hash + SEEDS[row]) * SEEDS[row];
        return h ^ (h >>> 29);
    }

    /** For tests: the number of longs in the table. */
    int width() {
        return table.length;
    }
}
