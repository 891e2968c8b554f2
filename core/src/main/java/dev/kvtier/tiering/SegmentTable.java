package dev.kvtier.tiering;

import dev.kvtier.SegmentNotFoundException;
import dev.kvtier.SegmentPinnedException;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.StampedLock;

/**
 * The one per-key registry on the physical side: each cached key's {@link Segment} (lock,
 * placement, checksum, pins, liveness), beside the {@link TieredStore} that holds its logical side.
 * Finding a key, locking it live, and forgetting it from both sides happen here. Thread-safe.
 *
 * <p>The segments are kept in one open-addressing table (linear probing, at most half full): a slot array and
 * the keys' hashes beside it, so a lookup reads one slot and the segment it finds, where a
 * {@code ConcurrentHashMap} also reads a node between them. Every lookup of a reference goes through here
 * and is a cache miss on a large cache (issue 11: the map's lookup was the largest single cost of a trace
 * reference). Lookups take no lock: they read optimistically under a {@link StampedLock} and read again under
 * its read lock when a change overlapped; changes take its write lock. Prefix blocks are in a second such table
 * too, by their 128-bit hash ({@link #peekBlock}), so the chain calls need no key strings.
 */
final class SegmentTable {
    private static final int INITIAL_CAPACITY = 64;

    /** The slots and their keys' hashes, replaced together when the table grows (a reader sees one or the other). */
    static final class Slots {
        final Segment[] segments;
        final int[] hashes;
        /** {@code 32 - log2(capacity)}: a key's home slot is the top bits of its scrambled hash. */
        final int shift;

        Slots(int capacity) {
            this.segments = new Segment[capacity];
            this.hashes = new int[capacity];
            this.shift = 32 - Integer.numberOfTrailingZeros(capacity);
        }

        int home(int hash) {
            return (hash * 0x9E37_79B9) >>> shift;
        }

        /**
         * The segment of {@code key}, or null. Bounded by the capacity, so a read that overlaps a change (and is
         * then thrown away) always ends. Segment keys are final fields, safe to read from a racing slot.
         */
        Segment find(String key, int hash) {
            int mask = segments.length - 1;
            int i = home(hash);
            for (int probes = 0; probes < segments.length; probes++, i = (i + 1) & mask) {
                Segment segment = segments[i];
                if (segment == null) {
                    return null;
                }
                if (hashes[i] == hash && (segment.key == key || segment.key.equals(key))) {
                    return segment;
                }
            }
            return null;
        }

        /**
         * The prefix block of hash {@code high}, {@code low}, or null: {@link #find} for the block index, comparing
         * the hash words on the segment (its line is read anyway) instead of a key and its bytes.
         */
        Segment findBlock(long high, long low, int hash) {
            int mask = segments.length - 1;
            int i = home(hash);
            for (int probes = 0; probes < segments.length; probes++, i = (i + 1) & mask) {
                Segment segment = segments[i];
                if (segment == null) {
                    return null;
                }
                if (hashes[i] == hash && segment.isBlock(high, low)) {
                    return segment;
                }
            }
            return null;
        }

        /** The slot of {@code segment} itself, or -1. */
        int slotOf(Segment segment, int hash) {
            int mask = segments.length - 1;
            for (int i = home(hash); segments[i] != null; i = (i + 1) & mask) {
                if (segments[i] == segment) {
                    return i;
                }
            }
            return -1;
        }

        /** Puts a segment whose key is not in the table into the first free slot from its home. */
        void place(Segment segment, int hash) {
            int mask = segments.length - 1;
            int i = home(hash);
            while (segments[i] != null) {
                i = (i + 1) & mask;
            }
            hashes[i] = hash;
            segments[i] = segment;
        }

        /** Empties slot {@code i}, shifting later segments of its probe run back so that none is cut off. */
        void removeAt(int i) {
            int mask = segments.length - 1;
            int hole = i;
            segments[hole] = null;
            for (int j = (hole + 1) & mask; segments[j] != null; j = (j + 1) & mask) {
                int home = home(hashes[j]);
                if (((j - home) & mask) >= ((j - hole) & mask)) { // the hole lies on j's way from its home
                    hashes[hole] = hashes[j];
                    segments[hole] = segments[j];
                    segments[j] = null;
                    hole = j;
                }
            }
        }
    }

