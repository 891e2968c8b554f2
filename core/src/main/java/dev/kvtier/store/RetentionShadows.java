package dev.kvtier.store;

import java.util.HashMap;
import java.util.Map;

/**
 * Miniature simulations (Waldspurger, Saemundsson, Ahmad and Park, "Cache modeling and optimization using
 * miniature simulations", USENIX ATC 2017) that choose, online, how {@link S3FifoPolicy}'s adaptive variant
 * names a tier's segments: as S3-FIFO does, or by <em>retention</em> (keep a stable set: stale segments first,
 * then the newest unused arrivals; see {@link S3FifoPolicy}). Not thread-safe: owned by one tracker, used under
 * its store's lock.
 *
 * <p>The tier's reference stream (registrations, uses and promotions onto it) is sampled by key hash at rate R,
 * and each candidate behaviour is simulated on the sampled keys in a cache of R times the tier's budget: one
 * S3-FIFO (small queue 1/5, ghosts) and one retention cache per factor in {@link #FACTORS}. Each counts its
 * hits, halved every {@link #decayPeriod()} sampled references so that the choice follows the workload; the
 * behaviour with the most recent hits is the tracker's, S3-FIFO unless another beats it by a margin. Why
 * simulated rather than learned from the tier's own evictions: a behaviour that is not in use evicts nothing,
 * so its ghosts could never show what it would have kept (session 5 found ghost-driven adaptation of the
 * retention time converging on the wrong value on document QA).
 *
 * <p>Costs: a reference whose key is not sampled costs a multiply and a compare; a sampled one O(1) per
 * simulation (hash map, linked queues). R starts at 1 and halves (dropping the keys no longer sampled, O(size)
 * once per halving, so amortised O(1)) whenever a simulation holds more than {@link #MAX_RESIDENTS} keys, so
 * memory is bounded whatever the tier's size.
 */
final class RetentionShadows {
    /**
     * Retention times simulated, in multiples of the tier's segment count (in accesses): a segment not used
     * for that long is named before anything else. A family rather than one value because the right one
     * depends on the workload's reuse times (session 5: 3 suited chat with think time, 6 document QA).
     */
    static final double[] FACTORS = {1.5, 3, 6};
    /**
     * Keys one simulation may hold before the sample rate halves: small, because a sampled reference costs a hash
     * lookup and queue moves in every simulation (at 10^3 GPU segments 2,048 cost 233 ns per reference against
     * LRU's 169 in PolicyOpCost, 256 costs 106); the choice was as good with 256 as with 512 or 2,048 on the
     * generated traces (bench/results/session6-policy.md).
     */
    static final int MAX_RESIDENTS = 256;
    /** Sample values are 16 bits: a key is sampled while its value is below the threshold. */
    private static final int FULL = 1 << 16;

    private final long budget;
    private final Sim[] sims;
    private final double[] hits;
    private int threshold = FULL;
    private long sampled;
    /** The simulation whose behaviour the tracker uses: 0 is S3-FIFO, i > 0 retention {@code FACTORS[i - 1]}. */
    private int choice;

    /** @param budget the tier's budget in bytes, {@code > 0} */
    RetentionShadows(long budget) {
        if (budget <= 0) {
            throw new IllegalArgumentException("a simulated tier needs a positive budget, got " + budget);
        }
        this.budget = budget;
        sims = new Sim[1 + FACTORS.length];
        sims[0] = new S3Sim();
        for (int i = 0; i < FACTORS.length; i++) {
            sims[i + 1] = new RetainSim(FACTORS[i]);
        }
        hits = new double[sims.length];
    }

    /**
     * The retention factor the tracker should use now, or 0 for plain S3-FIFO behaviour.
     */
    double retentionFactor() {
        return choice == 0 ? 0 : FACTORS[choice - 1];
    }

    /** The most keys any simulation holds now (bounded by about {@link #MAX_RESIDENTS}). */
    int residents() {
        int most = 0;
        for (Sim sim : sims) {
            most = Math.max(most, sim.residents());
        }
        return most;
    }

    /** The key with {@code hash} and {@code size} bytes was referenced on the tier (registered, used or promoted). */
    void reference(int hash, long size) {
        int sample = (hash * 0x2C1B3C6D) >>> 16;
        if (sample >= threshold) {
            return;
        }
        long capacity = (long) ((double) budget * threshold / FULL);
        int most = 0;
        for (int i = 0; i < sims.length; i++) {
            if (sims[i].access(hash, size, capacity)) {
                hits[i]++;
            }
            most = Math.max(most, sims[i].residents());
        }
        if (++sampled % decayPeriod() == 0) {
            for (int i = 0; i < hits.length; i++) {
                hits[i] /= 2;
            }
        }
        int best = choice;
        for (int i = 0; i < hits.length; i++) {
            if (hits[i] > hits[best]) {
                best = i;
            }
        }
        // A margin against flapping between behaviours that are about equal (each switch reshuffles the tier).
        if (best != choice && hits[best] > hits[choice] * 1.02 + 2) {
            choice = best;
        }
        if (most > MAX_RESIDENTS && threshold > 1) {
            threshold /= 2;
            long smaller = (long) ((double) budget * threshold / FULL);
            for (Sim sim : sims) {
                sim.resample(threshold, smaller);
            }
        }
    }

