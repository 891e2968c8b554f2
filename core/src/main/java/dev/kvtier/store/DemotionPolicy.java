package dev.kvtier.store;

import java.util.Comparator;

/**
 * Decides in which order the segments on one tier are offered for demotion by
 * {@link TieredStore#candidatesForDemotion}: the first in {@link #demotionOrder()} is demoted
 * first.
 *
 * <p>The store keeps, per tier, an index in this order, so a policy is a comparator rather than a
 * procedure: the store re-positions a segment when its usage changes and reads {@code k}
 * candidates off the front of the index, never sorting a tier. For any policy that index is a
 * red-black tree (O(log n) per update, O(k + log n) per query); the two built-in policies are
 * served by the equivalent O(1) frequency/recency bucket index instead. The store breaks every tie
 * the comparator leaves by {@link Usage#lastUse()}, which is unique per segment, so one history
 * always yields one list.
 *
 * <p>Implementations must be stateless and thread-safe, and their comparator must be a total
 * preorder that depends only on the {@link Usage} values it is given (it is called under the
 * store's lock, so it must also be cheap and must not call back into the store).
 *
 * @see #leastAccessedFirst()
 * @see #leastRecentlyUsed()
 */
public interface DemotionPolicy {

    /**
     * What a policy may look at to order segments. The store hands out live views under its lock;
     * do not retain them.
     */
    interface Usage {
        /** The segment's key. */
        String key();

        /** The segment's size in bytes. */
        long sizeBytes();

        /** Promotions plus touches so far. */
        long accessCount();

        /**
         * When the segment was last registered, touched or promoted, on the store's monotonic
         * logical clock: larger is more recent, and no two segments in one store share a value.
         * (Demotion is not a use: it is the store's decision, not the caller's demand.)
         */
        long lastUse();
    }

    /** A short stable name for logs and benchmark labels, e.g. {@code "least-accessed-first"}. */
    String name();

    /** The demotion order: segments that compare smaller are demoted first. */
    Comparator<Usage> demotionOrder();

    /**
     * The default: least accessed first (the seed's order), ties broken by least recently used.
     * This is the LFU-with-LRU-tie-break order.
     */
    static DemotionPolicy leastAccessedFirst() {
        return StandardDemotionPolicy.LEAST_ACCESSED_FIRST;
    }

    /** Plain least recently used first; access counts are ignored. */
    static DemotionPolicy leastRecentlyUsed() {
        return StandardDemotionPolicy.LEAST_RECENTLY_USED;
    }
}