    private final StampedLock guard = new StampedLock();
    /** Written under the write lock only. */
    private Slots slots = new Slots(INITIAL_CAPACITY);
    private int size;
    /**
     * The prefix blocks again, by their 128-bit hash ({@link BlockKeys#hash}): how the prefix calls find a chain's
     * blocks without building each block's key string, hashing it and comparing its bytes (issue 11: the key look-ups
     * of a restore were the largest cost the prefix path had beyond the segment path). Holds exactly the blocks of
     * {@link #slots}; changed with it under the write lock.
     */
    private Slots blockSlots = new Slots(INITIAL_CAPACITY);
    private int blocks;
    private final TieredStore store;
    private final TierMemories memories;
    private final PersistedDisk persisted;

    SegmentTable(TieredStore store, TierMemories memories, PersistedDisk persisted) {
        this.store = store;
        this.memories = memories;
        this.persisted = persisted;
    }

    /** Publishes a new, locked segment; false if the key is taken. */
    boolean publish(Segment segment) {
        int hash = segment.key.hashCode();
        long stamp = guard.writeLock();
        try {
            if (slots.find(segment.key, hash) != null) {
                return false;
            }
            if (2 * (size + 1) > slots.segments.length) {
                slots = grown(slots);
            }
            slots.place(segment, hash);
            size++;
            if (segment.isBlock()) {
                if (2 * (blocks + 1) > blockSlots.segments.length) {
                    blockSlots = grown(blockSlots);
                }
                blockSlots.place(segment, BlockKeys.hash(segment.blockHigh, segment.blockLow));
                blocks++;
                if (segment.parent != null) {
                    segment.parent.lastChild = segment;
                }
            }
            return true;
        } finally {
            guard.unlockWrite(stamp);
        }
    }

    /** Twice the capacity of {@code old}, with its segments (under the write lock); readers see one or the other, whole. */
    private static Slots grown(Slots old) {
        Slots bigger = new Slots(2 * old.segments.length);
        for (int i = 0; i < old.segments.length; i++) {
            if (old.segments[i] != null) {
                bigger.place(old.segments[i], old.hashes[i]);
            }
        }
        return bigger;
    }

    /** Takes back a segment published by a call that then failed. */
    void unpublish(Segment segment) {
        forget(segment);
    }

    /** Removes {@code segment} if it is the one its key maps to. */
    private void forget(Segment segment) {
        int hash = segment.key.hashCode();
        long stamp = guard.writeLock();
        try {
            int slot = slots.slotOf(segment, hash);
            if (slot >= 0) {
                slots.removeAt(slot);
                size--;
                if (segment.isBlock()) {
                    blockSlots.removeAt(blockSlots.slotOf(segment, BlockKeys.hash(segment.blockHigh, segment.blockLow)));
                    blocks--;
                    if (segment.parent != null && segment.parent.lastChild == segment) {
                        segment.parent.lastChild = null;
                    }
                }
            }
        } finally {
            guard.unlockWrite(stamp);
        }
    }

    /** The segment of {@code key} as it is now, unlocked; null if none. */
    Segment peek(String key) {
        int hash = key.hashCode();
        long stamp = guard.tryOptimisticRead();
        if (stamp != 0) {
            Segment found = slots.find(key, hash);
            if (guard.validate(stamp)) {
                return found;
            }
        }
        stamp = guard.readLock(); // a change overlapped the optimistic read: read again, excluding changes
        try {
            return slots.find(key, hash);
        } finally {
            guard.unlockRead(stamp);
        }
    }

    /** The prefix block of hash {@code high}, {@code low} as it is now, unlocked; null if none. */
    Segment peekBlock(long high, long low) {
        int hash = BlockKeys.hash(high, low);
        long stamp = guard.tryOptimisticRead();
        if (stamp != 0) {
            Segment found = blockSlots.findBlock(high, low, hash);
            if (guard.validate(stamp)) {
                return found;
            }
        }
        stamp = guard.readLock(); // as in peek
        try {
            return blockSlots.findBlock(high, low, hash);
        } finally {
            guard.unlockRead(stamp);
        }
    }

