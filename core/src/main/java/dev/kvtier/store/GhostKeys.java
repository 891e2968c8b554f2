package dev.kvtier.store;

/**
 * S3-FIFO's ghost queue: which keys were among the last {@code capacity} evicted, remembered by
 * their 32-bit hash ({@link PolicyNode#hash}) rather than by key. Not thread-safe: owned by one
 * tracker, used under its store's lock.
 *
 * <p>Why not a {@code LinkedHashMap} of keys: the ghost holds up to several times a tier's segment
 * count, and a map entry per ghost (a node, links, the retained key) cost an allocation per
 * eviction and ~100 bytes per ghost; this is two arrays, no allocation after growth, 8 bytes per
 * slot. The price is approximation, harmless for a ghost: two keys with one hash are one ghost
 * (a rare false hit sends a segment to the main queue early), and each hash maps to a bucket of
 * two slots, so a key can be forgotten before {@code capacity} newer evictions when both slots of
 * its bucket were needed by newer ones (the table has at least twice as many slots as ghosts, so that is rare).
 */
final class GhostKeys {
    private static final int MIN_SLOTS = 64;

    /** Per slot: the hash, and the eviction number that put it there (0: empty). */
    private int[] hashes = new int[MIN_SLOTS];
    private int[] stamps = new int[MIN_SLOTS];
    /** Evictions so far (wraps; ages are differences, so wrapping is harmless). */
    private int evictions;
    private int capacity = MIN_SLOTS / 2;

    /** Keeps at most the last {@code ghosts} evictions; grows the table when needed, never shrinks it. */
    void capacity(int ghosts) {
        capacity = Math.max(1, ghosts);
        if (2L * capacity > hashes.length && hashes.length < 1 << 30) {
            int[] oldHashes = hashes;
            int[] oldStamps = stamps;
            int length = Integer.highestOneBit((int) Math.min(1 << 29, 2L * capacity - 1)) << 1;
            hashes = new int[length];
            stamps = new int[length];
            for (int i = 0; i < oldStamps.length; i++) {
                if (isLive(oldStamps[i])) {
                    place(oldHashes[i], oldStamps[i]);
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
        int bucket = bucket(hash);
        for (int i = bucket; i < bucket + 2; i++) {
            if (hashes[i] == hash && isLive(stamps[i])) {
                stamps[i] = 0;
                return true;
            }
        }
        return false;
    }

    /** Puts a ghost in its bucket: a free slot, else over the older occupant if that is older still. */
    private void place(int hash, int stamp) {
        int bucket = bucket(hash);
        int slot = hashes[bucket + 1] == hash ? bucket + 1 : bucket; // the same key's older stamp first
        if (hashes[slot] != hash && isLive(stamps[slot])) {
            int other = slot ^ 1;
            if (!isLive(stamps[other]) || age(stamps[other]) > age(stamps[slot])) {
                slot = other;
            }
        }
        if (hashes[slot] == hash || !isLive(stamps[slot]) || age(stamps[slot]) >= age(stamp)) {
            hashes[slot] = hash;
            stamps[slot] = stamp;
        }
    }

    /** Evictions since the one stamped {@code stamp}, unsigned. */
    private long age(int stamp) {
        return Integer.toUnsignedLong(evictions - stamp);
    }

    private boolean isLive(int stamp) {
        return stamp != 0 && Integer.compareUnsigned(evictions - stamp, capacity) < 0;
    }

    private int bucket(int hash) {
        return (hash * 0x9E3779B9 >>> 1) & (hashes.length - 2);
    }

    @Override
    public String toString() {
        int live = 0;
        for (int stamp : stamps) {
            live += isLive(stamp) ? 1 : 0;
        }
        return "GhostKeys[" + live + " of at most " + capacity + "]";
    }
}
