package dev.kvtier.store;

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
 * simulation (an int-keyed open-addressing table, linked queues) and allocates nothing once the simulations
 * have filled: evicted nodes are reused (session 6b's profile found 12% of register+discard in the boxed
 * {@code HashMap<Integer, Node>} this replaced). R starts at 1 and halves (dropping the keys no longer sampled, O(size)
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

    /** A simulated key; reused after eviction (see {@link Sim#newNode}), so no field is final. */
    private static final class Node {
        int hash;
        long size;
        Node previous;
        /** The next in its queue, or, while the node is free, the next free node. */
        Node next;
        Fifo queue;
        int uses;
        long last;
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

    /**
     * One simulated cache of sampled keys, indexed by key hash in an open-addressing table as {@link EntryTable}
     * (linear probing, Fibonacci home slot, load at most 1/2, backward-shift deletion), the hash in a parallel
     * {@code int[]} so a probe dereferences only the match. The table grows (never shrinks) with the residents,
     * which resampling keeps near {@link #MAX_RESIDENTS}, so it settles at 1,024 slots.
     */
    private abstract static class Sim {
        private Node[] slots = new Node[16];
        private int[] hashes = new int[16];
        private int size;
        /** Evicted nodes, linked through {@link Node#next}, for the next misses. */
        private Node free;
        final Fifo first = new Fifo();
        final Fifo second = new Fifo();

        /** References {@code hash}; returns whether it was a hit. */
        abstract boolean access(int hash, long size, long capacity);

        /** Evicts one key; the cache is not empty. */
        abstract void evictOne();

        int residents() {
            return size;
        }

        /** The resident key with {@code hash}, or null. */
        final Node find(int hash) {
            int mask = slots.length - 1;
            for (int i = home(hash, slots.length); ; i = (i + 1) & mask) {
                Node node = slots[i];
                if (node == null || hashes[i] == hash) {
                    return node;
                }
            }
        }

        /** A resident node for {@code hash}, which is not resident, in no queue yet. */
        final Node insert(int hash, long size) {
            Node node = free;
            if (node == null) {
                node = new Node();
            } else {
                free = node.next;
                node.next = null;
            }
            node.hash = hash;
            node.size = size;
            node.uses = 0;
            node.last = 0;
            if (2 * (this.size + 1) > slots.length) {
                grow();
            }
            place(node, hash);
            this.size++;
            return node;
        }

        /** Forgets {@code node}, resident and in no queue, and keeps it for reuse. */
        final void forget(Node node) {
            int mask = slots.length - 1;
            int hole = home(node.hash, slots.length);
            while (slots[hole] != node) {
                hole = (hole + 1) & mask;
            }
            OpenAddressing.removeAt(slots, hashes, hole);
            size--;
            node.next = free;
            free = node;
        }

        private void place(Node node, int hash) {
            OpenAddressing.place(slots, hashes, node, hash);
        }

        private void grow() {
            Node[] oldSlots = slots;
            int[] oldHashes = hashes;
            slots = new Node[2 * oldSlots.length];
            hashes = new int[2 * oldSlots.length];
            OpenAddressing.rehash(oldSlots, oldHashes, slots, hashes);
        }

        /**
         * {@link OpenAddressing#home}. The sampled hashes share their top bits under the sampling multiplier
         * (a different one), not under this one, so they still spread over the table.
         */
        private static int home(int hash, int length) {
            return OpenAddressing.home(hash, length);
        }

        void makeRoom(long size, long capacity) {
            while (this.size > 0 && first.bytes + second.bytes + size > capacity) {
                evictOne();
            }
        }

        void drop(Node node) {
            node.queue.unlink(node);
            forget(node);
        }

        /** Forgets the keys no longer sampled under {@code threshold} and shrinks to {@code capacity}. */
        void resample(int threshold, long capacity) {
            dropUnsampled(first, threshold);
            dropUnsampled(second, threshold);
            makeRoom(0, capacity);
        }

        private void dropUnsampled(Fifo list, int threshold) {
            for (Node node = list.head; node != null; ) {
                Node next = node.next;
                if (!sampled(node.hash, threshold)) {
                    drop(node);
                }
                node = next;
            }
        }
    }

    /** S3-FIFO as {@link S3FifoPolicy}'s default parameters (small 1/5, ghosts 4x), without the chain-tail rule. */
    private static final class S3Sim extends Sim {
        private final GhostKeys ghost = new GhostKeys();

        @Override
        boolean access(int hash, long size, long capacity) {
            Node node = find(hash);
            if (node != null) {
                node.uses = Math.min(3, node.uses + 1);
                return true;
            }
            makeRoom(size, capacity);
            node = insert(hash, size);
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
                    forget(node);
                    ghost.capacity(Math.max(64, 4 * residents()));
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
                forget(node);
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
            Node node = find(hash);
            if (node != null) {
                node.last = clock;
                node.queue.unlink(node);
                second.append(node);
                return true;
            }
            makeRoom(size, capacity);
            node = insert(hash, size);
            node.last = clock;
            first.append(node);
            return false;
        }

        @Override
        void evictOne() {
            long staleAge = (long) (factor * Math.max(1, residents()));
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
