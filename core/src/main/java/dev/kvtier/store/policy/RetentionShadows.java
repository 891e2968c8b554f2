package dev.kvtier.store.policy;

import dev.kvtier.store.DemotionPolicy;

import java.util.Arrays;

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
 * so its ghosts could never show what it would have kept (ghost-driven adaptation of the
 * retention time was measured converging on the wrong value on document QA).
 *
 * <p>Given a {@link ChainContinuation} (the {@link DemotionPolicy#adaptiveContinuationS3Fifo()} variant), a fifth
 * simulation names by chain continuation on the sampled keys, with the chances the tier learns from all its walks
 * ({@link #walkEnded} files the keys a walk referenced when it ends).
 *
 * <p>Costs: a reference whose key is not sampled costs a multiply and a compare; a sampled one one probe of an
 * int-keyed open-addressing table shared by the simulations, which gives the key's id (a key's state in every
 * simulation sits at its one id: after a reference every simulation holds the key, so their residents mostly
 * coincide; one probe instead of one per simulation took a touch at 10^3 segments to 0.88-0.90 of its time,
 * {@code PolicyOpCost}) and O(1) list moves per simulation in int arrays ({@link Nodes}: no object
 * per key or per simulated entry, so a move writes no references; a touch at 10^3 segments took 0.88-0.90 of the
 * time it took with node objects, {@code PolicyOpCost}), and allocates nothing once the simulations have
 * filled: dropped keys' ids are reused (a profile found 12% of register+discard in the boxed
 * {@code HashMap<Integer, Node>} that preceded them). R starts at 1 and halves (dropping the keys no longer
 * sampled, O(size) once per halving, so amortised O(1)) whenever a simulation holds more than
 * {@link #MAX_RESIDENTS} keys, so memory is bounded whatever the tier's size.
 */
final class RetentionShadows {
    /**
     * Retention times simulated, in multiples of the tier's segment count (in accesses): a segment not used
     * for that long is named before anything else. A family rather than one value because the right one
     * depends on the workload's reuse times (measured: 3 suited chat with think time, 6 document QA).
     */
    static final double[] FACTORS = {1.5, 3, 6};
    /**
     * Keys one simulation may hold before the sample rate halves: small, because a sampled reference costs a hash
     * lookup and queue moves in every simulation (at 10^3 GPU segments 2,048 cost 233 ns per reference against
     * LRU's 169 in PolicyOpCost, 256 costs 106); the choice was as good with 256 as with 512 or 2,048 on the
     * generated traces ({@code PolicyTraceCheck}).
     */
    static final int MAX_RESIDENTS = 256;
    /** Sample values are 16 bits: a key is sampled while its value is below the threshold. */
    private static final int FULL = 1 << 16;

    private final long budget;
    /** Every key some simulation holds. */
    private final Keys keys;
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
        Nodes nodes = new Nodes(sims.length);
        keys = new Keys(nodes);
        sims[0] = new S3Sim(keys, nodes, 0);
        for (int i = 0; i < FACTORS.length; i++) {
            sims[i + 1] = new RetainSim(keys, nodes, i + 1, FACTORS[i]);
        }
        continuationSim = chains == null ? null : new ContinuationSim(keys, nodes, FACTORS.length + 1, chains);
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

    /** The key ids given out so far: the most keys held at once, give or take the one arriving (ids are reused). */
    int keyIds() {
        return keys.created;
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
        int key = keys.find(hash);
        if (key == Nodes.NONE) {
            key = keys.add(hash);
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
     * Every simulation's state of every key, in arrays indexed by node (a key's nodes side by side, so a
     * sampled reference finds all its states in one or two cache lines), and the simulations' FIFOs linked through
     * them by node number. Why not {@link LinkedFifo} with a node object per key and simulation (the earlier design):
     * a sampled reference moves the key in three or four simulations, and each move through objects wrote
     * references (a GC write barrier each) behind two levels of indirection (key, its node, the node's queue);
     * here a move is int writes into a few arrays that stay in the core's caches.
     */
    private static final class Nodes {
        /** No node: the end of a list, or a node in no list. */
        static final int NONE = -1;
        /** Ints per node: its neighbours towards the head and the tail, its list, and one simulation's own int. */
        private static final int INTS = 4;
        private static final int PREVIOUS = 0;
        private static final int NEXT = 1;
        private static final int LIST = 2;
        private static final int SPARE = 3;
        /** Longs per node: its size in bytes, and when it was last used. */
        private static final int LONGS = 2;

        /** Node {@code (key id << shift) + simulation}: a key's nodes side by side, a power of two of them. */
        final int shift;
        private int[] ints;
        private long[] longs;
        private SimList[] lists = new SimList[8];
        private int listCount;

        Nodes(int simulations) {
            shift = 32 - Integer.numberOfLeadingZeros(simulations - 1);
            ints = new int[(16 << shift) * INTS];
            longs = new long[(16 << shift) * LONGS];
            Arrays.fill(ints, NONE);
        }

        /** Makes room for the nodes of key ids below {@code keys}. */
        void ensureKeys(int keys) {
            int needed = keys << shift;
            if (needed * INTS > ints.length) {
                int old = ints.length;
                ints = Arrays.copyOf(ints, Math.max(needed * INTS, 2 * old));
                Arrays.fill(ints, old, ints.length, NONE);
                longs = Arrays.copyOf(longs, ints.length / INTS * LONGS);
            }
        }

        /** A new empty list of these nodes. */
        SimList newList() {
            if (listCount == lists.length) {
                lists = Arrays.copyOf(lists, 2 * lists.length);
            }
            SimList list = new SimList(listCount);
            lists[listCount++] = list;
            return list;
        }

        /** The list holding {@code node}, or null while it is in none. */
        SimList listOf(int node) {
            int list = ints[node * INTS + LIST];
            return list == NONE ? null : lists[list];
        }

        boolean listed(int node) {
            return ints[node * INTS + LIST] != NONE;
        }

        int next(int node) {
            return ints[node * INTS + NEXT];
        }

        int spare(int node) {
            return ints[node * INTS + SPARE];
        }

        void spare(int node, int value) {
            ints[node * INTS + SPARE] = value;
        }

        long size(int node) {
            return longs[node * LONGS];
        }

        void size(int node, long size) {
            longs[node * LONGS] = size;
        }

        long last(int node) {
            return longs[node * LONGS + 1];
        }

        void last(int node, long last) {
            longs[node * LONGS + 1] = last;
        }

        /** Puts {@code node}, in no list, at the newest end of {@code list}. */
        void append(SimList list, int node) {
            int at = node * INTS;
            int tail = list.tail;
            ints[at + LIST] = list.id;
            ints[at + PREVIOUS] = tail;
            ints[at + NEXT] = NONE;
            if (tail == NONE) {
                list.head = node;
            } else {
                ints[tail * INTS + NEXT] = node;
            }
            list.tail = node;
            list.bytes += longs[node * LONGS];
        }

        /**
         * Moves {@code node}, which is in a list, to the newest end of {@code list} (its own or another): one pass
         * over its links, the byte totals touched only when the list changes.
         */
        void moveToTail(SimList list, int node) {
            int at = node * INTS;
            int from = ints[at + LIST];
            int next = ints[at + NEXT];
            if (from != list.id) {
                unlink(node);
                append(list, node);
                return;
            }
            if (next == NONE) {
                return; // already the newest
            }
            int previous = ints[at + PREVIOUS];
            if (previous == NONE) {
                list.head = next;
            } else {
                ints[previous * INTS + NEXT] = next;
            }
            ints[next * INTS + PREVIOUS] = previous;
            int tail = list.tail;
            ints[at + PREVIOUS] = tail;
            ints[at + NEXT] = NONE;
            ints[tail * INTS + NEXT] = node;
            list.tail = node;
        }

        /** Takes {@code node} out of its list; returns that list. */
        SimList unlink(int node) {
            int at = node * INTS;
            SimList list = lists[ints[at + LIST]];
            int previous = ints[at + PREVIOUS];
            int next = ints[at + NEXT];
            if (previous == NONE) {
                list.head = next;
            } else {
                ints[previous * INTS + NEXT] = next;
            }
            if (next == NONE) {
                list.tail = previous;
            } else {
                ints[next * INTS + PREVIOUS] = previous;
            }
            ints[at + LIST] = NONE;
            list.bytes -= longs[node * LONGS];
            return list;
        }
    }

    /** A FIFO of {@link Nodes}: oldest at {@link #head}, newest at {@link #tail}, with its byte total. */
    private static final class SimList {
        final int id;
        int head = Nodes.NONE;
        int tail = Nodes.NONE;
        long bytes;

        SimList(int id) {
            this.id = id;
        }
    }

    /**
     * The keys the simulations hold, each by a small id (its nodes' place in {@link Nodes}, reused after the last
     * simulation drops the key), indexed by key hash in an open-addressing table as {@code EntryTable} (linear
     * probing, Fibonacci home slot, load at most 1/2, backward-shift deletion) that stores the id (plus one, 0 for
     * an empty slot) beside the hash: a lookup reads two ints of one slot and no key object. The table grows (never
     * shrinks) with the keys, which resampling keeps near {@link #MAX_RESIDENTS} per simulation, so it settles at a
     * few thousand slots.
     */
    private static final class Keys {
        private final Nodes nodes;
        /** Per slot: the id of its key plus one, 0 when empty. */
        private int[] slots = new int[16];
        private int[] hashes = new int[16];
        private int size;
        /** Per id: the key's hash. */
        private int[] keyHashes = new int[16];
        /** Per id: how many simulations hold the key (it leaves the table at 0), or while free the next free id. */
        private int[] holders = new int[16];
        /** Ids ever given out: the next new one. */
        private int created;
        /** The first id no simulation holds ({@link Nodes#NONE}: none), the rest linked through {@link #holders}. */
        private int free = Nodes.NONE;

        Keys(Nodes nodes) {
            this.nodes = nodes;
        }

        /** The id of the key with {@code hash}, or {@link Nodes#NONE} when no simulation holds it. */
        int find(int hash) {
            int mask = slots.length - 1;
            for (int i = home(hash, slots.length); ; i = (i + 1) & mask) {
                int member = slots[i];
                if (member == 0 || hashes[i] == hash) {
                    return member - 1;
                }
            }
        }

        /** The id for a key with {@code hash}, which is not in the table, held by no simulation yet. */
        int add(int hash) {
            int id = free;
            if (id == Nodes.NONE) {
                id = created++;
                if (id == keyHashes.length) {
                    keyHashes = Arrays.copyOf(keyHashes, 2 * id);
                    holders = Arrays.copyOf(holders, 2 * id);
                }
                nodes.ensureKeys(created);
            } else {
                free = holders[id];
            }
            keyHashes[id] = hash;
            holders[id] = 0;
            if (2 * (size + 1) > slots.length) {
                int[] oldSlots = slots;
                int[] oldHashes = hashes;
                slots = new int[2 * oldSlots.length];
                hashes = new int[2 * oldSlots.length];
                OpenAddressing.rehash(oldSlots, oldHashes, slots, hashes);
            }
            OpenAddressing.place(slots, hashes, id + 1, hash);
            size++;
            return id;
        }

        int hash(int id) {
            return keyHashes[id];
        }

        /** One more simulation holds the key {@code id}. */
        void held(int id) {
            holders[id]++;
        }

        /** One simulation fewer holds the key {@code id}; at none it leaves the table and its id is reused. */
        void released(int id) {
            if (--holders[id] > 0) {
                return;
            }
            int mask = slots.length - 1;
            int hole = home(keyHashes[id], slots.length);
            while (slots[hole] != id + 1) {
                hole = (hole + 1) & mask;
            }
            OpenAddressing.removeAt(slots, hashes, hole);
            size--;
            holders[id] = free;
            free = id;
        }

        /**
         * {@link OpenAddressing#home}. The sampled hashes share their top bits under the sampling multiplier
         * (a different one), not under this one, so they still spread over the table.
         */
        private static int home(int hash, int length) {
            return OpenAddressing.home(hash, length);
        }
    }

    /** One simulated cache of sampled keys: its state of each key is the key's node at {@link #index}. */
    private abstract static class Sim {
        private final Keys keys;
        final Nodes nodes;
        private final int index;
        private int size;
        final SimList first;
        final SimList second;

        Sim(Keys keys, Nodes nodes, int index) {
            this.keys = keys;
            this.nodes = nodes;
            this.index = index;
            first = nodes.newList();
            second = nodes.newList();
        }

        /** References {@code key}; returns whether it was a hit. Afterwards the simulation holds the key. */
        abstract boolean access(int key, long size, long capacity);

        /** Evicts one key; the cache is not empty. */
        abstract void evictOne();

        int residents() {
            return size;
        }

        /** This simulation's node of {@code key}. */
        final int node(int key) {
            return (key << nodes.shift) + index;
        }

        /** This simulation's node of {@code key} if it holds the key, else {@link Nodes#NONE}. */
        final int find(int key) {
            int node = node(key);
            return nodes.listed(node) ? node : Nodes.NONE;
        }

        /** This simulation's node of {@code key}, which it does not hold, now held, in no list yet. */
        final int insert(int key, long size) {
            int node = node(key);
            nodes.size(node, size);
            nodes.spare(node, 0);
            nodes.last(node, 0);
            keys.held(key);
            this.size++;
            return node;
        }

        /** Forgets {@code node}, held and in no list; its key leaves the table when no simulation holds it. */
        final void forget(int node) {
            size--;
            keys.released(node >>> nodes.shift);
        }

        /** The hash of the key of {@code node}. */
        final int hash(int node) {
            return keys.hash(node >>> nodes.shift);
        }

        void makeRoom(long size, long capacity) {
            while (this.size > 0 && first.bytes + second.bytes + size > capacity) {
                evictOne();
            }
        }

        final Keys keysTable() {
            return keys;
        }

        void drop(int node) {
            nodes.unlink(node);
            forget(node);
        }

        /** Forgets the keys no longer sampled under {@code threshold} and shrinks to {@code capacity}. */
        void resample(int threshold, long capacity) {
            dropUnsampled(first, threshold);
            dropUnsampled(second, threshold);
            makeRoom(0, capacity);
        }

        final void dropUnsampled(SimList list, int threshold) {
            for (int node = list.head; node != Nodes.NONE; ) {
                int next = nodes.next(node);
                if (!sampled(hash(node), threshold)) {
                    drop(node);
                }
                node = next;
            }
        }
    }

    /**
     * S3-FIFO as {@link S3FifoPolicy}'s default parameters (small 1/5, ghosts 4x), without the chain-tail rule; a
     * node's spare int is its use count.
     */
    private static final class S3Sim extends Sim {
        private final GhostKeys ghost = new GhostKeys();

        S3Sim(Keys keys, Nodes nodes, int index) {
            super(keys, nodes, index);
        }

        @Override
        boolean access(int key, long size, long capacity) {
            int node = find(key);
            if (node != Nodes.NONE) {
                nodes.spare(node, Math.min(3, nodes.spare(node) + 1));
                return true;
            }
            makeRoom(size, capacity);
            node = insert(key, size);
            nodes.append(ghost.remove(keysTable().hash(key)) ? second : first, node);
            return false;
        }

        @Override
        void evictOne() {
            SimList small = first;
            SimList main = second;
            while (true) {
                if (small.head != Nodes.NONE
                        && (main.head == Nodes.NONE || small.bytes >= (small.bytes + main.bytes) / 5)) {
                    int node = small.head;
                    nodes.unlink(node);
                    if (nodes.spare(node) > 0) {
                        nodes.append(main, node);
                        continue;
                    }
                    int hash = hash(node);
                    forget(node);
                    ghost.capacity(Math.max(64, 4 * residents()));
                    ghost.add(hash);
                    return;
                }
                int node = main.head;
                nodes.unlink(node);
                int uses = nodes.spare(node);
                if (uses > 0) {
                    nodes.spare(node, uses - 1);
                    nodes.append(main, node);
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

        RetainSim(Keys keys, Nodes nodes, int index, double factor) {
            super(keys, nodes, index);
            this.factor = factor;
        }

        @Override
        boolean access(int key, long size, long capacity) {
            clock++;
            int node = find(key);
            if (node != Nodes.NONE) {
                nodes.last(node, clock);
                nodes.moveToTail(second, node);
                return true;
            }
            makeRoom(size, capacity);
            node = insert(key, size);
            nodes.last(node, clock);
            nodes.append(first, node);
            return false;
        }

        @Override
        void evictOne() {
            long staleAge = (long) (factor * Math.max(1, residents()));
            int victim;
            if (first.head != Nodes.NONE && clock - nodes.last(first.head) > staleAge) {
                victim = first.head;
            } else if (second.head != Nodes.NONE && clock - nodes.last(second.head) > staleAge) {
                victim = second.head;
            } else if (first.tail != Nodes.NONE) {
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
     * is alive, then shared keys, then the walk in progress. O(non-empty buckets) per eviction. A node's spare int
     * is the depth bucket of its key's last walk ({@link ChainContinuation#bucket}).
     */
    private static final class ContinuationSim extends Sim {
        private final ChainContinuation chains;
        /** Keys of ended walks per depth bucket (created when first needed), oldest walk first. */
        private final SimList[] buckets = new SimList[ChainContinuation.BUCKETS];
        private final long[] nonEmpty = new long[ChainContinuation.BUCKETS / 64];
        private final SimList shared;
        private final SimList current;
        /** Walks' last keys that arrived in their walk (likely partial last blocks): evicted first. */
        private final SimList tails;
        private long heldBytes;

        ContinuationSim(Keys keys, Nodes nodes, int index, ChainContinuation chains) {
            super(keys, nodes, index);
            this.chains = chains;
            shared = nodes.newList();
            current = nodes.newList();
            tails = nodes.newList();
        }

        @Override
        boolean access(int key, long size, long capacity) {
            int node = find(key);
            if (node != Nodes.NONE) {
                unlinkFiled(node);
                nodes.append(current, node);
                return true;
            }
            makeRoom(size, capacity);
            node = insert(key, size);
            heldBytes += size;
            nodes.append(current, node);
            return false;
        }

        private boolean bucketList(SimList list) {
            return list != current && list != shared && list != tails;
        }

        private void unlinkFiled(int node) {
            SimList list = nodes.unlink(node);
            if (bucketList(list) && list.head == Nodes.NONE) {
                int bucket = nodes.spare(node);
                nonEmpty[bucket >>> 6] &= ~(1L << bucket);
            }
        }

        /** Files the keys the ended {@code walk} referenced: its sampled shared ones as shared, the rest by its depth. */
        void walkEnded(ChainContinuation.Walk walk, int threshold) {
            if (walk.tail != null && sampled(walk.tail.hash, threshold)) {
                int node = heldNode(walk.tail.hash);
                if (node != Nodes.NONE && nodes.listOf(node) == current) {
                    nodes.unlink(node);
                    nodes.append(tails, node);
                }
            }
            for (int i = walk.ownCount; i < walk.count; i++) {
                int hash = walk.nodes[i].hash;
                if (sampled(hash, threshold)) {
                    int node = heldNode(hash);
                    if (node != Nodes.NONE && nodes.listOf(node) == current) {
                        nodes.unlink(node);
                        nodes.last(node, walk.endTime);
                        nodes.append(shared, node);
                    }
                }
            }
            SimList bucket = buckets[walk.bucket];
            if (bucket == null) {
                bucket = buckets[walk.bucket] = nodes.newList();
            }
            for (int node = current.head; node != Nodes.NONE; node = current.head) {
                nodes.unlink(node);
                nodes.last(node, walk.endTime);
                nodes.spare(node, walk.bucket);
                nodes.append(bucket, node);
            }
            if (bucket.head != Nodes.NONE) {
                nonEmpty[walk.bucket >>> 6] |= 1L << walk.bucket;
            }
        }

        /** This simulation's node of the key with {@code hash} if it holds it, else {@link Nodes#NONE}. */
        private int heldNode(int hash) {
            int key = keysTable().find(hash);
            return key == Nodes.NONE ? Nodes.NONE : find(key);
        }

        @Override
        void evictOne() {
            if (tails.head != Nodes.NONE) {
                drop(tails.head);
                return;
            }
            int victim = Nodes.NONE;
            double lowest = Double.POSITIVE_INFINITY;
            long now = chains.clock();
            for (int word = 0; word < nonEmpty.length; word++) {
                for (long bits = nonEmpty[word]; bits != 0; bits &= bits - 1) {
                    int b = word * 64 + Long.numberOfTrailingZeros(bits);
                    int head = buckets[b].head;
                    double odds = chains.aliveLogOdds(b, now - nodes.last(head));
                    if (odds < lowest) {
                        lowest = odds;
                        victim = head;
                    }
                }
            }
            if (victim == Nodes.NONE) {
                victim = shared.head != Nodes.NONE ? shared.head : current.head;
            }
            drop(victim);
        }

        @Override
        void resample(int threshold, long capacity) {
            for (SimList bucket : buckets) {
                if (bucket != null) {
                    dropUnsampled(bucket, threshold);
                }
            }
            dropUnsampled(tails, threshold);
            dropUnsampled(shared, threshold);
            dropUnsampled(current, threshold);
            makeRoom(0, capacity);
        }

        /** Its keys are in more lists than the other simulations' two: their bytes are counted here. */
        @Override
        void makeRoom(long size, long capacity) {
            while (residents() > 0 && heldBytes + size > capacity) {
                evictOne();
            }
        }

        @Override
        void drop(int node) {
            heldBytes -= nodes.size(node);
            unlinkFiled(node);
            forget(node);
        }
    }
}
