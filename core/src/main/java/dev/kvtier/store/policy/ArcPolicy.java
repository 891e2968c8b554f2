package dev.kvtier.store.policy;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.Tier;

import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * ARC (Megiddo and Modha, "ARC: a self-tuning, low overhead replacement cache", FAST 2003), one instance per tier;
 * reached through {@link DemotionPolicy#arc()}. Immutable and thread-safe; its trackers are not (each belongs to one
 * store and runs under its lock).
 *
 * <p>Per tier: two LRU lists of the segments on it, T1 (arrived and not used since) and T2 (used at least once while
 * on the tier, or arrived as a ghost hit), two ghost lists of the keys most recently demoted off the tier, B1 (out of
 * T1) and B2 (out of T2), and a target p for T1's bytes. A use moves a segment to T2's newest end. A segment arriving
 * on the tier (registration, promotion, demotion) whose key is in B1 raises p by its size times
 * max(1, |B2| / |B1|) (recency would have kept it) and goes to T2; in B2, lowers p by its size times
 * max(1, |B1| / |B2|) and goes to T2; otherwise it enters T1 (as does a segment back after a rolled-back move, which stops being
 * a ghost there and teaches p nothing). p stays within 0 and the tier's budget (for the
 * unbounded disk tier, its bytes in use). Candidates are named as ARC's replacement would take them: from T1's oldest
 * end while what is left of T1 exceeds p (or T2 is spent), else from T2's oldest end. A segment named and demoted
 * joins B1 or B2; the ghost lists keep ARC's bounds, with c the tier's segment count before the demotion:
 * |T1| + |B1| at most c and the four lists together at most 2c (B1's oldest, then B2's, forgotten first). ARC's rule
 * that a miss on a key in B2 with |T1| = p evicts from T1 needs the arriving key, which a query does not have, so
 * that tie names from T2.
 *
 * <p>Why it suits traffic that shifts between recency and frequency: p moves towards whichever list's ghosts are
 * being asked for again, learning from its own misses as the traffic goes, from the first demotions of a cold tier.
 *
 * <p>Costs: O(1) per event (list moves, a hash lookup per ghost list on arrival), O(k) for k candidates; queries
 * change nothing. A removed segment leaves its tier's lists; its key may stay a ghost of another tier.
 */
public final class ArcPolicy implements DemotionPolicy {
    public static final ArcPolicy INSTANCE = new ArcPolicy();

    private ArcPolicy() {
    }

    @Override
    public String name() {
        return "arc";
    }

    @Override
    public Tracker newTracker(long gpuBudget, long cpuBudget) {
        return new ArcTracker(gpuBudget, cpuBudget);
    }

    @Override
    public String toString() {
        return name();
    }

    /** ARC's lists of one tier. */
    private static final class TierLists {
        final PolicyNode.Queue t1 = new PolicyNode.Queue("T1");
        final PolicyNode.Queue t2 = new PolicyNode.Queue("T2");
        /** Ghost keys, oldest first. */
        final LinkedHashSet<String> b1 = new LinkedHashSet<>();
        final LinkedHashSet<String> b2 = new LinkedHashSet<>();
        /** The tier's budget in bytes, or -1 for the unbounded disk tier. */
        final long budget;
        /** T1's target in bytes. */
        long target;

        TierLists(long budget) {
            this.budget = budget;
        }

        void arrive(PolicyNode node) {
            if (!b1.isEmpty() && b1.contains(node.key)) {
                long ratio = Math.max(1, b2.size() / b1.size());
                b1.remove(node.key);
                target = Math.min(capacity(), target + ratio * node.sizeBytes);
                t2.append(node);
            } else if (!b2.isEmpty() && b2.contains(node.key)) {
                long ratio = Math.max(1, b1.size() / b2.size());
                b2.remove(node.key);
                target = Math.max(0, target - ratio * node.sizeBytes);
                t2.append(node);
            } else {
                t1.append(node);
            }
        }

        /**
         * {@code node} is back where it was before a move that was rolled back: into T1, and no longer a ghost here
         * (a demotion that did not happen teaches p nothing).
         */
        void returnAfterRollback(PolicyNode node) {
            b1.remove(node.key);
            b2.remove(node.key);
            t1.append(node);
        }

        /** The bytes p may reach: the budget, or for the unbounded tier what is on it. */
        private long capacity() {
            return budget >= 0 ? budget : t1.bytes + t2.bytes;
        }

