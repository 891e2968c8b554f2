package dev.kvtier.store;

import dev.kvtier.store.policy.CandidateList;

import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;

/**
 * A {@link TierIndex} for any order policy: a red-black tree in the policy's order, ties by last
 * use (unique per segment, so the order is total). O(log n) per add, remove or use; k candidates
 * cost O(k + log n). Not thread-safe: the store calls it under its lock.
 *
 * <p>Why the tree holds snapshots rather than the entries: the store tells its tracker about a
 * use after the entry's usage has changed, and a tree keyed by live fields could no longer find
 * the entry then. Each node freezes the usage it was filed under, so the comparator always sees
 * the values the node was placed by.
 */
final class SortedTierIndex implements TierIndex {

    /** One filing of an entry: its usage frozen when filed. */
    private static final class Node implements DemotionPolicy.Usage {
        final SegmentEntry entry;
        final long accessCount;
        final long lastUse;

        Node(SegmentEntry entry) {
            this.entry = entry;
            this.accessCount = entry.accessCount;
            this.lastUse = entry.lastUse;
        }

        @Override
        public String key() {
            return entry.key;
        }

        @Override
        public long sizeBytes() {
            return entry.sizeBytes;
        }

        @Override
        public long accessCount() {
            return accessCount;
        }

        @Override
        public long lastUse() {
            return lastUse;
        }

        @Override
        public PositionRange positions() {
            return entry.positions;
        }
    }

    private final TreeSet<Node> nodes;

    SortedTierIndex(Comparator<DemotionPolicy.Usage> policyOrder) {
        this.nodes = new TreeSet<>((a, b) -> {
            int byPolicy = policyOrder.compare(a, b);
            return byPolicy != 0 ? byPolicy : Long.compare(a.lastUse, b.lastUse);
        });
    }

    @Override
    public void arrived(SegmentEntry entry) {
        Node node = new Node(entry);
        entry.policyNode(node);
        nodes.add(node);
    }

    @Override
    public boolean left(SegmentEntry entry) {
        return entry.policyNode() instanceof Node node && node.entry == entry && nodes.remove(node);
    }

    @Override
    public boolean used(SegmentEntry entry) {
        if (!left(entry)) {
            return false;
        }
        arrived(entry);
        return true;
    }

    @Override
    public void collectCandidates(long needed, List<String> keys) {
        // Counting down from a positive value by non-negative sizes cannot overflow.
        long stillNeeded = needed;
        for (Node node : nodes) {
            CandidateList.add(keys, node.entry);
            stillNeeded -= node.entry.sizeBytes;
            if (stillNeeded <= 0) {
                return;
            }
        }
    }
}
