package dev.kvtier.store;

import java.util.List;

/**
 * The segments of one tier in a {@link DemotionPolicy}'s order, ties broken by
 * {@link SegmentEntry#lastUse}. Not thread-safe: the store calls it under its lock. An entry's
 * usage must not change while it is indexed: remove, change, add.
 */
interface TierIndex {

    /** Adds {@code entry}, which is not in any index. */
    void add(SegmentEntry entry);

    /**
     * Removes {@code entry}, which this index holds.
     *
     * @return false if it could not be found (only an inconsistent custom order can cause that)
     */
    boolean remove(SegmentEntry entry);

    /**
     * Appends keys to {@code keys} in demotion order until their sizes add up to at least
     * {@code needed} ({@code > 0}) or the tier is exhausted. O(k) plus a lookup of the first.
     */
    void collectCandidates(long needed, List<String> keys);
}
