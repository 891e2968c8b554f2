package dev.kvtier.bench.sim;

import java.util.List;
import java.util.Locale;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.Tier;

/**
 * An experimental demotion policy (bench only, not offered by the library): keep a stable set of segments
 * rather than the most recent ones. Written to test one hypothesis on chat traces with user think time
 * ({@code chat-sessions}): a conversation's blocks, just read, are not read again for at least the time its
 * answer takes to generate plus the user's think time, so in a small GPU tier recency is the wrong signal; a
 * set of segments held long enough to be there when their conversation comes back gets more hits.
 *
 * <p>Per tier three queues: <em>tails</em> (the chain-tail rule of the library's default, see
 * {@link DemotionPolicy#chainAwareS3Fifo()}: a registered segment whose chain no registration continues
 * within 32 accesses), <em>probation</em> (segments that arrived on the tier and were not used there since,
 * in arrival order) and <em>protected</em> (segments used while on the tier, least recently used first).
 * Candidates, in order: tails; segments <em>stale</em> for longer than {@code staleFactor} times the tier's
 * segment count in accesses (probation then protected, oldest first); then probation <b>newest first</b> (the
 * segments that arrived last leave first, so the older ones stay until their next use); then protected, least
 * recently used first. {@code staleFactor} is a fixed knob: how long an unused segment is worth keeping
 * depends on the workload's reuse times, which this policy does not learn (what
 * that costs on document QA: {@link PolicyTraceCheck} with {@code retain-F}).
 *
 * <p>O(1) per event (queue links, a scan of at most 64 pending chain tails per registration); a query for
 * k candidates is O(k + named segments skipped), and a candidate named in the same query is skipped by a
 * per-query stamp. Immutable and thread-safe; each tracker belongs to one store and runs under its lock.
 */
public final class RetainingPolicy implements DemotionPolicy {
    private static final int CONTINUATION_WINDOW = 32;
    private static final int PENDING = 2 * CONTINUATION_WINDOW;

    private final double staleFactor;
    private final String name;

    /**
     * @param staleFactor how many times the tier's segment count in accesses an unused segment is kept
     * @throws IllegalArgumentException naming the value when it is not positive
     */
    public RetainingPolicy(double staleFactor) {
        if (!(staleFactor > 0)) {
            throw new IllegalArgumentException("staleFactor must be positive, got " + staleFactor);
        }
        this.staleFactor = staleFactor;
        this.name = String.format(Locale.ROOT, "retain-%s", staleFactor == Math.rint(staleFactor)
                ? Long.toString((long) staleFactor) : Double.toString(staleFactor));
    }

