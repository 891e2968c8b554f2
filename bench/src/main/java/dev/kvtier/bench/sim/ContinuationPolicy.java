package dev.kvtier.bench.sim;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.Tier;

/**
 * An experimental demotion policy (bench only, not offered by the library): evict the blocks whose chain is least
 * likely to be walked again, with that likelihood <b>learned online</b> from the chains the tracker sees, knowing
 * nothing of the generator. Written to test one hypothesis (issue 12, session 9): on multi-turn chat the chance
 * that a conversation goes on falls with its turn (session 7: a greedy told the turn reaches 0.681 of the optimum
 * on chat 3,000 seed 3 at GPU 10%, recency alone 0.664), and a chain's depth stands in for the turn.
 *
 * <p><b>Walks.</b> A request references its prefix chain in order, each block starting where the one before it
 * ended ({@link dev.kvtier.store.PositionRange}); a reference that does not continue the current walk ends it.
 * An ended walk has a depth (its last end position, bucketed on a half-octave log scale) and an end time (the
 * tracker's reference clock). A later walk that references one of the walk's last {@link #CONTINUED_BLOCKS}
 * blocks (a conversation's next turn re-reads everything but the partial last block) <em>continued</em> it.
 * Per depth bucket the tracker keeps decayed counts of walks ended and continued, and a decayed mean of the time
 * from a walk's end to its continuation (G).
 *
 * <p><b>Naming.</b> A block belongs to the walk that referenced it last. Per tier: a queue per depth bucket (blocks
 * of ended walks, in walk-end order), a tails queue (the last block of a walk that registered it: a partial last
 * block, whose key changes when the chain grows, as the library's chain-tail rule) and the current walk's blocks.
 * Candidates: tails; then repeatedly the head of the bucket queue with the lowest estimated chance that its walk
 * is alive, log-odds {@code logit(p_b) - age / G} (a walk continued with chance {@code p_b}, and if alive drawn
 * again after an exponential gap of mean G, not seen for {@code age}); the current walk's blocks last.
 * O(1) per event but the walk's end (O(blocks of the walk), amortised O(1) per reference); a query costs
 * O(buckets) per candidate (a constant: at most 128 buckets, in practice about 10 non-empty).
 * Immutable and thread-safe; each tracker belongs to one store and runs under its lock.
 */
public final class ContinuationPolicy implements DemotionPolicy {
    /** A walk counts as continued when a later walk references one of its last this many blocks. */
    private static final int CONTINUED_BLOCKS = 2;
    private static final int BUCKETS = 128;

    static Object lastTracker; // SCRATCH
    static final boolean WALK_CLOCK = Boolean.getBoolean("walkClock");
    static final double HORIZON = Double.parseDouble(System.getProperty("horizon", "3"));
    static final double[] TRUE_P = readTrueP();
    static double[] readTrueP() {
        String f = System.getProperty("trueP");
        if (f == null) return null;
        try {
            double[] p = new double[BUCKETS];
            java.util.Arrays.fill(p, 0.5);
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of(f))) {
                if (line.isBlank()) continue;
                String[] kv = line.split(" ");
                p[Integer.parseInt(kv[0])] = Math.min(0.999, Math.max(0.001, Double.parseDouble(kv[1])));
            }
            return p;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
    static final boolean TURN_SIGNAL = "turn".equals(System.getProperty("signal"));
    static final boolean SHARED = !Boolean.getBoolean("noShared");
    static final double PRIOR = Double.parseDouble(System.getProperty("prior", "1"));
    private final int decayWalks;
    private final double gapWeight;
    private final boolean learn;
    private final String name;

    /**
     * @param decayWalks ended walks between halvings of the per-bucket counts
     * @param gapWeight weight of a new gap in the decayed mean gap G (0, 1]
     */
    public ContinuationPolicy(int decayWalks, double gapWeight) {
        this(decayWalks, gapWeight, true);
    }

    private ContinuationPolicy(int decayWalks, double gapWeight, boolean learn) {
        if (decayWalks < 1 || !(gapWeight > 0 && gapWeight <= 1)) {
            throw new IllegalArgumentException("decayWalks must be >= 1 and gapWeight in (0, 1], got "
                    + decayWalks + ", " + gapWeight);
        }
        this.decayWalks = decayWalks;
        this.gapWeight = gapWeight;
        this.learn = learn;
        this.name = learn ? String.format(Locale.ROOT, "continuation-%d-%s", decayWalks, gapWeight) : "continuation-recency";
    }

