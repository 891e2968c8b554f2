package dev.kvtier.store.policy;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.Tier;

import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.TreeSet;

/**
 * LRU-K with K = 2 (O'Neil, O'Neil and Weikum, "The LRU-K page replacement algorithm for database disk buffering",
 * SIGMOD 1993), one order per tier; reached through {@link DemotionPolicy#lru2()}. Immutable and thread-safe; its
 * trackers are not (each belongs to one store and runs under its lock).
 *
 * <p>A segment's history is its last two uses (registration, touch, promotion) on the store's clock
 * ({@link DemotionPolicy.Usage#lastUse()}). A tier names first the segments with only one known use, least recently
 * used first (their backward 2-distance is infinite), then the others by their second-to-last use, oldest first (the
 * largest backward 2-distance). Why it suits traffic with long reuse distances: a block used once, however recently,
 * leaves before any block used twice, so bursts of one-time blocks cannot flush the re-referenced ones, and among
 * re-referenced blocks the order is by how long two uses took, not by the last one alone.
 *
 * <p><b>History.</b> A segment demoted off a tier keeps its history (the store still holds its record), so a segment
 * coming back to the GPU tier is ordered by its two latest uses wherever they happened: LRU-K's retained history of
 * evicted pages, bounded by the store's segment count. A segment removed from the store leaves its last use in a
 * history of removed keys holding at most as many keys as the store has segments (at least {@value #MIN_HISTORY}),
 * oldest forgotten first; a key registered again while remembered gets it back as its second-to-last use. Demotion and
 * rollback are not uses (a rolled-back promotion keeps its use, as the store keeps its {@code lastUse}).
 *
 * <p>Costs: O(log n) per event for a tier of n segments (a red-black tree ordered by the two uses), O(k + log n) for
 * k candidates; queries change nothing.
 */
public final class LruKPolicy implements DemotionPolicy {
    public static final LruKPolicy INSTANCE = new LruKPolicy();

    /** The fewest removed keys whose last use is remembered. */
    static final int MIN_HISTORY = 64;

    /**
     * The order of a tier: no second-to-last use first ({@link Long#MIN_VALUE}), then by it, then by the last use;
     * the key breaks the ties that only a rolled-back or repeated stamp could leave.
     */
    private static final Comparator<PolicyNode> ORDER = (a, b) -> {
        int byPrevious = Long.compare(a.previousUse, b.previousUse);
        if (byPrevious != 0) {
            return byPrevious;
        }
        int byLast = Long.compare(a.lastUseSeen, b.lastUseSeen);
        return byLast != 0 ? byLast : a.key.compareTo(b.key);
    };

    private LruKPolicy() {
    }

    @Override
    public String name() {
        return "lru-2";
    }

    @Override
    public Tracker newTracker(long gpuBudget, long cpuBudget) {
        return new LruKTracker();
    }

    @Override
    public String toString() {
        return name();
    }

    /** One store's LRU-2 state. */
    static final class LruKTracker implements Tracker {
        @SuppressWarnings("unchecked")
        private final TreeSet<PolicyNode>[] tiers = new TreeSet[Tier.values().length];
        /** The last use of each remembered removed key, oldest removal first. */
        private final LinkedHashMap<String, Long> removedHistory = new LinkedHashMap<>();
        private long segments;

        LruKTracker() {
            for (int i = 0; i < tiers.length; i++) {
                tiers[i] = new TreeSet<>(ORDER);
            }
        }

        @Override
        public void registered(Segment segment, Tier tier) {
            PolicyNode node = PolicyNode.of(segment);
            segments++;
            Long remembered = removedHistory.remove(node.key);
            node.previousUse = remembered == null ? Long.MIN_VALUE : remembered;
            node.lastUseSeen = segment.lastUse();
            tiers[tier.ordinal()].add(node);
        }

        @Override
        public void used(Segment segment, Tier tier) {
            PolicyNode node = PolicyNode.of(segment);
            TreeSet<PolicyNode> order = tiers[tier.ordinal()];
            order.remove(node);
            node.previousUse = node.lastUseSeen;
            node.lastUseSeen = segment.lastUse();
            order.add(node);
        }

        @Override
        public void demoted(Segment segment, Tier from, Tier to) {
            move(PolicyNode.of(segment), from, to);
        }

        @Override
        public void promoted(Segment segment, Tier from, Tier to) {
            PolicyNode node = PolicyNode.of(segment);
            tiers[from.ordinal()].remove(node);
            node.previousUse = node.lastUseSeen;
            node.lastUseSeen = segment.lastUse();
            tiers[to.ordinal()].add(node);
        }

        @Override
        public void rolledBack(Segment segment, Tier from, Tier to) {
            move(PolicyNode.of(segment), from, to);
        }

        private void move(PolicyNode node, Tier from, Tier to) {
            tiers[from.ordinal()].remove(node);
            tiers[to.ordinal()].add(node);
        }

        @Override
        public void removed(Segment segment, Tier tier) {
            PolicyNode node = PolicyNode.of(segment);
            if (!tiers[tier.ordinal()].remove(node)) {
                throw new IllegalStateException("segment " + node.key + " is not filed on " + tier);
            }
            segments--;
            removedHistory.put(node.key, node.lastUseSeen);
            Iterator<Long> oldest = removedHistory.values().iterator();
            while (removedHistory.size() > Math.max(MIN_HISTORY, segments)) {
                oldest.next();
                oldest.remove();
            }
        }

        @Override
        public void collectCandidates(Tier tier, long needed, List<String> keys) {
            long stillNeeded = needed;
            for (PolicyNode node : tiers[tier.ordinal()]) {
                if (stillNeeded <= 0) {
                    return;
                }
                CandidateList.add(keys, node);
                stillNeeded -= node.sizeBytes;
            }
        }

        @Override
        public String toString() {
            StringBuilder out = new StringBuilder("LruKTracker[");
            for (Tier tier : Tier.values()) {
                out.append(tier).append(": ").append(tiers[tier.ordinal()].size()).append(" segments; ");
            }
            return out.append("removed keys remembered: ").append(removedHistory.size()).append(']').toString();
        }
    }
}
