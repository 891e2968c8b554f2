package dev.kvtier.store;

import java.util.List;

/**
 * The segments of one tier in an order policy's order, ties broken by {@link SegmentEntry#lastUse}:
 * the per-tier half of {@link OrderTracker}. Not thread-safe: the store calls it under its lock.
 */
interface TierIndex {

    /** Adds {@code entry}, which is not in any index, under its current usage. */
    void add(SegmentEntry entry);

    /**
     * Removes {@code entry}, which this index holds (its usage may have changed by uses since it
     * was filed; the index finds it by what it was filed under).
     *
     * @return false if it could not be found (only an inconsistent custom order can cause that)
     */
    boolean remove(SegmentEntry entry);

    /**
     * {@code entry}, which this index holds, was just used: its access count grew by one and its
     * last use is the store's newest tick. The index re-files it now or, if it can repair the
     * position later, when it next reads it in order.
     *
     * @return false if it could not be found (only an inconsistent custom order can cause that)
     */
    boolean used(SegmentEntry entry);

    /**
     * Appends keys to {@code keys} in demotion order until their sizes add up to at least
     * {@code needed} ({@code > 0}) or the tier is exhausted. O(k) plus a lookup of the first.
     */
    void collectCandidates(long needed, List<String> keys);
}
