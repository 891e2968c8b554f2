package dev.kvtier.store;

import java.util.List;

/**
 * W-TinyLFU (Einziger, Eytan, Friedman and Manes, "Adaptive software cache management",
 * Middleware 2018; the scheme of Caffeine), one instance per tier over one frequency sketch per
 * store; reached through {@link DemotionPolicy#wTinyLfu()}. Immutable and thread-safe; its trackers
 * are not (each belongs to one store and runs under its lock).
 *
 * <p>Per tier: segments arriving on the tier enter a small LRU <em>window</em> (1% of the tier's
 * bytes); behind it a segmented LRU main space, <em>probation</em> and <em>protected</em> (at most
 * 80% of main's bytes; a use in probation moves a segment to protected, whose oldest then fall back
 * to probation). Registration, touch and promotion count a use of the key in a {@link
 * FrequencySketch} shared by the tiers, so popularity survives moves between tiers. To name
 * candidates: while the window holds more than its share, its oldest segment is the candidate
 * and main's oldest (probation first) the victim; the candidate is admitted into main (moved to
 * probation) and the victim named if the sketch says the candidate is more popular, else the
 * candidate is named. Once the window is within its share, main's oldest are named. Why it suits a
 * tight GPU budget: a burst of one-time segments cannot flush popular ones, because they must beat
 * them on frequency to get past the window.
 *
 * <p>Arriving by promotion, demotion or rollback counts as arriving (into the window). Queries
 * move admitted candidates into probation but name segments without removing them; answers are a
 * function of the history of events and queries. O(1) per event (the sketch: four counters), O(1)
 * per candidate.
 */
final class WTinyLfuPolicy implements DemotionPolicy {
    static final WTinyLfuPolicy INSTANCE = new WTinyLfuPolicy();

    /** The window's share of the tier's bytes: 1/100, as in Caffeine's starting point. */
    private static final int WINDOW_SHARE_DIVISOR = 100;
    /** Protected holds at most 80% of main's bytes. */
    private static final int PROTECTED_PERCENT = 80;

    private WTinyLfuPolicy() {
    }

    @Override
    public String name() {
        return "w-tinylfu";
    }

    @Override
    public Tracker newTracker(long gpuBudget, long cpuBudget) {
        return new WTinyLfuTracker();
    }

    @Override
    public String toString() {
        return name();
    }

    /** The three LRU queues of one tier, oldest first. */
    private static final class TierQueues {
        final PolicyNode.Queue window = new PolicyNode.Queue("window");
        final PolicyNode.Queue probation = new PolicyNode.Queue("probation");
        final PolicyNode.Queue protectedQueue = new PolicyNode.Queue("protected");

        void leave(PolicyNode node) {
            PolicyNode.Queue queue = node.queue;
            if (queue != window && queue != probation && queue != protectedQueue) {
                throw new IllegalStateException("segment " + node.key + " is not queued on this tier");
            }
            queue.unlink(node);
        }

        void hit(PolicyNode node) {
            PolicyNode.Queue queue = node.queue;
            if (queue == probation) {
                probation.unlink(node);
                protectedQueue.append(node);
                long mainBytes = probation.bytes + protectedQueue.bytes;
                while (protectedQueue.size > 1 && protectedQueue.bytes * 100 > mainBytes * PROTECTED_PERCENT) {
                    PolicyNode oldest = protectedQueue.head;
                    protectedQueue.unlink(oldest);
                    probation.append(oldest);
                }
            } else if (queue == window || queue == protectedQueue) {
                queue.moveToTail(node);
            } else {
                throw new IllegalStateException("segment " + node.key + " is not queued on this tier");
            }
        }
    }

    /** One store's W-TinyLFU state. */
    static final class WTinyLfuTracker implements Tracker {
        private final TierQueues[] tiers = new TierQueues[Tier.values().length];
        private final FrequencySketch sketch = new FrequencySketch();
        private long segments;

        WTinyLfuTracker() {
            for (int i = 0; i < tiers.length; i++) {
                tiers[i] = new TierQueues();
            }
        }

        @Override
        public void registered(Segment segment, Tier tier) {
            PolicyNode node = new PolicyNode(segment);
            segment.policyNode(node);
            sketch.ensureCapacity(++segments);
            sketch.increment(node.hash);
            tiers[tier.ordinal()].window.append(node);
        }

        @Override
        public void used(Segment segment, Tier tier) {
            PolicyNode node = PolicyNode.of(segment);
            sketch.increment(node.hash);
            tiers[tier.ordinal()].hit(node);
        }

        @Override
        public void demoted(Segment segment, Tier from, Tier to) {
            move(PolicyNode.of(segment), from, to);
        }

        @Override
        public void promoted(Segment segment, Tier from, Tier to) {
            PolicyNode node = PolicyNode.of(segment);
            sketch.increment(node.hash);
            move(node, from, to);
        }

        @Override
        public void rolledBack(Segment segment, Tier from, Tier to) {
            move(PolicyNode.of(segment), from, to);
        }

        private void move(PolicyNode node, Tier from, Tier to) {
            tiers[from.ordinal()].leave(node);
            tiers[to.ordinal()].window.append(node);
        }

        @Override
        public void removed(Segment segment, Tier tier) {
            tiers[tier.ordinal()].leave(PolicyNode.of(segment));
            segment.policyNode(null);
            segments--;
        }

        @Override
        public void collectCandidates(Tier tier, long needed, List<String> keys) {
            TierQueues q = tiers[tier.ordinal()];
            // Named segments stay where they are; the cursors mark how far each queue was examined.
            PolicyNode inWindow = q.window.head;
            PolicyNode inProbation = q.probation.head;
            PolicyNode inProtected = q.protectedQueue.head;
            long windowShare = (q.window.bytes + q.probation.bytes + q.protectedQueue.bytes) / WINDOW_SHARE_DIVISOR;
            long windowLeft = q.window.bytes;
            long stillNeeded = needed;
            while (stillNeeded > 0 && (inWindow != null || inProbation != null || inProtected != null)) {
                PolicyNode named;
                PolicyNode mainOldest = inProbation != null ? inProbation : inProtected;
                if (inWindow != null && (windowLeft > windowShare || mainOldest == null)) {
                    PolicyNode candidate = inWindow;
                    inWindow = candidate.next;
                    windowLeft -= candidate.sizeBytes;
                    if (mainOldest != null && sketch.frequency(candidate.hash) > sketch.frequency(mainOldest.hash)) {
                        q.window.unlink(candidate); // admitted: it displaces main's oldest
                        q.probation.append(candidate);
                        if (inProbation == null) { // probation was used up: the newcomer is next
                            inProbation = candidate;
                        }
                        named = mainOldest;
                    } else {
                        named = candidate;
                    }
                } else {
                    named = mainOldest;
                }
                if (named == inProbation) {
                    inProbation = named.next;
                } else if (named == inProtected) {
                    inProtected = named.next;
                }
                keys.add(named.key);
                stillNeeded -= named.sizeBytes;
            }
        }

        @Override
        public String toString() {
            StringBuilder out = new StringBuilder("WTinyLfuTracker[");
            for (Tier tier : Tier.values()) {
                TierQueues q = tiers[tier.ordinal()];
                out.append(tier).append(": ").append(q.window).append(' ').append(q.probation).append(' ')
                        .append(q.protectedQueue).append("; ");
            }
            return out.append(']').toString();
        }
    }
}
