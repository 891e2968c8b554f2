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
 * <p>Given a {@link ChainContinuation} (the {@link DemotionPolicy#adaptiveContinuationS3Fifo()} variant), a fifth
 * simulation names by chain continuation on the sampled keys, with the chances the tier learns from all its walks
 * ({@link #walkEnded} files the keys a walk referenced when it ends).
 *
 * <p>Costs: a reference whose key is not sampled costs a multiply and a compare; a sampled one one probe of an
 * int-keyed open-addressing table shared by the simulations (a key's state in every simulation hangs off its one
 * entry: after a reference every simulation holds the key, so their residents mostly coincide; one probe instead
 * of one per simulation took a touch at 10^3 segments to 0.88-0.90 of its time, bench/results/session7-policy4.md)
 * and O(1) queue moves per simulation, and allocates nothing once the simulations have filled: dropped keys are
 * reused (session 6b's profile found 12% of register+discard in the boxed {@code HashMap<Integer, Node>} this
 * replaced). R starts at 1 and halves (dropping the keys no longer sampled, O(size) once per halving, so amortised
 * O(1)) whenever a simulation holds more than {@link #MAX_RESIDENTS} keys, so memory is bounded whatever the
 * tier's size.
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
    /** Every key some simulation holds. */
    private final Keys keys = new Keys();
    private final Sim[] sims;
    private final double[] hits;
    private int threshold = FULL;
    /** Each simulation's capacity in bytes: the budget at the sample rate {@code threshold / FULL}. */
    private long capacity;
    private long sampled;
    /**
     * The simulation whose behaviour the tracker uses: 0 is S3-FIFO, 1 to {@code FACTORS.length} retention
     * {@code FACTORS[i - 1]}, the one after them naming by chain continuation (where simulated).
     */
    private int choice;
    /** The simulation of naming by chain continuation, or null. */
    private final ContinuationSim continuationSim;

    /** @param budget the tier's budget in bytes, {@code > 0} */
    RetentionShadows(long budget) {
        this(budget, null);
    }

    /**
     * @param budget the tier's budget in bytes, {@code > 0}
     * @param chains what the tier learns of its chains, or null: with it, naming by chain continuation
     *               ({@link ChainContinuation}) is simulated too, and may be chosen
     */
    RetentionShadows(long budget, ChainContinuation chains) {
        if (budget <= 0) {
            throw new IllegalArgumentException("a simulated tier needs a positive budget, got " + budget);
        }
        this.budget = budget;
        this.capacity = budget;
        sims = new Sim[1 + FACTORS.length + (chains == null ? 0 : 1)];
        sims[0] = new S3Sim(keys, 0);
        for (int i = 0; i < FACTORS.length; i++) {
            sims[i + 1] = new RetainSim(keys, i + 1, FACTORS[i]);
        }
        continuationSim = chains == null ? null : new ContinuationSim(keys, FACTORS.length + 1, chains);
        if (continuationSim != null) {
            sims[FACTORS.length + 1] = continuationSim;
        }
        hits = new double[sims.length];
    }

    /**
     * The retention factor the tracker should use now, or 0 for plain S3-FIFO behaviour.
     */
    double retentionFactor() {
        return choice == 0 || choice > FACTORS.length ? 0 : FACTORS[choice - 1];
    }

    /** Whether the tracker should name by chain continuation now ({@link ChainContinuation}). */
    boolean continuing() {
        return choice == FACTORS.length + 1;
    }

    /**
     * The walk in progress ended as {@code walk} (its segments sorted into own and shared ones): the continuation
     * simulation files the sampled keys it referenced (no-op without that simulation).
     */
    void walkEnded(ChainContinuation.Walk walk) {
        if (continuationSim != null) {
            continuationSim.walkEnded(walk, threshold);
        }
    }

    /** The most keys any simulation holds now (bounded by about {@link #MAX_RESIDENTS}). */
    int residents() {
        int most = 0;
        for (Sim sim : sims) {
            most = Math.max(most, sim.residents());
        }
        return most;
    }

    /** The keys the simulations hold between them (each key once, however many hold it). */
    int distinctKeys() {
        return keys.size;
    }

    /**
     * Whether a reference of the key with {@code hash} would reach the simulations now (else {@link #reference}
     * returns at once). Reads one int, so it may be asked without the store's lock (a touch deciding whether it needs
     * the lock); an answer racing a halving of the rate may be stale, which only sends one touch the other way.
     */
    boolean samples(int hash) {
        return sampled(hash, threshold);
    }

    /** The key with {@code hash} and {@code size} bytes was referenced on the tier (registered, used or promoted). */
    void reference(int hash, long size) {
        if (!sampled(hash, threshold)) {
            return;
        }
        Key key = keys.find(hash);
        if (key == null) {
            key = keys.add(hash, sims.length);
        }
        int most = 0;
        for (int i = 0; i < sims.length; i++) {
            if (sims[i].access(key, size, capacity)) {
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
            capacity = (long) ((double) budget * threshold / FULL);
            for (Sim sim : sims) {
                sim.resample(threshold, capacity);
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

    /**
     * A sampled key held by at least one simulation, with its state in each ({@link #nodes}, one per simulation, a
     * node in a queue of that simulation while it holds the key); reused with its nodes after the last simulation
     * drops it ({@link Keys#free}).
     */
    private static final class Key {
        int hash;
        /** How many simulations hold the key; it leaves the table at 0. */
        int holders;
        final Node[] nodes;
        /** The next free key while this one is free. */
        Key nextFree;

        Key(int simulations) {
            nodes = new Node[simulations];
            for (int i = 0; i < simulations; i++) {
                nodes[i] = new Node(this);
            }
        }
    }

    /** A key's state in one simulation: resident there while {@link #queue} is not null. */
    private static final class Node extends LinkedFifo.Link<Node, Fifo> {
        final Key key;
        long size;
        int uses;
        long last;
        /** The continuation simulation: the depth bucket of the key's last walk ({@link ChainContinuation#bucket}). */
        int bucket;

        Node(Key key) {
            this.key = key;
        }

        @Override
        long queuedBytes() {
            return size;
        }
    }

    /**
     * The keys the simulations hold, indexed by key hash in an open-addressing table as {@link EntryTable}
     * (linear probing, Fibonacci home slot, load at most 1/2, backward-shift deletion), the hash in a parallel
     * {@code int[]} so a probe dereferences only the match. The table grows (never shrinks) with the keys, which
     * resampling keeps near {@link #MAX_RESIDENTS} per simulation, so it settles at a few thousand slots.
     */
    private static final class Keys {
        private Key[] slots = new Key[16];
        private int[] hashes = new int[16];
        private int size;
        /** Keys no simulation holds, linked through {@link Key#nextFree}, for the next new ones. */
        private Key free;

        /** The key with {@code hash}, or null when no simulation holds it. */
        Key find(int hash) {
            int mask = slots.length - 1;
            for (int i = home(hash, slots.length); ; i = (i + 1) & mask) {
                Key key = slots[i];
                if (key == null || hashes[i] == hash) {
                    return key;
                }
            }
        }

        /** A key for {@code hash}, which is not in the table, held by no simulation yet. */
        Key add(int hash, int simulations) {
            Key key = free;
            if (key == null) {
                key = new Key(simulations);
            } else {
                free = key.nextFree;
                key.nextFree = null;
            }
            key.hash = hash;
            key.holders = 0;
            if (2 * (size + 1) > slots.length) {
                Key[] oldSlots = slots;
                int[] oldHashes = hashes;
                slots = new Key[2 * oldSlots.length];
                hashes = new int[2 * oldSlots.length];
                OpenAddressing.rehash(oldSlots, oldHashes, slots, hashes);
            }
            OpenAddressing.place(slots, hashes, key, hash);
            size++;
            return key;
        }

        /** Removes {@code key}, which no simulation holds any more, and keeps it for reuse. */
        void remove(Key key) {
            int mask = slots.length - 1;
            int hole = home(key.hash, slots.length);
            while (slots[hole] != key) {
                hole = (hole + 1) & mask;
            }
            OpenAddressing.removeAt(slots, hashes, hole);
            size--;
            key.nextFree = free;
            free = key;
        }

        /**
         * {@link OpenAddressing#home}. The sampled hashes share their top bits under the sampling multiplier
         * (a different one), not under this one, so they still spread over the table.
         */
        private static int home(int hash, int length) {
            return OpenAddressing.home(hash, length);
        }
    }

    /** A FIFO of simulated keys with their byte total. */
    private static final class Fifo extends LinkedFifo<Node, Fifo> {
        Fifo(String name) {
            super(name);
        }
    }

    /** One simulated cache of sampled keys: its state of each key is the key's node at {@link #index}. */
    private abstract static class Sim {
        private final Keys keys;
        private final int index;
        private int size;
        final Fifo first = new Fifo("first");
        final Fifo second = new Fifo("second");

        Sim(Keys keys, int index) {
            this.keys = keys;
            this.index = index;
        }

        /** References {@code key}; returns whether it was a hit. Afterwards the simulation holds the key. */
        abstract boolean access(Key key, long size, long capacity);

        /** Evicts one key; the cache is not empty. */
        abstract void evictOne();

        int residents() {
            return size;
        }

        /** This simulation's node of {@code key} if it holds the key, else null. */
        final Node find(Key key) {
            Node node = key.nodes[index];
            return node.queue == null ? null : node;
        }

        /** This simulation's node of {@code key}, which it does not hold, now held, in no queue yet. */
        final Node insert(Key key, long size) {
            Node node = key.nodes[index];
            node.size = size;
            node.uses = 0;
            node.last = 0;
            key.holders++;
            this.size++;
            return node;
        }

        /** Forgets {@code node}, held and in no queue; its key leaves the table when no simulation holds it. */
        final void forget(Node node) {
            size--;
            if (--node.key.holders == 0) {
                keys.remove(node.key);
            }
        }

        void makeRoom(long size, long capacity) {
            while (this.size > 0 && first.bytes + second.bytes + size > capacity) {
                evictOne();
            }
        }

        final Keys keysTable() {
            return keys;
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
                if (!sampled(node.key.hash, threshold)) {
                    drop(node);
                }
                node = next;
            }
        }
    }

    /** S3-FIFO as {@link S3FifoPolicy}'s default parameters (small 1/5, ghosts 4x), without the chain-tail rule. */
    private static final class S3Sim extends Sim {
        private final GhostKeys ghost = new GhostKeys();

        S3Sim(Keys keys, int index) {
            super(keys, index);
        }

        @Override
        boolean access(Key key, long size, long capacity) {
            Node node = find(key);
            if (node != null) {
                node.uses = Math.min(3, node.uses + 1);
                return true;
            }
            makeRoom(size, capacity);
            node = insert(key, size);
            (ghost.remove(key.hash) ? second : first).append(node);
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
                    ghost.add(node.key.hash);
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

        RetainSim(Keys keys, int index, double factor) {
            super(keys, index);
            this.factor = factor;
        }

        @Override
        boolean access(Key key, long size, long capacity) {
            clock++;
            Node node = find(key);
            if (node != null) {
                node.last = clock;
                node.queue.unlink(node);
                second.append(node);
                return true;
            }
            makeRoom(size, capacity);
            node = insert(key, size);
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

    /**
     * Naming by chain continuation ({@link ChainContinuation}) on the sampled keys, with the chances the tier learns
     * from all its references: keys referenced by the walk in progress (newest last), then at the walk's end filed as
     * shared or by the walk's depth bucket; evicts the oldest key of the bucket with the lowest log-odds that its walk
     * is alive, then shared keys, then the walk in progress. O(non-empty buckets) per eviction.
     */
    private static final class ContinuationSim extends Sim {
        private final ChainContinuation chains;
        /** Keys of ended walks per depth bucket (created when first needed), oldest walk first. */
        private final Fifo[] buckets = new Fifo[ChainContinuation.BUCKETS];
        private final long[] nonEmpty = new long[ChainContinuation.BUCKETS / 64];
        private final Fifo shared = new Fifo("shared");
        private final Fifo current = new Fifo("current");
        /** Walks' last keys that arrived in their walk (likely partial last blocks): evicted first. */
        private final Fifo tails = new Fifo("tails");
        private long heldBytes;

        ContinuationSim(Keys keys, int index, ChainContinuation chains) {
            super(keys, index);
            this.chains = chains;
        }

        @Override
        boolean access(Key key, long size, long capacity) {
            Node node = find(key);
            if (node != null) {
                unlinkFiled(node);
                current.append(node);
                return true;
            }
            makeRoom(size, capacity);
            node = insert(key, size);
            heldBytes += size;
            current.append(node);
            return false;
        }

        private void unlinkFiled(Node node) {
            Fifo queue = node.queue;
            queue.unlink(node);
            if (queue != current && queue != shared && queue != tails && queue.head == null) {
                nonEmpty[node.bucket >>> 6] &= ~(1L << node.bucket);
            }
        }

        /** Files the keys the ended {@code walk} referenced: its sampled shared ones as shared, the rest by its depth. */
        void walkEnded(ChainContinuation.Walk walk, int threshold) {
            if (walk.tail != null && sampled(walk.tail.hash, threshold)) {
                Key key = keysTable().find(walk.tail.hash);
                Node node = key == null ? null : find(key);
                if (node != null && node.queue == current) {
                    current.unlink(node);
                    tails.append(node);
                }
            }
            for (int i = walk.ownCount; i < walk.count; i++) {
                int hash = walk.nodes[i].hash;
                if (sampled(hash, threshold)) {
                    Key key = keysTable().find(hash);
                    Node node = key == null ? null : find(key);
                    if (node != null && node.queue == current) {
                        current.unlink(node);
                        node.last = walk.endTime;
                        shared.append(node);
                    }
                }
            }
            Fifo bucket = buckets[walk.bucket];
            if (bucket == null) {
                bucket = buckets[walk.bucket] = new Fifo("bucket " + walk.bucket);
            }
            for (Node node = current.head; node != null; node = current.head) {
                current.unlink(node);
                node.last = walk.endTime;
                node.bucket = walk.bucket;
                bucket.append(node);
            }
            if (bucket.head != null) {
                nonEmpty[walk.bucket >>> 6] |= 1L << walk.bucket;
            }
        }

        @Override
        void evictOne() {
            if (tails.head != null) {
                drop(tails, tails.head);
                return;
            }
            Node victim = null;
            double lowest = Double.POSITIVE_INFINITY;
            long now = chains.clock();
            for (int word = 0; word < nonEmpty.length; word++) {
                for (long bits = nonEmpty[word]; bits != 0; bits &= bits - 1) {
                    int b = word * 64 + Long.numberOfTrailingZeros(bits);
                    Node head = buckets[b].head;
                    double odds = chains.aliveLogOdds(b, now - head.last);
                    if (odds < lowest) {
                        lowest = odds;
                        victim = head;
                    }
                }
            }
            if (victim == null) {
                victim = shared.head != null ? shared.head : current.head;
            }
            drop(victim.queue, victim);
        }

        @Override
        void resample(int threshold, long capacity) {
            for (int b = 0; b < buckets.length; b++) {
                if (buckets[b] != null) {
                    for (Node node = buckets[b].head; node != null; ) {
                        Node next = node.next;
                        if (!sampled(node.key.hash, threshold)) {
                            drop(buckets[b], node);
                        }
                        node = next;
                    }
                }
            }
            for (Fifo list : new Fifo[] {tails, shared, current}) {
                for (Node node = list.head; node != null; ) {
                    Node next = node.next;
                    if (!sampled(node.key.hash, threshold)) {
                        drop(list, node);
                    }
                    node = next;
                }
            }
            makeRoom(0, capacity);
        }

        /** Its keys are in more queues than the other simulations' two: their bytes are counted here. */
        @Override
        void makeRoom(long size, long capacity) {
            while (residents() > 0 && heldBytes + size > capacity) {
                evictOne();
            }
        }

        private void drop(Fifo list, Node node) {
            if (list == current || list == shared || list == tails) {
                list.unlink(node);
            } else {
                unlinkFiled(node);
            }
            heldBytes -= node.size;
            forget(node);
        }
    }
}