    /** The policy called {@code name} ({@code retain-F}, F the stale factor), if it is one of these. */
    static java.util.Optional<DemotionPolicy> named(String name) {
        if (!name.startsWith("retain-")) {
            return java.util.Optional.empty();
        }
        try {
            return java.util.Optional.of(new RetainingPolicy(Double.parseDouble(name.substring("retain-".length()))));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("\"" + name + "\": the stale factor after retain- is not a number", e);
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Tracker newTracker(long gpuBudget, long cpuBudget) {
        return new RetainingTracker(staleFactor);
    }

    @Override
    public String toString() {
        return name;
    }

    private static final class Node {
        final String key;
        final long sizeBytes;
        final long end;
        int tier;
        /** The tracker's clock at the segment's last arrival on its tier or use there. */
        long last;
        long namedInQuery;
        Node previous;
        Node next;
        Queue queue;

        Node(String key, long sizeBytes, long end) {
            this.key = key;
            this.sizeBytes = sizeBytes;
            this.end = end;
        }
    }

    private static final class Queue {
        Node head;
        Node tail;
        int size;

        void append(Node node) {
            node.queue = this;
            node.previous = tail;
            node.next = null;
            if (tail == null) {
                head = node;
            } else {
                tail.next = node;
            }
            tail = node;
            size++;
        }

        void unlink(Node node) {
            if (node.previous == null) {
                head = node.next;
            } else {
                node.previous.next = node.next;
            }
            if (node.next == null) {
                tail = node.previous;
            } else {
                node.next.previous = node.previous;
            }
            node.previous = null;
            node.next = null;
            node.queue = null;
            size--;
        }
    }

    private static final class TierQueues {
        final Queue tails = new Queue();
        final Queue probation = new Queue();
        final Queue protectedQueue = new Queue();

        int size() {
            return tails.size + probation.size + protectedQueue.size;
        }
    }

    private static final class RetainingTracker implements Tracker {
        private final double staleFactor;
        private final TierQueues[] tiers = new TierQueues[Tier.values().length];
        /** Registrations, uses and promotions so far. */
        private long clock;
        private long queries;
        /** Registered segments awaiting a registration that continues their chain, oldest first (a ring). */
        private final Node[] pending = new Node[PENDING];
        private final long[] pendingSince = new long[PENDING];
        private int pendingOldest;
        private int pendingCount;

        RetainingTracker(double staleFactor) {
            this.staleFactor = staleFactor;
            for (int i = 0; i < tiers.length; i++) {
                tiers[i] = new TierQueues();
            }
        }

        private static Node node(Segment segment) {
            return (Node) segment.policyNode();
        }

        /** Judges the pending registrations older than the window: one not continued, still on probation, is a tail. */
        private void agePending() {
            while (pendingCount > 0 && (pending[pendingOldest] == null
                    || clock - pendingSince[pendingOldest] > CONTINUATION_WINDOW)) {
                Node tail = pending[pendingOldest];
                if (tail != null && tail.queue == tiers[tail.tier].probation) {
                    tail.queue.unlink(tail);
                    tiers[tail.tier].tails.append(tail);
                }
                pending[pendingOldest] = null;
                pendingOldest = (pendingOldest + 1) % PENDING;
                pendingCount--;
            }
        }

        @Override
        public void registered(Segment segment, Tier tier) {
            Node node = new Node(segment.key(), segment.sizeBytes(), segment.positions().end());
            segment.policyNode(node);
            node.tier = tier.ordinal();
            node.last = ++clock;
            tiers[node.tier].probation.append(node);
            long start = segment.positions().start();
            for (int k = start == 0 ? -1 : pendingCount - 1; k >= 0; k--) {
                int slot = (pendingOldest + k) % PENDING;
                if (pending[slot] != null && pending[slot].end == start) {
                    pending[slot] = null; // continued: not a tail
                    break;
                }
            }
            agePending();
            if (pendingCount == PENDING) {
                pending[pendingOldest] = null;
                pendingOldest = (pendingOldest + 1) % PENDING;
                pendingCount--;
            }
            int slot = (pendingOldest + pendingCount) % PENDING;
            pending[slot] = node;
            pendingSince[slot] = clock;
            pendingCount++;
        }

        @Override
        public void used(Segment segment, Tier tier) {
            Node node = node(segment);
            node.last = ++clock;
            node.queue.unlink(node);
            tiers[node.tier].protectedQueue.append(node);
            agePending();
        }

        private void arrive(Node node, Tier to) {
            node.queue.unlink(node);
            node.tier = to.ordinal();
            node.last = clock;
            tiers[node.tier].probation.append(node);
        }

        @Override
        public void demoted(Segment segment, Tier from, Tier to) {
            arrive(node(segment), to);
        }

        @Override
        public void promoted(Segment segment, Tier from, Tier to) {
            ++clock;
            arrive(node(segment), to);
            agePending();
        }

        @Override
        public void rolledBack(Segment segment, Tier from, Tier to) {
            arrive(node(segment), to);
        }

        @Override
        public void removed(Segment segment, Tier tier) {
            Node node = node(segment);
            node.queue.unlink(node);
        }

        @Override
        public void collectCandidates(Tier tier, long needed, List<String> keys) {
            TierQueues q = tiers[tier.ordinal()];
            long query = ++queries;
            long staleAge = (long) (staleFactor * Math.max(1, q.size()));
            long[] left = {needed};
            for (Node n = q.tails.head; n != null && left[0] > 0; n = n.next) {
                name(n, query, keys, left);
            }
            for (Node n = q.probation.head; n != null && left[0] > 0 && clock - n.last > staleAge; n = n.next) {
                name(n, query, keys, left);
            }
            for (Node n = q.protectedQueue.head; n != null && left[0] > 0 && clock - n.last > staleAge; n = n.next) {
                name(n, query, keys, left);
            }
            for (Node n = q.probation.tail; n != null && left[0] > 0; n = n.previous) {
                name(n, query, keys, left);
            }
            for (Node n = q.protectedQueue.head; n != null && left[0] > 0; n = n.next) {
                name(n, query, keys, left);
            }
        }

        private static void name(Node n, long query, List<String> keys, long[] left) {
            if (n.namedInQuery != query) {
                n.namedInQuery = query;
                keys.add(n.key);
                left[0] -= n.sizeBytes;
            }
        }
    }
}
