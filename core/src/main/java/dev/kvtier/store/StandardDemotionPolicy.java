package dev.kvtier.store;

import java.util.Comparator;

/**
 * The built-in policies, reached through {@link DemotionPolicy}'s factory methods. (Not an enum:
 * {@code Enum.name()} is final and would shadow {@link DemotionPolicy#name()}.)
 */
final class StandardDemotionPolicy implements DemotionPolicy {
    static final DemotionPolicy LEAST_ACCESSED_FIRST = new StandardDemotionPolicy("least-accessed-first",
            (a, b) -> {
                int byCount = Long.compare(a.accessCount(), b.accessCount());
                return byCount != 0 ? byCount : Long.compare(a.lastUse(), b.lastUse());
            });
    static final DemotionPolicy LEAST_RECENTLY_USED = new StandardDemotionPolicy("least-recently-used",
            (a, b) -> Long.compare(a.lastUse(), b.lastUse()));

    private final String name;
    private final Comparator<Usage> order;

    private StandardDemotionPolicy(String name, Comparator<Usage> order) {
        this.name = name;
        this.order = order;
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
