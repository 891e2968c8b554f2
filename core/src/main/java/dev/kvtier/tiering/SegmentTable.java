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
import java.util.concurrent.ConcurrentHashMap;

/**
 * The one per-key registry on the physical side: each cached key's {@link Segment} (lock,
 * placement, checksum, pins, liveness), beside the {@link TieredStore} that holds its logical side.
 * Finding a key, locking it live, and forgetting it from both sides happen here. Thread-safe.
 */
final class SegmentTable {
    private final ConcurrentHashMap<String, Segment> segments = new ConcurrentHashMap<>();
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
        return segments.putIfAbsent(segment.key, segment) == null;
    }

    /** Takes back a segment published by a call that then failed. */
    void unpublish(Segment segment) {
        segments.remove(segment.key, segment);
    }

    /** The segment of {@code key} as it is now, unlocked; null if none. */
    Segment peek(String key) {
        return segments.get(key);
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
        Segment segment = segments.get(key);
        if (segment == null) {
            return null;
        }
        segment.lock.lock();
        if (!segment.live) {
            segment.lock.unlock();
            return null;
        }
        return segment;
    }

    /** The tier of a locked, live segment: the store's, which under the lock matches the bytes. */
    Tier currentTier(Segment segment) {
        Tier tier = store.tierOf(segment.key);
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
        Optional<SegmentMeta> removed = store.remove(segment.key);
        persisted.leaving(segment); // wherever it is: the journal knows whether it holds a record
        if (segment.pins == 0) {
            memories.release(segment.placement);
            segment.placement = null;
        } // else the last pin to close frees it (see unpin)
        segment.live = false;
        segment.countOn(null);
        segments.remove(segment.key, segment);
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
        for (Segment segment : segments.values()) {
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
        segment.lock.lock();
        try {
            if (--segment.pins == 0 && !segment.live && segment.placement != null) {
                memories.release(segment.placement);
                segment.placement = null;
            }
        } finally {
            segment.lock.unlock();
        }
    }

    /** After the last operation: marks every segment dead (the memories free the pages) and forgets them. */
    void clear() {
        for (Segment segment : segments.values()) {
            segment.lock.lock();
            try {
                segment.live = false;
                segment.placement = null;
            } finally {
                segment.lock.unlock();
            }
        }
        segments.clear();
    }
}
