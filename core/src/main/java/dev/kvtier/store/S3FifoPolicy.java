package dev.kvtier.store;

import java.util.LinkedHashMap;
import java.util.List;

/**
 * S3-FIFO (Yang, Zhang, Qiu, Yue and Vinayak, "FIFO queues are all you need for cache eviction",
 * SOSP 2023), one instance per tier; reached through {@link DemotionPolicy#s3Fifo()}. Immutable and
 * thread-safe; its trackers are not (each belongs to one store and runs under its lock).
 *
 * <p>Per tier: a small FIFO that segments arriving on the tier enter, a main FIFO, and a ghost FIFO
 * of the keys most recently demoted out of the small queue. A use raises the segment's counter
 * (capped at 3). To name candidates, the tier is drained as S3-FIFO evicts: from the small queue
 * while it holds at least 10% of the tier's bytes (a used segment moves to main instead of being
 * named), else from main (a used segment is reinserted with its counter decremented). A segment
 * arriving whose key is in the ghost goes straight to main. Why it suits a tight GPU budget: one-hit
 * segments leave after a short probation in the small queue without displacing reused ones.
 *
 * <p>Arriving by promotion, demotion or rollback counts as arriving (the queue a segment had on
 * another tier is not remembered). Queries reorganise the queues as an eviction pass would (moves
 * to main, counter decrements) but name segments without removing them; answers are a function of
 * the history of events and queries. Costs: O(1) per event; a query is O(k) plus the moves it makes,
 * each paid for by an earlier use (amortised O(1)).
 */
final class S3FifoPolicy implements DemotionPolicy {
    static final S3FifoPolicy INSTANCE = new S3FifoPolicy();

    /** The small queue's share of the tier's bytes: 1/10, as in the paper. */
    private static final int SMALL_SHARE_DIVISOR = 10;
    private static final int MAX_USES = 3;
    /** The fewest ghost keys kept per tier, whatever the tier's segment count. */
    private static final int MIN_GHOSTS = 64;

    private S3FifoPolicy() {
    }

    @Override
    public String name() {
        return "s3-fifo";
    }

    @Override
    public Tracker newTracker(long gpuBudget, long cpuBudget) {
        return new S3FifoTracker();
    }

    @Override
    public String toString() {
        return name();
    }

    /** The queues of one tier. */
    private static final class TierQueues {
        final PolicyNode.Queue small = new PolicyNode.Queue("small");
        final PolicyNode.Queue main = new PolicyNode.Queue("main");
        /** Keys demoted out of the small queue, oldest first; bounded by the tier's segment count. */
        final LinkedHashMap<String, Boolean> ghost = new LinkedHashMap<>();

        void arrive(PolicyNode node) {
            node.uses = 0;
            if (ghost.remove(node.key) != null) {
                main.append(node);
            } else {
                small.append(node);
            }
        }

        void leave(PolicyNode node, boolean evicted) {
            PolicyNode.Queue queue = node.queue;
            if (queue != small && queue != main) {
                throw new IllegalStateException("segment " + node.key + " is not queued on this tier");
            }
            queue.unlink(node);
            if (evicted && queue == small) {
                ghost.put(node.key, Boolean.TRUE);
                int bound = Math.max(MIN_GHOSTS, small.size + main.size);
                var eldest = ghost.keySet().iterator();
                while (ghost.size() > bound) {
                    eldest.next();
                    eldest.remove();
                }
            }
        }
    }

    /** One store's S3-FIFO state. */
    static final class S3FifoTracker implements Tracker {
        private final TierQueues[] tiers = new TierQueues[Tier.values().length];

        S3FifoTracker() {
            for (int i = 0; i < tiers.length; i++) {
                tiers[i] = new TierQueues();
            }
        }

        @Override
        public void registered(Segment segment, Tier tier) {
            PolicyNode node = new PolicyNode(segment);
            segment.policyNode(node);
            tiers[tier.ordinal()].arrive(node);
        }

        @Override
        public void used(Segment segment, Tier tier) {
            PolicyNode node = PolicyNode.of(segment);
            if (node.uses < MAX_USES) {
                node.uses++;
            }
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
            tiers[to.ordinal()].arrive(node);
        }

        @Override
        public void removed(Segment segment, Tier tier) {
            tiers[tier.ordinal()].leave(PolicyNode.of(segment), false);
            segment.policyNode(null);
        }

        @Override
        public void collectCandidates(Tier tier, long needed, List<String> keys) {
            TierQueues q = tiers[tier.ordinal()];
            PolicyNode.Queue small = q.small;
            PolicyNode.Queue main = q.main;
            // Named segments stay where they are (the store has not demoted them yet); the two
            // cursors mark how far each queue has been examined in this query.
            PolicyNode inSmall = small.head;
            PolicyNode inMain = main.head;
            long total = small.bytes + main.bytes;
            long smallLeft = small.bytes;
            long stillNeeded = needed;
            while (stillNeeded > 0 && (inSmall != null || inMain != null)) {
                PolicyNode victim = null;
                if (inSmall != null && (inMain == null || smallLeft >= total / SMALL_SHARE_DIVISOR)) {
                    while (inSmall != null) {
                        PolicyNode node = inSmall;
                        inSmall = node.next;
                        smallLeft -= node.sizeBytes;
                        if (node.uses > 0) { // used while on probation: keep it, in main
                            small.unlink(node);
                            main.append(node);
                            if (inMain == null) {
                                inMain = node;
                            }
                        } else {
                            victim = node;
                            break;
                        }
                    }
                }
                while (victim == null && inMain != null) {
                    PolicyNode node = inMain;
                    inMain = node.next;
                    if (node.uses > 0) { // reinserted; terminates: each pass lowers the counter
                        node.uses--;
                        main.moveToTail(node);
                        if (inMain == null) {
                            inMain = node;
                        }
                    } else {
                        victim = node;
                    }
                }
                if (victim != null) {
                    keys.add(victim.key);
                    stillNeeded -= victim.sizeBytes;
                }
            }
        }

        @Override
        public String toString() {
            StringBuilder out = new StringBuilder("S3FifoTracker[");
            for (Tier tier : Tier.values()) {
                TierQueues q = tiers[tier.ordinal()];
                out.append(tier).append(": ").append(q.small).append(' ').append(q.main)
                        .append(" ghost=").append(q.ghost.size()).append("; ");
            }
            return out.append(']').toString();
        }
    }
}