    /** {@code continuation} (decay 1,024 walks, gap weight 1/64) or {@code continuation-D-W}. */
    static Optional<DemotionPolicy> named(String name) {
        if (name.equals("continuation")) {
            return Optional.of(new ContinuationPolicy(1024, 1.0 / 64));
        }
        if (name.equals("continuation-recency")) { // the same queues with one chance for every depth: recency alone
            return Optional.of(new ContinuationPolicy(1024, 1.0 / 64, false));
        }
        if (!name.startsWith("continuation-")) {
            return Optional.empty();
        }
        String[] parts = name.substring("continuation-".length()).split("-");
        return Optional.of(new ContinuationPolicy(Integer.parseInt(parts[0]), Double.parseDouble(parts[1])));
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Tracker newTracker(long gpuBudget, long cpuBudget) {
        ContinuationTracker t = new ContinuationTracker(decayWalks, gapWeight, learn);
        lastTracker = t;
        return t;
    }

    @Override
    public String toString() {
        return name;
    }

    /** Half-octave bucket of an end position: 2 log2(end), rounded down. */
    static int bucket(long end) {
        if (end <= 1) {
            return 0;
        }
        int log = 63 - Long.numberOfLeadingZeros(end);
        int half = log > 0 && ((end >>> (log - 1)) & 1) != 0 ? 1 : 0;
        return Math.min(BUCKETS - 1, 2 * log + half);
    }

    private static final class Walk {
        long end;
        long endTime;
        int bucket;
        boolean ended;
        boolean continued;
        Node last;
        boolean lastRegistered;
        boolean decided;
        Walk nextUndecided;
        /** How many walks continued one another up to this one (1: continues none). */
        int extensions = 1;
        /** The walk this one continued, if any. */
        Walk continues;
    }

    private static final class Node {
        final String key;
        final long sizeBytes;
        final long end;
        final long length;
        int tier;
        Walk walk;
        /** The walk that referenced the block before {@link #walk}. */
        Walk previousWalk;
        /** Referenced, by its latest walk, as a prefix of another chain (a shared prompt or document). */
        boolean shared;
        Node previous;
        Node next;
        Queue queue;
        long namedInQuery;

        Node(String key, long sizeBytes, long end, long length) {
            this.key = key;
            this.sizeBytes = sizeBytes;
            this.end = end;
            this.length = length;
        }
    }

    private static final class Queue {
        Node head;
        Node tail;

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
        }
    }

    private static final class TierQueues {
        final Queue tails = new Queue();
        final Queue current = new Queue();
        final Queue shared = new Queue();
        final Queue[] buckets = new Queue[BUCKETS];

        TierQueues() {
            for (int i = 0; i < BUCKETS; i++) {
                buckets[i] = new Queue();
            }
        }
    }

    private static final class ContinuationTracker implements Tracker {
        private final int decayWalks;
        private final double gapWeight;
        private final boolean learn;
        private final TierQueues[] tiers = new TierQueues[Tier.values().length];
        private final double[] ended = new double[BUCKETS];
        private final double[] continued = new double[BUCKETS];
        private double meanGap = 1;
        private int gaps;
        private long endedWalks;
        private long clock;
        private long queries;
        private Walk walk;
        /** Ended walks whose fate (continued or not) is not counted yet, oldest first. */
        private Walk undecidedHead;
        private Walk undecidedTail;
        private final Node[] cursor = new Node[BUCKETS];

        ContinuationTracker(int decayWalks, double gapWeight, boolean learn) {
            this.learn = learn;
            this.decayWalks = decayWalks;
            this.gapWeight = gapWeight;
            for (int i = 0; i < tiers.length; i++) {
                tiers[i] = new TierQueues();
            }
        }

        private static Node node(Segment segment) {
            return (Node) segment.policyNode();
        }

        private void endWalk() {
            Walk w = walk;
            if (w == null) {
                return;
            }
            walk = null;
            w.ended = true;
            w.endTime = clock;
            w.bucket = TURN_SIGNAL ? Math.min(BUCKETS - 1, w.extensions) : bucket(w.end);
            if (HORIZON <= 0) {
                decide(w);
            } else if (undecidedTail == null) {
                undecidedHead = undecidedTail = w;
            } else {
                undecidedTail.nextUndecided = w;
                undecidedTail = w;
            }
            for (TierQueues q : tiers) {
                for (Node n = q.current.head; n != null; n = q.current.head) {
                    q.current.unlink(n);
                    n.shared = SHARED && n.previousWalk != null && n.previousWalk != w.continues;
                    (n == w.last && w.lastRegistered && !Boolean.getBoolean("noTails") ? q.tails : n.shared ? q.shared : q.buckets[w.bucket]).append(n);
                }
            }
        }

        /** Counts {@code w}'s fate: ended, and whether continued. */
        private void decide(Walk w) {
            if (w.decided) {
                return;
            }
            w.decided = true;
            ended[w.bucket]++;
            if (w.continued) {
                continued[w.bucket]++;
            }
            if (++endedWalks % decayWalks == 0) {
                for (int i = 0; i < BUCKETS; i++) {
                    ended[i] /= 2;
                    continued[i] /= 2;
                }
            }
        }

        /** Decides the walks ended longer ago than the horizon without a continuation: not continued. */
        private void ageUndecided() {
            while (undecidedHead != null && clock - undecidedHead.endTime > HORIZON * meanGap) {
                Walk w = undecidedHead;
                undecidedHead = w.nextUndecided;
                if (undecidedHead == null) {
                    undecidedTail = null;
                }
                w.nextUndecided = null;
                decide(w);
            }
        }

