package dev.kvtier.store;

import java.util.List;

/**
 * The segments of one tier in an order policy's order, ties broken by {@link SegmentEntry#lastUse}:
 * the per-tier half of {@link OrderTracker}. Not thread-safe: the store calls it under its lock.
 * Every call comes after the entry's usage and tier have changed.
 */
interface TierIndex {

    /** {@code entry} is now on this tier (registered, or moved here). */
    void arrived(SegmentEntry entry);

    /**
     * {@code entry}, which this index held, is no longer on this tier (moved away, or about to be
     * removed from the store).
     *
     * @return false if it could not be found (only an inconsistent custom order can cause that)
     */
    boolean left(SegmentEntry entry);

    /**
     * {@code entry}, which this index holds, was just used: its access count grew by one and its
     * last use is the store's newest tick. The index re-files it now or, if it can repair the
     * position later, when it next reads it in order.
     *
     * @return false if it could not be found (only an inconsistent custom order can cause that)
     */
    boolean used(SegmentEntry entry);

    /**
     * {@code entry} was just used, as for {@link #used}, but reported without the store's lock (see
     * {@link DemotionPolicy.Tracker#usedConcurrently}): true if the index needs nothing done now; false, changing
     * nothing, if it must re-file the entry under the lock. Must not write anything. The default: false.
     */
    default boolean usedConcurrently(SegmentEntry entry) {
        return false;
    }

    /** {@code entry} is being removed from the store: drop anything still kept for it. */
    default void forget(SegmentEntry entry) {
    }

    /**
     * Appends keys to {@code keys} in demotion order until their sizes add up to at least
     * {@code needed} ({@code > 0}) or the tier is exhausted.
     */
    void collectCandidates(long needed, List<String> keys);
}
