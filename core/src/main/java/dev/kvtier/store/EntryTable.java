package dev.kvtier.store;

import dev.kvtier.store.policy.OpenAddressing;

import java.util.Arrays;
import java.util.Comparator;
import java.util.function.Consumer;

/**
 * The store's key to {@link SegmentEntry} map, remembering registration order. Not thread-safe:
 * written under the store's lock; {@link #get} alone may also race a writer (see there).
 *
 * <p>Why not a {@code LinkedHashMap}: at 10^6 segments every lookup is a chain of cache (and TLB)
 * misses, and a map node between the table and the entry is one more link in that chain on every
 * operation. Here the table holds the entries themselves (open addressing, linear probing, load
 * at most 1/2, backward-shift deletion so no tombstones), with each slot's key hash in a parallel
 * {@code int[]} that is read alongside the slot, so only the matching entry is ever dereferenced.
 *
 * <p>Registration order is a number stamped on each entry from a counter, sorted only when asked
 * for ({@link #forEachInRegistrationOrder}, behind the rare {@code TieredStore.segments()}). Why not
 * a doubly linked list through the entries, as in a {@code LinkedHashMap}: a register then wrote
 * the previous newest entry and a remove wrote both neighbours, random entries at 10^6 segments
 * (cache misses on the hottest write path) for an order read once in a long while.
 */
final class EntryTable {
    private static final int INITIAL_CAPACITY = 16;

    private SegmentEntry[] slots = new SegmentEntry[INITIAL_CAPACITY];
    private int[] hashes = new int[INITIAL_CAPACITY];
    private int size;
    /** The next registration number; the live entries are renumbered 0..size-1 before it would wrap. */
    private int registrations;

    EntryTable() {
        this(0);
    }

    /** For tests: the first registration number, to reach the renumbering without 2^31 registrations. */
    EntryTable(int firstRegistration) {
        this.registrations = firstRegistration;
    }

    /**
     * The entry registered under {@code key}, or null (also for a null key). The one method that
     * may run without the lock, racing a writer (the store's optimistic reads, validated
     * afterwards, and its look-ups before taking the lock, checked under it): it then may answer
     * wrongly (null, or an entry with an equal key that has left), but it never throws, never
     * answers an entry with another key, and never loops unboundedly. Why
     * that holds: the two arrays are read once into locals and must have one length (a writer
     * growing the table replaces one before the other), the home slot is derived from that length
     * rather than from a separately written field, and at most that many slots are probed.
     */
    SegmentEntry get(String key) {
        if (key == null) {
            return null;
        }
        SegmentEntry[] slots = this.slots;
        int[] hashes = this.hashes;
        int length = slots.length;
        if (hashes.length != length) {
            return null; // a writer is growing the table; the caller's validation fails
        }
        int hash = key.hashCode();
        int mask = length - 1;
        int i = home(hash, length);
        for (int probes = 0; probes < length; probes++, i = (i + 1) & mask) {
            SegmentEntry entry = slots[i];
            if (entry == null) {
                return null;
            }
            if (hashes[i] == hash && (entry.key == key || entry.key.equals(key))) {
                return entry;
            }
        }
        return null;
    }

    /**
     * Where {@code key} is: its slot ({@code >= 0}) if registered, else {@code -(slot + 1)} for the
     * free slot where {@link #addAt} puts it. So a registration and a removal probe the table once.
     */
    int slotOf(String key) {
        int hash = key.hashCode();
        int mask = slots.length - 1;
        for (int i = home(hash, slots.length); ; i = (i + 1) & mask) {
            SegmentEntry entry = slots[i];
            if (entry == null) {
                return -(i + 1);
            }
            if (hashes[i] == hash && (entry.key == key || entry.key.equals(key))) {
                return i;
            }
        }
    }

    /** The entry in {@code slot}, a slot {@link #slotOf} just found. */
    SegmentEntry at(int slot) {
        return slots[slot];
    }

    /** Adds {@code entry}, whose key is not in the table, as the newest registration. */
    void add(SegmentEntry entry) {
        addAt(slotOf(entry.key), entry);
    }

    /**
     * Adds {@code entry} as the newest registration; {@code freeSlot} is what {@link #slotOf}
     * answered for its key, with no change to the table since.
     */
    void addAt(int freeSlot, SegmentEntry entry) {
        if (registrations == Integer.MAX_VALUE) {
            renumber(); // once per 2^31 registrations, O(n log n); moves no slot
        }
        int hash = entry.key.hashCode();
        if (2 * (size + 1) > slots.length) {
            grow();
            place(entry, hash);
        } else {
            int slot = -(freeSlot + 1);
            slots[slot] = entry;
            hashes[slot] = hash;
        }
        size++;
        entry.registration = registrations++;
    }

    /** Numbers the entries 0..size-1 in their registration order. */
    private void renumber() {
        int next = 0;
        for (SegmentEntry entry : inRegistrationOrder()) {
            entry.registration = next++;
        }
        registrations = next;
    }

    /** Removes {@code entry}, which is in the table. */
    void remove(SegmentEntry entry) {
        removeAt(slotOf(entry.key));
    }

    /** Removes the entry in {@code slot}, a slot {@link #slotOf} found, with no change to the table since. */
    void removeAt(int slot) {
        slots[slot].registration = SegmentEntry.REMOVED;
        OpenAddressing.removeAt(slots, hashes, slot);
        size--;
    }

    int size() {
        return size;
    }

    /** Calls {@code action} for every entry, oldest registration first. O(n log n): it sorts. */
    void forEachInRegistrationOrder(Consumer<SegmentEntry> action) {
        for (SegmentEntry entry : inRegistrationOrder()) {
            action.accept(entry);
        }
    }

    private SegmentEntry[] inRegistrationOrder() {
        SegmentEntry[] inOrder = new SegmentEntry[size];
        int n = 0;
        for (SegmentEntry entry : slots) {
            if (entry != null) {
                inOrder[n++] = entry;
            }
        }
        Arrays.sort(inOrder, 0, n, Comparator.comparingInt(entry -> entry.registration));
        return n == inOrder.length ? inOrder : Arrays.copyOf(inOrder, n);
    }

    private void place(SegmentEntry entry, int hash) {
        OpenAddressing.place(slots, hashes, entry, hash);
    }

    private void grow() {
        SegmentEntry[] oldSlots = slots;
        int[] oldHashes = hashes;
        slots = new SegmentEntry[2 * oldSlots.length];
        hashes = new int[2 * oldSlots.length];
        OpenAddressing.rehash(oldSlots, oldHashes, slots, hashes);
    }

    private static int home(int hash, int length) {
        return OpenAddressing.home(hash, length);
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
