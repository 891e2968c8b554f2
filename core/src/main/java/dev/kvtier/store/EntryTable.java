package dev.kvtier.store;

import java.util.function.Consumer;

/**
 * The store's key to {@link SegmentEntry} map, remembering registration order. Not thread-safe:
 * used under the store's lock.
 *
 * <p>Why not a {@code LinkedHashMap}: at 10^6 segments every lookup is a chain of cache (and TLB)
 * misses, and a map node between the table and the entry is one more link in that chain on every
 * operation. Here the table holds the entries themselves (open addressing, linear probing, load
 * at most 1/2, backward-shift deletion so no tombstones), with each slot's key hash in a parallel
 * {@code int[]} that is read alongside the slot, so only the matching entry is ever dereferenced.
 * Registration order is a doubly linked list through the entries, as in a {@code LinkedHashMap}.
 */
final class EntryTable {
    private static final int INITIAL_CAPACITY = 16;

    private SegmentEntry[] slots = new SegmentEntry[INITIAL_CAPACITY];
    private int[] hashes = new int[INITIAL_CAPACITY];
    /** {@code 32 - log2(capacity)}: a slot index is the top bits of the scrambled hash. */
    private int shift = 32 - Integer.numberOfTrailingZeros(INITIAL_CAPACITY);
    private int size;
    private SegmentEntry oldest;
    private SegmentEntry newest;

    /** The entry registered under {@code key}, or null (also for a null key). */
    SegmentEntry get(String key) {
        if (key == null) {
            return null;
        }
        int hash = key.hashCode();
        int mask = slots.length - 1;
        for (int i = home(hash); ; i = (i + 1) & mask) {
            SegmentEntry entry = slots[i];
            if (entry == null) {
                return null;
            }
            if (hashes[i] == hash && (entry.key == key || entry.key.equals(key))) {
                return entry;
            }
        }
    }

    /** Adds {@code entry}, whose key is not in the table, as the newest registration. */
    void add(SegmentEntry entry) {
        if (2 * (size + 1) > slots.length) {
            grow();
        }
        place(entry, entry.key.hashCode());
        size++;
        entry.olderRegistered = newest;
        entry.newerRegistered = null;
        if (newest == null) {
            oldest = entry;
        } else {
            newest.newerRegistered = entry;
        }
        newest = entry;
    }

    /** Removes {@code entry}, which is in the table. */
    void remove(SegmentEntry entry) {
        int mask = slots.length - 1;
        int i = home(entry.key.hashCode());
        while (slots[i] != entry) {
            i = (i + 1) & mask;
        }
        // Backward-shift deletion: move later members of the probe run into the hole when their
        // home slot does not lie (cyclically) after the hole, so every lookup still finds them.
        int hole = i;
        for (int j = (hole + 1) & mask; slots[j] != null; j = (j + 1) & mask) {
            int home = home(hashes[j]);
            boolean homeAfterHole = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
            if (!homeAfterHole) {
                slots[hole] = slots[j];
                hashes[hole] = hashes[j];
                hole = j;
            }
        }
        slots[hole] = null;
        hashes[hole] = 0;
        size--;
        if (entry.olderRegistered == null) {
            oldest = entry.newerRegistered;
        } else {
            entry.olderRegistered.newerRegistered = entry.newerRegistered;
        }
        if (entry.newerRegistered == null) {
            newest = entry.olderRegistered;
        } else {
            entry.newerRegistered.olderRegistered = entry.olderRegistered;
        }
        entry.olderRegistered = null;
        entry.newerRegistered = null;
    }

    int size() {
        return size;
    }

    /** Calls {@code action} for every entry, oldest registration first. */
    void forEachInRegistrationOrder(Consumer<SegmentEntry> action) {
        for (SegmentEntry entry = oldest; entry != null; entry = entry.newerRegistered) {
            action.accept(entry);
        }
    }

    private void place(SegmentEntry entry, int hash) {
        int mask = slots.length - 1;
        int i = home(hash);
        while (slots[i] != null) {
            i = (i + 1) & mask;
        }
        slots[i] = entry;
        hashes[i] = hash;
    }

    private void grow() {
        SegmentEntry[] oldSlots = slots;
        int[] oldHashes = hashes;
        slots = new SegmentEntry[2 * oldSlots.length];
        hashes = new int[2 * oldSlots.length];
        shift--;
        for (int i = 0; i < oldSlots.length; i++) {
            if (oldSlots[i] != null) {
                place(oldSlots[i], oldHashes[i]);
            }
        }
    }

    /**
     * The slot where a key with {@code hash} belongs: Fibonacci hashing (the top bits of the hash
     * times 2^32 / golden ratio). Keys such as {@code "seg-1", "seg-2", ...} have consecutive
     * String hashes, which masked low bits would place in consecutive slots, building the long
     * probe runs that linear probing must then walk; the multiply scatters them.
     */
    private int home(int hash) {
        return (hash * 0x9E3779B9) >>> shift;
    }

    @Override
    public String toString() {
        return "EntryTable[size=" + size + ", capacity=" + slots.length + "]";
    }

    /** For tests: the number of slots. */
    int capacity() {
        return slots.length;
    }

}