        void hit(PolicyNode node) {
            PolicyNode.Queue queue = node.queue;
            if (queue != t1 && queue != t2) {
                throw new IllegalStateException("segment " + node.key + " is not listed on this tier");
            }
            queue.unlink(node);
            t2.append(node);
        }

        /** {@code node} leaves the tier: a ghost of the list it was in if it was demoted ({@code evicted}). */
        void leave(PolicyNode node, boolean evicted) {
            PolicyNode.Queue queue = node.queue;
            if (queue != t1 && queue != t2) {
                throw new IllegalStateException("segment " + node.key + " is not listed on this tier");
            }
            int segmentsBefore = t1.size + t2.size;
            queue.unlink(node);
            if (!evicted) {
                return;
            }
            (queue == t1 ? b1 : b2).add(node.key);
            int c = segmentsBefore;
            while (!b1.isEmpty() && t1.size + b1.size() > c) {
                forgetOldest(b1);
            }
            while (t1.size + t2.size + b1.size() + b2.size() > 2 * c) {
                forgetOldest(b2.isEmpty() ? b1 : b2);
            }
        }

        private static void forgetOldest(LinkedHashSet<String> ghosts) {
            Iterator<String> oldest = ghosts.iterator();
            oldest.next();
            oldest.remove();
        }

        void collect(long needed, List<String> keys) {
            long stillNeeded = needed;
            long t1Left = t1.bytes;
            PolicyNode fromT1 = t1.head;
            PolicyNode fromT2 = t2.head;
            while (stillNeeded > 0 && (fromT1 != null || fromT2 != null)) {
                PolicyNode named;
                if (fromT1 != null && (t1Left > target || fromT2 == null)) {
                    named = fromT1;
                    fromT1 = fromT1.next;
                    t1Left -= named.sizeBytes;
                } else {
                    named = fromT2;
                    fromT2 = fromT2.next;
                }
                CandidateList.add(keys, named);
                stillNeeded -= named.sizeBytes;
            }
        }

        @Override
        public String toString() {
            return t1 + " " + t2 + " B1 " + b1.size() + " B2 " + b2.size() + " p " + target;
        }
    }

    /** One store's ARC state. */
    static final class ArcTracker implements Tracker {
        private final TierLists[] tiers = new TierLists[Tier.values().length];

        ArcTracker(long gpuBudget, long cpuBudget) {
            tiers[Tier.GPU.ordinal()] = new TierLists(gpuBudget);
            tiers[Tier.CPU.ordinal()] = new TierLists(cpuBudget);
            tiers[Tier.DISK.ordinal()] = new TierLists(-1);
        }

        @Override
        public void registered(Segment segment, Tier tier) {
            tiers[tier.ordinal()].arrive(PolicyNode.of(segment));
        }

        @Override
        public void used(Segment segment, Tier tier) {
            tiers[tier.ordinal()].hit(PolicyNode.of(segment));
        }

        @Override
        public void demoted(Segment segment, Tier from, Tier to) {
            PolicyNode node = PolicyNode.of(segment);
            tiers[from.ordinal()].leave(node, true);
            tiers[to.ordinal()].arrive(node);
        }

        @Override
        public void promoted(Segment segment, Tier from, Tier to) {
            PolicyNode node = PolicyNode.of(segment);
            tiers[from.ordinal()].leave(node, false);
            tiers[to.ordinal()].arrive(node);
        }

        @Override
        public void rolledBack(Segment segment, Tier from, Tier to) {
            PolicyNode node = PolicyNode.of(segment);
            tiers[from.ordinal()].leave(node, false);
            tiers[to.ordinal()].returnAfterRollback(node);
        }

        @Override
        public void removed(Segment segment, Tier tier) {
            tiers[tier.ordinal()].leave(PolicyNode.of(segment), false);
        }

        @Override
        public void collectCandidates(Tier tier, long needed, List<String> keys) {
            tiers[tier.ordinal()].collect(needed, keys);
        }

        @Override
        public String toString() {
            StringBuilder out = new StringBuilder("ArcTracker[");
            for (Tier tier : Tier.values()) {
                out.append(tier).append(": ").append(tiers[tier.ordinal()]).append("; ");
            }
            return out.append(']').toString();
        }
    }
}
