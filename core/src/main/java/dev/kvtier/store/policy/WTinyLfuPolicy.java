package dev.kvtier.store.policy;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.Tier;

import java.util.List;

/**
 * W-TinyLFU (Einziger, Eytan, Friedman and Manes, "Adaptive software cache management",
 * Middleware 2018; the scheme of Caffeine), one instance per tier over one frequency sketch per
 * store; reached through {@link DemotionPolicy#wTinyLfu()}. Immutable and thread-safe; its trackers
 * are not (each belongs to one store and runs under its lock).
 *
 * <p>Per tier: segments arriving on the tier enter a small LRU <em>window</em>; when the window
 * holds more than 1% of the tier's bytes its oldest move on to <em>probation</em>, flagged as
 * admission candidates. Main space is a segmented LRU, probation and <em>protected</em> (at most 80%
 * of main's bytes; a use in probation moves a segment to protected, whose oldest then fall back to
 * probation). Registration, touch and promotion count a use of the key in a {@link FrequencySketch}
 * shared by the tiers, so popularity survives moves between tiers. To name candidates, the tier is
 * drained as W-TinyLFU evicts when over capacity: the newest candidates (probation's newest end)
 * duel probation's oldest (the victims), and whichever the sketch rates less popular is named (a
 * tie names the candidate: admission must be earned); once no candidate is left, the rest of
 * probation, then protected, then the window are named oldest first. Why it suits a tight GPU
 * budget: a burst of one-time segments cannot flush popular ones, because each must beat them on
 * frequency to stay.
 *
 * <p>Arriving by promotion, demotion or rollback counts as arriving (into the window). Queries name
 * segments without moving or removing them, so asking twice gives the same answer. O(1) per event
 * (amortised: window overflow moves each arrival on once; the sketch: four counters), O(1) per
 * candidate.
 */
public final class WTinyLfuPolicy implements DemotionPolicy {
    public static final WTinyLfuPolicy INSTANCE = new WTinyLfuPolicy();

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

        /** {@code node} arrives on this tier: into the window, whose oldest overflow into probation. */
        void arrive(PolicyNode node) {
            node.fromWindow = false;
            window.append(node);
            long total = window.bytes + probation.bytes + protectedQueue.bytes;
            while (window.size > 1 && window.bytes > total / WINDOW_SHARE_DIVISOR) { // division: no overflow
                PolicyNode oldest = window.head;
                window.unlink(oldest);
                oldest.fromWindow = true;
                probation.append(oldest);
            }
        }

        void leave(PolicyNode node) {
            node.fromWindow = false;
            PolicyNode.Queue queue = node.queue;
            if (queue != window && queue != probation && queue != protectedQueue) {
                throw new IllegalStateException("segment " + node.key + " is not queued on this tier");
            }
            queue.unlink(node);
        }

        void hit(PolicyNode node) {
            PolicyNode.Queue queue = node.queue;
            if (queue == probation) {
                node.fromWindow = false;
                probation.unlink(node);
                protectedQueue.append(node);
                long mainBytes = probation.bytes + protectedQueue.bytes;
                while (protectedQueue.size > 1 && protectedQueue.bytes > mainBytes / 100 * PROTECTED_PERCENT) {
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
            PolicyNode node = PolicyNode.of(segment);
            sketch.ensureCapacity(++segments);
            sketch.increment(node.hash);
            tiers[tier.ordinal()].arrive(node);
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
            tiers[to.ordinal()].arrive(node);
        }

        @Override
        public void removed(Segment segment, Tier tier) {
            tiers[tier.ordinal()].leave(PolicyNode.of(segment));
            segments--;
        }

        @Override
        public void collectCandidates(Tier tier, long needed, List<String> keys) {
            TierQueues q = tiers[tier.ordinal()];
            long stillNeeded = needed;
            // Probation is named from both ends: victims from the oldest end, candidates from the
            // newest; [victim, lastUnnamed] is what is left of it. Nothing moves.
            PolicyNode victim = q.probation.head;
            PolicyNode lastUnnamed = q.probation.tail;
            while (stillNeeded > 0 && victim != null) {
                PolicyNode candidate = lastUnnamed != victim && lastUnnamed.fromWindow ? lastUnnamed : null;
                PolicyNode named;
                if (candidate != null && sketch.frequency(candidate.hash) <= sketch.frequency(victim.hash)) {
                    named = candidate; // not admitted
                    lastUnnamed = candidate.previous;
                } else {
                    named = victim;
                    victim = victim == lastUnnamed ? null : victim.next;
                }
                CandidateList.add(keys, named);
                stillNeeded -= named.sizeBytes;
            }
            stillNeeded = nameOldestFirst(q.protectedQueue.head, stillNeeded, keys);
            nameOldestFirst(q.window.head, stillNeeded, keys);
        }

        /** Names {@code from} and the nodes after it until {@code stillNeeded} is met; returns what is left. */
        private static long nameOldestFirst(PolicyNode from, long stillNeeded, List<String> keys) {
            for (PolicyNode node = from; node != null && stillNeeded > 0; node = node.next) {
                CandidateList.add(keys, node);
                stillNeeded -= node.sizeBytes;
            }
            return stillNeeded;
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
