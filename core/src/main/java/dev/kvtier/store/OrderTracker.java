package dev.kvtier.store;

import java.util.Comparator;
import java.util.List;

/**
 * The comparator adapter: a {@link DemotionPolicy.Tracker} that keeps each tier's segments in an
 * order policy's {@link DemotionPolicy#demotionOrder()} (ties by last use). The two built-in orders
 * get the O(1) {@link UsageBucketIndex}, any other order a {@link SortedTierIndex}. Not
 * thread-safe: called under its store's lock, but for the uses the bucket index takes without it
 * ({@link #usedConcurrently}, which writes nothing). The segments it is given are the store's
 * {@link SegmentEntry} records (only {@link TieredStore} calls it).
 */
final class OrderTracker implements DemotionPolicy.Tracker {
    private final String policyName;
    private final TierIndex[] indexes = new TierIndex[Tier.values().length];
    /**
     * Whether its indexes are the built-in bucket indexes, which a use leaves alone in the common case (lazy
     * repair) and so can take without the lock; a custom order's tree re-files on every use and cannot.
     */
    private final boolean concurrentUses;

    private OrderTracker(String policyName, boolean concurrentUses) {
        this.policyName = policyName;
        this.concurrentUses = concurrentUses;
    }

    /**
     * The adapter for {@code policy}; {@code emptyBucketSlack} tunes the bucket index (tests).
     *
     * @throws IllegalArgumentException if {@code policy} has no order and no tracker of its own
     */
    static OrderTracker of(DemotionPolicy policy, int emptyBucketSlack) {
        OrderTracker tracker = new OrderTracker(policy.name(), policy instanceof StandardDemotionPolicy);
        if (policy instanceof StandardDemotionPolicy standard) {
            for (Tier tier : Tier.values()) {
                tracker.indexes[tier.ordinal()] = standard.newTierIndex(emptyBucketSlack, tier);
            }
            return tracker;
        }
        Comparator<DemotionPolicy.Usage> order = policy.demotionOrder();
        if (order == null) {
            throw new IllegalArgumentException("policy " + policy.name()
                    + " returned a null demotionOrder() and does not override newTracker()");
        }
        for (Tier tier : Tier.values()) {
            tracker.indexes[tier.ordinal()] = new SortedTierIndex(order);
        }
        return tracker;
    }

    @Override
    public void registered(DemotionPolicy.Segment segment, Tier tier) {
        indexes[tier.ordinal()].arrived((SegmentEntry) segment);
    }

    @Override
    public void used(DemotionPolicy.Segment segment, Tier tier) {
        if (!indexes[tier.ordinal()].used((SegmentEntry) segment)) {
            throw lost(segment);
        }
    }

    @Override
    public boolean takesConcurrentUses() {
        return concurrentUses;
    }

    /**
     * A use the bucket index need not see now (see UsageBucketIndex#usedConcurrently); false for a custom order. Asks
     * the entry itself ({@link SegmentEntry#takesUseInPlace}, the bucket index's own rule) rather than going through
     * the tier's index: the index array, the index and its tier were a chain of dependent loads that was about a
     * quarter of a touch by key at 10^3 segments.
     */
    @Override
    public boolean usedConcurrently(DemotionPolicy.Segment segment, Tier tier) {
        return concurrentUses && ((SegmentEntry) segment).takesUseInPlace(tier.ordinal());
    }

    @Override
    public void demoted(DemotionPolicy.Segment segment, Tier from, Tier to) {
        move(segment, from, to);
    }

    @Override
    public void promoted(DemotionPolicy.Segment segment, Tier from, Tier to) {
        move(segment, from, to);
    }

    @Override
    public void rolledBack(DemotionPolicy.Segment segment, Tier from, Tier to) {
        move(segment, from, to);
    }

    @Override
    public void removed(DemotionPolicy.Segment segment, Tier tier) {
        SegmentEntry entry = (SegmentEntry) segment;
        if (!indexes[tier.ordinal()].left(entry)) {
            throw lost(segment);
        }
        for (TierIndex index : indexes) {
            index.forget(entry);
        }
    }

    @Override
    public void collectCandidates(Tier tier, long needed, List<String> keys) {
        indexes[tier.ordinal()].collectCandidates(needed, keys);
    }

    private void move(DemotionPolicy.Segment segment, Tier from, Tier to) {
        SegmentEntry entry = (SegmentEntry) segment;
        if (concurrentUses && UsageBucketIndex.movesInPlace(entry, from.ordinal(), to.ordinal())) {
            return; // both bucket indexes would leave it as it is: no index is read (one object, as usedConcurrently)
        }
        if (!indexes[from.ordinal()].left(entry)) {
            throw lost(segment);
        }
        indexes[to.ordinal()].arrived(entry);
    }

    private IllegalStateException lost(DemotionPolicy.Segment segment) {
        return new IllegalStateException("demotion policy " + policyName
                + " is not a consistent order: segment " + segment.key() + " was lost in its tier's index");
    }

    @Override
    public String toString() {
        return "OrderTracker[" + policyName + "]";
    }
}