    /** The prefix block of hash {@code high}, {@code low}, locked and live, or null (nothing locked) if it is not cached. */
    Segment lockLiveBlockOrNull(long high, long low) {
        return lockedIfLive(peekBlock(high, low));
    }

    /** Every segment now in the table, unlocked. */
    private List<Segment> all() {
        long stamp = guard.readLock();
        try {
            List<Segment> all = new ArrayList<>(size);
            for (Segment segment : slots.segments) {
                if (segment != null) {
                    all.add(segment);
                }
            }
            return all;
        } finally {
            guard.unlockRead(stamp);
        }
    }

    /** The segment of {@code key}, locked and live, or {@link SegmentNotFoundException}. */
    Segment lockLive(String key) {
        Segment segment = lockLiveOrNull(key);
        if (segment == null) {
            throw new SegmentNotFoundException(key);
        }
        return segment;
    }

    /** The segment of {@code key}, locked and live, or null (nothing locked) if it is not cached. */
    Segment lockLiveOrNull(String key) {
        return lockedIfLive(peek(key));
    }

    /** {@code segment} locked, when it is live (a segment live under its lock is the one its key maps to); else null. */
    private static Segment lockedIfLive(Segment segment) {
        if (segment == null) {
            return null;
        }
        segment.lock();
        if (!segment.live) {
            segment.unlock();
            return null;
        }
        return segment;
    }

    /** The tier of a locked, live segment: the store's, which under the lock matches the bytes. */
    Tier currentTier(Segment segment) {
        Tier tier = store.tierOf(segment.handle);
        if (tier == null) {
            throw new SegmentNotFoundException(segment.key);
        }
        return tier;
    }

    static void requireUnpinned(Segment segment, String action) {
        if (segment.pins > 0) {
            throw new SegmentPinnedException(segment.key, segment.pins, action);
        }
    }

    /**
     * Forgets a locked, live segment entirely and frees its memory (removed, or its bytes could not be
     * kept consistent with the store).
     *
     * @return its metadata as the store had it
     */
    Optional<SegmentMeta> drop(Segment segment) {
        Optional<SegmentMeta> removed = store.remove(segment.handle);
        persisted.leaving(segment); // wherever it is: the journal knows whether it holds a record
        if (segment.pins == 0) {
            memories.release(segment.placement);
            segment.placement = null;
        } // else the last pin to close frees it (see unpin)
        segment.live = false;
        segment.countOn(null);
        forget(segment);
        return removed;
    }

    /**
     * Every cached block descending from {@code block} (children, their children, ...), parents before
     * children (by position: a child starts where its parent ends), unlocked. Scans the table: for rare
     * events (a recovered block failing its first check), not for the hot path.
     */
    List<Segment> descendantsOf(Segment block) {
        Map<Segment, Boolean> descends = new IdentityHashMap<>();
        descends.put(block, true);
        List<Segment> found = new ArrayList<>();
        for (Segment segment : all()) {
            List<Segment> path = new ArrayList<>();
            Segment at = segment;
            while (at != null && !descends.containsKey(at)) {
                path.add(at);
                at = at.parent;
            }
            boolean below = at != null && descends.get(at);
            for (Segment s : path) {
                descends.put(s, below);
                if (below) {
                    found.add(s);
                }
            }
        }
        found.sort(Comparator.comparingLong(s -> s.positions.start()));
        return found;
    }

    /** A pin closed: the last one frees the pages of a segment removed meanwhile. */
    void unpin(Segment segment) {
        segment.lock();
        try {
            if (--segment.pins == 0 && !segment.live && segment.placement != null) {
                memories.release(segment.placement);
                segment.placement = null;
            }
        } finally {
            segment.unlock();
        }
    }

    /** After the last operation: marks every segment dead (the memories free the pages) and forgets them. */
    void clear() {
        for (Segment segment : all()) {
            segment.lock();
            try {
                segment.live = false;
                segment.placement = null;
            } finally {
                segment.unlock();
            }
        }
        long stamp = guard.writeLock();
        try {
            slots = new Slots(INITIAL_CAPACITY);
            size = 0;
            blockSlots = new Slots(INITIAL_CAPACITY);
            blocks = 0;
        } finally {
            guard.unlockWrite(stamp);
        }
    }
}