    /** Sampled references between halvings of the hit counts: about four turnovers of a full simulation. */
    private long decayPeriod() {
        return 4L * MAX_RESIDENTS;
    }

    private static boolean sampled(int hash, int threshold) {
        return (hash * 0x2C1B3C6D) >>> 16 < threshold;
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder("RetentionShadows[rate ").append(threshold).append("/").append(FULL)
                .append(", choice ").append(choice).append(", hits");
        for (double h : hits) {
            out.append(' ').append(Math.round(h));
        }
        return out.append(']').toString();
    }

    /** A simulated key. */
    private static final class Node {
        final int hash;
        final long size;
        Node previous;
        Node next;
        Fifo queue;
        int uses;
        long last;

        Node(int hash, long size) {
            this.hash = hash;
            this.size = size;
        }
    }

    /** A doubly linked FIFO of simulated keys with their byte total. */
    private static final class Fifo {
        Node head;
        Node tail;
        long bytes;

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
            bytes += node.size;
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
            bytes -= node.size;
        }
    }

    /** One simulated cache of sampled keys. */
    private abstract static class Sim {
        final Map<Integer, Node> nodes = new HashMap<>();
        final Fifo first = new Fifo();
        final Fifo second = new Fifo();

        /** References {@code hash}; returns whether it was a hit. */
        abstract boolean access(int hash, long size, long capacity);

        /** Evicts one key; the cache is not empty. */
        abstract void evictOne();

        int residents() {
            return nodes.size();
        }

        void makeRoom(long size, long capacity) {
            while (!nodes.isEmpty() && first.bytes + second.bytes + size > capacity) {
                evictOne();
            }
        }

        void drop(Node node) {
            node.queue.unlink(node);
            nodes.remove(node.hash);
        }

        /** Forgets the keys no longer sampled under {@code threshold} and shrinks to {@code capacity}. */
        void resample(int threshold, long capacity) {
            for (Fifo list : new Fifo[] {first, second}) {
                for (Node node = list.head; node != null; ) {
                    Node next = node.next;
                    if (!sampled(node.hash, threshold)) {
                        drop(node);
                    }
                    node = next;
                }
            }
            makeRoom(0, capacity);
        }
    }

    /** S3-FIFO as {@link S3FifoPolicy}'s default parameters (small 1/5, ghosts 4x), without the chain-tail rule. */
    private static final class S3Sim extends Sim {
        private final GhostKeys ghost = new GhostKeys();

        @Override
        boolean access(int hash, long size, long capacity) {
            Node node = nodes.get(hash);
            if (node != null) {
                node.uses = Math.min(3, node.uses + 1);
                return true;
            }
            makeRoom(size, capacity);
            node = new Node(hash, size);
            nodes.put(hash, node);
            (ghost.remove(hash) ? second : first).append(node);
            return false;
        }

        @Override
        void evictOne() {
            Fifo small = first;
            Fifo main = second;
            while (true) {
                if (small.head != null && (main.head == null || small.bytes >= (small.bytes + main.bytes) / 5)) {
                    Node node = small.head;
                    small.unlink(node);
                    if (node.uses > 0) {
                        main.append(node);
                        continue;
                    }
                    nodes.remove(node.hash);
                    ghost.capacity(Math.max(64, 4 * nodes.size()));
                    ghost.add(node.hash);
                    return;
                }
                Node node = main.head;
                main.unlink(node);
                if (node.uses > 0) {
                    node.uses--;
                    main.append(node);
                    continue;
                }
                nodes.remove(node.hash);
                return;
            }
        }
    }

    /**
     * Retention: probation (arrived, unused since) and protected (used, least recently used first); stale keys
     * (unused for {@code factor} times the cache's key count in references) leave first, then the newest on
     * probation, then the least recently used protected one.
     */
    private static final class RetainSim extends Sim {
        private final double factor;
        private long clock;

        RetainSim(double factor) {
            this.factor = factor;
        }

        @Override
        boolean access(int hash, long size, long capacity) {
            clock++;
            Node node = nodes.get(hash);
            if (node != null) {
                node.last = clock;
                node.queue.unlink(node);
                second.append(node);
                return true;
            }
            makeRoom(size, capacity);
            node = new Node(hash, size);
            node.last = clock;
            nodes.put(hash, node);
            first.append(node);
            return false;
        }

        @Override
        void evictOne() {
            long staleAge = (long) (factor * Math.max(1, nodes.size()));
            Node victim;
            if (first.head != null && clock - first.head.last > staleAge) {
                victim = first.head;
            } else if (second.head != null && clock - second.head.last > staleAge) {
                victim = second.head;
            } else if (first.tail != null) {
                victim = first.tail;
            } else {
                victim = second.head;
            }
            drop(victim);
        }
    }
}
