package dev.kvtier.store;

import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;

/**
 * A {@link TierIndex} for any policy: a red-black tree in the policy's order, ties by last use
 * (unique per segment, so the order is total). O(log n) per add or remove; k candidates cost
 * O(k + log n).
 */
final class SortedTierIndex implements TierIndex {
    private final TreeSet<SegmentEntry> entries;

    SortedTierIndex(Comparator<DemotionPolicy.Usage> policyOrder) {
        this.entries = new TreeSet<>((a, b) -> {
            int byPolicy = policyOrder.compare(a, b);
            return byPolicy != 0 ? byPolicy : Long.compare(a.lastUse, b.lastUse);
        });
    }

    @Override
    public void add(SegmentEntry entry) {
        entries.add(entry);
    }

    @Override
    public boolean remove(SegmentEntry entry) {
        return entries.remove(entry);
    }

    @Override
    public void collectCandidates(long needed, List<String> keys) {
        // Counting down from a positive value by non-negative sizes cannot overflow.
        long stillNeeded = needed;
        for (SegmentEntry entry : entries) {
            keys.add(entry.key);
            stillNeeded -= entry.sizeBytes;
            if (stillNeeded <= 0) {
                return;
            }
        }
    }
}