        /** A reference of {@code node} (registered, used or promoted) on tier {@code tier}. */
        private void reference(Node node, long start, boolean registration) {
            if (walk == null || start != walk.end || start == 0) {
                endWalk();
                walk = new Walk();
            }
            if (!WALK_CLOCK || walk.end == 0) {
                clock++;
            }
            Walk before = node.walk;
            if (before != null && before != walk && before.ended && !before.continued
                    && node.end >= before.end - CONTINUED_BLOCKS * node.length) {
                before.continued = true;
                walk.extensions = Math.max(walk.extensions, before.extensions + 1);
                walk.continues = before;
                if (HORIZON <= 0) {
                    continued[before.bucket]++;
                } else if (!before.decided) {
                    decide(before);
                }
                if (Boolean.getBoolean("biasCorrect")) {
                    gaps = Math.min(gaps + 1, (int) (1 / gapWeight));
                    meanGap += Math.max(gapWeight, 1.0 / gaps) * ((clock - before.endTime) - meanGap);
                } else {
                    meanGap += gapWeight * ((clock - before.endTime) - meanGap);
                }
            }
            ageUndecided();
            if (node.walk != walk) {
                node.previousWalk = node.walk;
            }
            node.walk = walk;
            walk.end = node.end;
            walk.last = node;
            walk.lastRegistered = registration;
            if (node.queue != null) {
                node.queue.unlink(node);
            }
            tiers[node.tier].current.append(node);
        }

        @Override
        public void registered(Segment segment, Tier tier) {
            Node node = new Node(segment.key(), segment.sizeBytes(), segment.positions().end(),
                    Math.max(1, segment.positions().end() - segment.positions().start()));
            segment.policyNode(node);
            node.tier = tier.ordinal();
            reference(node, segment.positions().start(), true);
        }

        @Override
        public void used(Segment segment, Tier tier) {
            reference(node(segment), segment.positions().start(), false);
        }

        @Override
        public void promoted(Segment segment, Tier from, Tier to) {
            Node node = node(segment);
            move(node, to);
            reference(node, segment.positions().start(), false);
        }

        private void move(Node node, Tier to) {
            node.queue.unlink(node);
            node.tier = to.ordinal();
            TierQueues q = tiers[node.tier];
            Walk w = node.walk;
            (w == walk ? q.current : node.shared ? q.shared : q.buckets[w.bucket]).append(node);
        }

        @Override
        public void demoted(Segment segment, Tier from, Tier to) {
            move(node(segment), to);
        }

        @Override
        public void rolledBack(Segment segment, Tier from, Tier to) {
            move(node(segment), to);
        }

        @Override
        public void removed(Segment segment, Tier tier) {
            Node node = node(segment);
            node.queue.unlink(node);
        }

        /** Log-odds that the walk of a block at the head of bucket {@code b}, ended {@code age} ago, is alive. */
        private double aliveLogOdds(int b, long age) {
            if (!learn) {
                return -age;
            }
            double p = TRUE_P != null ? TRUE_P[b] : (continued[b] + PRIOR) / (ended[b] + 2 * PRIOR);
            return Math.log(p / (1 - p)) - age / meanGap;
        }

        @Override
        public void collectCandidates(Tier tier, long needed, List<String> keys) {
            TierQueues q = tiers[tier.ordinal()];
            long query = ++queries;
            long[] left = {needed};
            for (Node n = q.tails.head; n != null && left[0] > 0; n = n.next) {
                name(n, query, keys, left);
            }
            for (int b = 0; b < BUCKETS; b++) {
                cursor[b] = q.buckets[b].head;
            }
            while (left[0] > 0) {
                int best = -1;
                double bestOdds = Double.POSITIVE_INFINITY;
                for (int b = 0; b < BUCKETS; b++) {
                    Node n = cursor[b];
                    if (n != null) {
                        double odds = aliveLogOdds(b, clock - n.walk.endTime);
                        if (odds < bestOdds) {
                            bestOdds = odds;
                            best = b;
                        }
                    }
                }
                if (best < 0) {
                    break;
                }
                Node n = cursor[best];
                cursor[best] = n.next;
                name(n, query, keys, left);
            }
            for (Node n = q.shared.head; n != null && left[0] > 0; n = n.next) {
                name(n, query, keys, left);
            }
            for (Node n = q.current.head; n != null && left[0] > 0; n = n.next) {
                name(n, query, keys, left);
            }
        }

        @Override
        public String toString() {
            StringBuilder out = new StringBuilder("G=" + Math.round(meanGap));
            for (int b = 0; b < BUCKETS; b++) {
                if (ended[b] > 0.5) {
                    out.append(String.format(Locale.ROOT, " b%d:%.0f/%.0f=%.2f", b, continued[b], ended[b], continued[b] / ended[b]));
                }
            }
            return out.toString();
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
