package dev.kvtier.store.policy;

/**
 * S3-FIFO's ghost queue: which keys were among the last {@code capacity} evicted, remembered by
 * their 32-bit hash ({@link PolicyNode#hash}) rather than by key. Not thread-safe: owned by one
 * tracker, used under its store's lock.
 *
 * <p>Why not a {@code LinkedHashMap} of keys: the ghost holds up to several times a tier's segment
 * count, and a map entry per ghost (a node, links, the retained key) cost an allocation per
 * eviction and ~100 bytes per ghost; this is one array, no allocation after growth, 8 bytes per
 * slot. The price is approximation, harmless for a ghost: two keys with one hash are one ghost
 * (a rare false hit sends a segment to the main queue early), and each hash maps to a bucket of
 * two slots, so a key can be forgotten before {@code capacity} newer evictions when both slots of
 * its bucket were needed by newer ones (the table has at least twice as many slots as ghosts, so that is rare).
 */
final class GhostKeys {
    private static final int MIN_SLOTS = 64;
    private static final long HASH_BITS = 0xFFFF_FFFF_0000_0000L;

    /**
     * Per slot: the hash (high 32 bits) and the eviction number that put it there (low 32 bits; 0: empty). One
     * array, not one per field, so that a lookup or an insertion reads one cache line, not two: the two slots of a
     * bucket are adjacent, and at 10^6 segments the table is tens of MB, so each line is a cache miss.
     */
    private long[] slots = new long[MIN_SLOTS];
    /** Evictions so far (wraps; ages are differences, so wrapping is harmless). */
    private int evictions;
    private int capacity = MIN_SLOTS / 2;

    /** Keeps at most the last {@code ghosts} evictions; grows the table when needed, never shrinks it. */
    void capacity(int ghosts) {
        int wanted = Math.max(1, ghosts);
        if (wanted == capacity) {
            return; // as every eviction sets it, mostly unchanged; the table was sized for it when it was set
        }
        capacity = wanted;
        if (2L * capacity > slots.length && slots.length < 1 << 30) {
            long[] old = slots;
            int length = Integer.highestOneBit((int) Math.min(1 << 29, 2L * capacity - 1)) << 1;
            slots = new long[length];
            for (long slot : old) {
                if (isLive(stampOf(slot))) {
                    place(hashOf(slot), stampOf(slot));
                }
            }
        }
    }

    /** Remembers the eviction of the key with {@code hash}. */
    void add(int hash) {
        int stamp = ++evictions;
        if (stamp == 0) {
            stamp = ++evictions; // 0 marks an empty slot
        }
        place(hash, stamp);
    }

    /** Whether the key with {@code hash} is a ghost; if so it is one no more. */
    boolean remove(int hash) {
        if (evictions == 0) {
            return false; // nothing evicted yet (a tier nothing leaves, e.g. the last): no table read
        }
        int bucket = bucket(hash);
        for (int i = bucket; i < bucket + 2; i++) {
            long slot = slots[i];
            if (hashOf(slot) == hash && isLive(stampOf(slot))) {
                slots[i] = slot & HASH_BITS; // the stamp cleared, the hash kept: place() reads it
                return true;
            }
        }
        return false;
    }

    /** Puts a ghost in its bucket: a free slot, else over the older occupant if that is older still. */
    private void place(int hash, int stamp) {
        int bucket = bucket(hash);
        long first = slots[bucket];
        long second = slots[bucket + 1];
        boolean inSecond = hashOf(second) == hash; // the same key's older stamp first
        long at = inSecond ? second : first;
        if (hashOf(at) != hash && isLive(stampOf(at))) {
            long other = inSecond ? first : second;
            if (!isLive(stampOf(other)) || age(stampOf(other)) > age(stampOf(at))) {
                inSecond = !inSecond;
                at = other;
            }
        }
        if (hashOf(at) == hash || !isLive(stampOf(at)) || age(stampOf(at)) >= age(stamp)) {
            slots[inSecond ? bucket + 1 : bucket] = (long) hash << 32 | Integer.toUnsignedLong(stamp);
        }
    }

    private static int hashOf(long slot) {
        return (int) (slot >>> 32);
    }

    private static int stampOf(long slot) {
        return (int) slot;
    }

    /** Evictions since the one stamped {@code stamp}, unsigned. */
    private long age(int stamp) {
        return Integer.toUnsignedLong(evictions - stamp);
    }

    private boolean isLive(int stamp) {
        return stamp != 0 && Integer.compareUnsigned(evictions - stamp, capacity) < 0;
    }

    private int bucket(int hash) {
        return (hash * 0x9E3779B9 >>> 1) & (slots.length - 2);
    }

    @Override
    public String toString() {
        int live = 0;
        for (long slot : slots) {
            live += isLive(stampOf(slot)) ? 1 : 0;
        }
        return "GhostKeys[" + live + " of at most " + capacity + "]";
    }
}
