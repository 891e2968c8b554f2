package dev.kvtier.store;

import java.util.Comparator;

/**
 * The built-in policies, reached through {@link DemotionPolicy}'s factory methods. (Not an enum:
 * {@code Enum.name()} is final and would shadow {@link DemotionPolicy#name()}.)
 */
final class StandardDemotionPolicy implements DemotionPolicy {
    static final DemotionPolicy LEAST_ACCESSED_FIRST = new StandardDemotionPolicy("least-accessed-first", true,
            (a, b) -> {
                int byCount = Long.compare(a.accessCount(), b.accessCount());
                return byCount != 0 ? byCount : Long.compare(a.lastUse(), b.lastUse());
            });
    static final DemotionPolicy LEAST_RECENTLY_USED = new StandardDemotionPolicy("least-recently-used", false,
            (a, b) -> Long.compare(a.lastUse(), b.lastUse()));

    private final String name;
    private final boolean bucketByAccessCount;
    private final Comparator<Usage> order;

    private StandardDemotionPolicy(String name, boolean bucketByAccessCount, Comparator<Usage> order) {
        this.name = name;
        this.bucketByAccessCount = bucketByAccessCount;
        this.order = order;
    }

    /**
     * A fresh index for {@code tier}. Both built-in orders are (access count or nothing, then last use),
     * which {@link UsageBucketIndex} maintains in O(1) per use instead of a tree's O(log n); the
     * property tests check it against {@link #demotionOrder()} sorted naively.
     */
    UsageBucketIndex newTierIndex(int emptyBucketSlack, Tier tier) {
        return new UsageBucketIndex(bucketByAccessCount, emptyBucketSlack, tier);
    }

    @Override
    public DemotionPolicy.Tracker newTracker(long gpuBudget, long cpuBudget) {
        return OrderTracker.of(this, UsageBucketIndex.DEFAULT_EMPTY_BUCKET_SLACK);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Comparator<Usage> demotionOrder() {
        return order;
    }

    @Override
    public String toString() {
        return name;
    }
}
