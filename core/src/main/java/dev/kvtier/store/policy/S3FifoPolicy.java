package dev.kvtier.store.policy;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;

import java.util.List;

/**
 * S3-FIFO (Yang, Zhang, Qiu, Yue and Vinayak, "FIFO queues are all you need for cache eviction",
 * SOSP 2023), one instance per tier; reached through {@link DemotionPolicy#s3Fifo()} (the paper's
 * parameters), {@link DemotionPolicy#chainAwareS3Fifo()} (tuned parameters and the chain-tail rule below)
 * and {@link DemotionPolicy#adaptiveS3Fifo()} (the latter with the learned retention below; the default's S3-FIFO). Immutable and thread-safe; its trackers are not (each belongs to one store
 * and runs under its lock, but for the touches it takes without it: {@link S3FifoTracker#usedConcurrently}).
 *
 * <p>Per tier: a small FIFO that segments arriving on the tier enter, a main FIFO, and a ghost FIFO
 * of the keys most recently demoted out of the small queue. A use raises the segment's counter
 * (capped at 3). To name candidates, the tier is drained as S3-FIFO evicts: from the small queue
 * while it holds at least its share of the tier's bytes (a used segment moves to main instead of
 * being named), else from main (a used segment is reinserted with its counter decremented). A
 * segment arriving whose key is in the ghost goes straight to main. Why it suits a tight GPU
 * budget: one-hit segments leave after a short probation in the small queue without displacing
 * reused ones.
 *
 * <p><b>The chain-tail rule</b> (chain-aware variant only). A request walks its prefix chain in
 * order, each segment starting where the one before it ended ({@link PositionRange}). A segment
 * registered at the end of such a walk (no registration continues its chain, i.e. starts where it
 * ends, within the next {@value #CONTINUATION_WINDOW} accesses) is usually the request's partial last
 * block: when the sequence grows, that block's tokens change, so it gets a new key and the old one is
 * never asked for again (in the Mooncake trace format and any prefix-hash scheme). Such a segment,
 * still unused in the small queue, moves to a <em>tails</em> queue that is named before anything
 * else; if it is used after all it moves to main, and if it comes back after its demotion the ghost
 * sends it to main. The window lets the walks of concurrent requests interleave; continuations are
 * matched by position alone, so walks at the same depth may continue each other's segments, which
 * changes nothing while both walks go on.
 *
 * <p>A run of a chain may also be registered tail first (the prefix layer stores a run so): a registration ending
 * where the registration just before it starts is continued by it. A segment {@linkplain Tracker#held held} on its
 * tier (a prefix block whose children are there) keeps its place in its queue but is passed over, and named only
 * when the tier's other segments do not add up to what is asked; arriving on a tier ends a hold.
 *
 * <p><b>Learned retention</b> (adaptive variant only, GPU tier). Where a segment's next use comes later than
 * the tier can keep everything (a conversation's blocks come back after the answer was generated and the user
 * thought; a loop over more than the tier holds), S3-FIFO's order keeps the most recent segments and they leave
 * before their reuse, while keeping a stable set (whichever segments are there, until they go stale) hits in
 * proportion to its size. The tier's {@link RetentionShadows} simulate both on a sample of its references and
 * the tier names as the one with the most recent hits: as S3-FIFO, or by retention with factor F: chain tails;
 * segments unused for more than F times the tier's segment count in accesses (on the store's clock,
 * {@link Usage#lastUse()}); the small queue newest first; main in S3-FIFO order. While retaining, a segment
 * arriving on the tier goes to the small queue even if it is a ghost (a returning segment has to earn its place
 * like any other, or the stable set would be displaced by every return).
 *
 * <p><b>Learned chain continuation</b> ({@link DemotionPolicy#adaptiveContinuationS3Fifo()} only, GPU tier). The
 * tier also follows its prefix-chain walks and learns, per depth, how often a chain walked that deep is walked again
 * ({@link ChainContinuation}); its simulations compare a fifth behaviour, naming the segments of the chains least
 * likely to go on first (shared prefixes last), and the tier names that way while it gets the most hits. The walks
 * see every GPU reference, so this variant takes no GPU touch without the lock.
 *
 * <p>Arriving by promotion, demotion or rollback counts as arriving (the queue a segment had on
 * another tier is not remembered). Queries reorganise the queues as an eviction pass would (moves
 * to main, counter decrements) but name segments without removing them; answers are a function of
 * the history of events and queries. Costs: O(1) per event (a registration also scans the end
 * positions of the at most 2 x {@value #CONTINUATION_WINDOW} segments awaiting continuation, a
 * constant); a query for k candidates is O(k) plus the moves it makes, each paid for by an earlier use (amortised O(1)) and at most {@value #MOVES_PER_CANDIDATE} per
 * candidate (worst case O(k)); past that bound a used segment is named as if unused. The adaptive variant adds
 * its simulations' cost to each GPU registration, use and promotion (O(1): see {@link RetentionShadows}) and, while
 * retaining, a query passes the stale segments it names and at most the moves above per candidate.
 */
public final class S3FifoPolicy implements DemotionPolicy {
    /** The paper's S3-FIFO: small queue 1/10 of the tier, ghosts as many as the tier's segments. */
    public static final S3FifoPolicy INSTANCE = new S3FifoPolicy("s3-fifo", 10, 1, false, false);
    /**
     * The default: small queue 1/5, ghosts 4x the tier's segments, chain tails named first; each
     * choice measured on generated chat, tool-agent and document-QA traces against the offline
     * optimum ({@code PolicyTraceCheck}).
     */
    public static final S3FifoPolicy CHAIN_AWARE = new S3FifoPolicy("chain-s3-fifo", 5, 4, true, false);
    /**
     * The default with a learned retention on the GPU tier ({@link RetentionShadows}; see the class comment):
     * as {@link #CHAIN_AWARE} while S3-FIFO's behaviour gets the most hits in the tier's miniature simulations.
     */
    public static final S3FifoPolicy ADAPTIVE = new S3FifoPolicy("adaptive-s3-fifo", 5, 4, true, true);
    /**
     * {@link #ADAPTIVE} with one more behaviour its simulations compare: naming by chain continuation learned online
     * ({@link ChainContinuation}). Not the default: it loses cells the default meets (bench/RESULTS.md).
     */
    public static final S3FifoPolicy CONTINUATION = new S3FifoPolicy("adaptive-continuation-s3-fifo", 5, 4, true, true, 0,
            false, true);

    private static final int MAX_USES = 3;
    /**
     * The most queue moves (a used segment moved to main or reinserted) one candidate may cost; past
     * it the segment at hand is named, used or not. Why: a use only raises a counter, and the moves
     * it entitles a segment to are made by queries, so after every segment of a large tier was used
     * one query would otherwise make them all (measured: ~0.3-0.9 s at 10^6 segments). Bounded, a
     * query costs O(k) with a constant of at most this many moves; the hit rates on the generated
     * traces did not change.
     */
    private static final int MOVES_PER_CANDIDATE = 256;
    /**
     * Accesses a registered segment's chain has to continue before it counts as a chain tail: covers
     * walks of up to about 16 concurrent requests interleaving (measured with PolicyTraceCheck's
     * interleave option: 0.999 of LRU's hits or better at 1 and 16 in flight, 0.957 at 64).
     */
    private static final int CONTINUATION_WINDOW = 32;
    /** Registered segments awaiting continuation at most (older ones are judged early); a power of two (ring indices). */
    private static final int PENDING = 2 * CONTINUATION_WINDOW;
    /** The fewest ghost keys kept per tier, whatever the tier's segment count. */
    private static final int MIN_GHOSTS = 64;

    private final String name;
    /** The small queue's share of the tier's bytes is 1 / this. */
    private final int smallShareDivisor;
    /** Ghost keys kept per tier: this times the tier's segment count. */
    private final int ghostsPerSegment;
    private final boolean chainTails;
    /** Whether the GPU tier's naming adapts by miniature simulation ({@link RetentionShadows}). */
    private final boolean adaptive;
    /** A retention factor the GPU tier always names by (tests of that naming), else 0. */
    private final double pinnedRetention;
    /** Whether the GPU tier always names by chain continuation (tests of that naming). */
    private final boolean pinnedContinuation;
    /** Whether the GPU tier learns how its chains go on and may name by it ({@link ChainContinuation}; adaptive only). */
    private final boolean learnsChains;

    private S3FifoPolicy(String name, int smallShareDivisor, int ghostsPerSegment, boolean chainTails, boolean adaptive) {
        this(name, smallShareDivisor, ghostsPerSegment, chainTails, adaptive, 0, false, false);
    }

    private S3FifoPolicy(String name, int smallShareDivisor, int ghostsPerSegment, boolean chainTails, boolean adaptive,
                         double pinnedRetention, boolean pinnedContinuation, boolean learnsChains) {
        this.name = name;
        this.smallShareDivisor = smallShareDivisor;
        this.ghostsPerSegment = ghostsPerSegment;
        this.chainTails = chainTails;
        this.adaptive = adaptive;
        this.pinnedRetention = pinnedRetention;
        this.pinnedContinuation = pinnedContinuation;
        this.learnsChains = learnsChains;
    }

    /**
     * The adaptive variant with its GPU tier always naming by retention {@code factor}, whatever its simulations say:
     * for tests of that naming, which the adaptive variant reaches only on traffic that favours it.
     */
    static S3FifoPolicy pinnedRetention(double factor) {
        if (!(factor > 0)) {
            throw new IllegalArgumentException("a retention factor must be positive, got " + factor);
        }
        return new S3FifoPolicy("adaptive-s3-fifo-retaining-" + factor, 5, 4, true, true, factor, false, false);
    }

    /**
     * {@link #CONTINUATION} with its GPU tier always naming by chain continuation ({@link ChainContinuation}), whatever
     * its simulations say: for tests of that naming, which the policy reaches only on traffic that favours it.
     */
    static S3FifoPolicy pinnedContinuation() {
        return new S3FifoPolicy("adaptive-continuation-s3-fifo-continuing", 5, 4, true, true, 0, true, true);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Tracker newTracker(long gpuBudget, long cpuBudget) {
        if (!adaptive || gpuBudget <= 0) {
            return new S3FifoTracker(this, null, null);
        }
        ChainContinuation chains = learnsChains ? new ChainContinuation() : null;
        return new S3FifoTracker(this, new RetentionShadows(gpuBudget, chains), chains);
    }

    @Override
    public String toString() {
        return name();
    }

    /** The queues of one tier. */
    private static final class TierQueues {
        final PolicyNode.Queue small = new PolicyNode.Queue("small");
        final PolicyNode.Queue main = new PolicyNode.Queue("main");
        /** Chain tails (see the class comment): named before small and main; empty unless chain-aware. */
        final PolicyNode.Queue tails = new PolicyNode.Queue("tails");
        final int ghostsPerSegment;

        TierQueues(int ghostsPerSegment) {
            this.ghostsPerSegment = ghostsPerSegment;
        }
        /** Keys recently demoted out of the small (or tails) queue; bounded by the tier's segment count. */
        final GhostKeys ghost = new GhostKeys();

        /**
         * A segment moved onto the tier (promotion, demotion, rollback): the ghost may send it to main, unless the
         * tier retains ({@code retaining}), where a returning segment has to earn its place like any arrival.
         */
        void arrive(PolicyNode node, boolean retaining) {
            node.uses = 0;
            node.held = false;
            if (!retaining && ghost.remove(node.hash)) {
                main.append(node);
            } else {
                small.append(node);
            }
        }

        /**
         * A new segment: straight into the small queue. The ghost is not asked: a key demoted off this
         * tier is still registered and comes back by promotion, so only a key removed from the store and
         * registered again could be a ghost here, and asking would cost every registration a random read
         * in a ghost table of up to several times the tier's segment count.
         */
        void register(PolicyNode node) {
            node.uses = 0;
            node.held = false;
            small.append(node);
        }

        void leave(PolicyNode node, boolean evicted) {
            PolicyNode.Queue queue = node.queue;
            if (queue != small && queue != main && queue != tails) {
                throw new IllegalStateException("segment " + node.key + " is not queued on this tier");
            }
            queue.unlink(node);
            if (evicted && queue != main) {
                ghost.capacity(Math.max(MIN_GHOSTS, ghostsPerSegment * (small.size + main.size + tails.size)));
                ghost.add(node.hash);
            }
        }
    }

    /** One store's S3-FIFO state. */
    static final class S3FifoTracker implements Tracker {
        private final TierQueues[] tiers = new TierQueues[Tier.values().length];
        private final int smallShareDivisor;
        private final boolean chainTails;
        /**
         * Registered segments waiting for their chain to continue (a registration starting where one
         * ends), oldest first: a ring of at most {@link #PENDING} with the access count at which each was
         * registered and the tier it arrived on. A slot is null once its segment was continued.
         */
        private final PolicyNode[] pending = new PolicyNode[PENDING];
        private final long[] pendingSince = new long[PENDING];
        /** The pending segments' end positions, scanned without touching the segments. */
        private final long[] pendingEnd = new long[PENDING];
        /** The pending segments' start positions (a run registered tail first is continued before it arrives). */
        private final long[] pendingStart = new long[PENDING];
        /**
         * The tier each pending segment arrived on, by ordinal. A number rather than the tier's {@link TierQueues}:
         * a reference written into this long-lived array costs G1's post-write barrier (a StoreLoad fence when the
         * two objects lie in different heap regions), on every registration.
         */
        private final byte[] pendingTier = new byte[PENDING];
        private int pendingOldest;
        private int pendingCount;
        /** Registrations, touches and promotions so far. */
        private long accesses;
        /** The GPU tier's miniature simulations (adaptive variant only), else null. */
        private final RetentionShadows shadows;
        /** What the GPU tier learns of its chains and its naming by them (adaptive variant only), else null. */
        private final ChainContinuation chains;
        /** The store's clock ({@link Usage#lastUse()}) at the latest use reported. */
        private long now;
        private final double pinnedRetention;
        private final boolean pinnedContinuation;

        S3FifoTracker(S3FifoPolicy policy, RetentionShadows shadows, ChainContinuation chains) {
            this.smallShareDivisor = policy.smallShareDivisor;
            this.chainTails = policy.chainTails;
            this.shadows = shadows;
            this.chains = chains;
            this.pinnedRetention = policy.pinnedRetention;
            this.pinnedContinuation = policy.pinnedContinuation;
            for (int i = 0; i < tiers.length; i++) {
                tiers[i] = new TierQueues(policy.ghostsPerSegment);
            }
        }

        /**
         * The chain-tail rule: a registered segment whose chain is not continued (no registration starts
         * where it ends) within {@link #CONTINUATION_WINDOW} accesses ended its walk. A window rather than
         * the very next access because concurrent requests interleave their walks; a continuation is
         * matched by position only, so two walks at the same depth can swap which of their segments is
         * taken as continued (harmless when both continue).
         *
         * <p>This is an access (a registration, use or promotion): it counts, and the pending segments whose window
         * it ends leave the ring. What only a registration needs is {@link #awaitContinuation}, kept apart so that
         * this part stays small enough for the JIT to inline into every event (with the registration's part in it,
         * C2 compiled it as a method of its own and called it: "already compiled into a big method").
         */
        private void accessed() {
            if (!chainTails) {
                return;
            }
            long now = ++accesses;
            while (pendingDue(now)) {
                dropOldestPending();
            }
        }

        /**
         * {@code node}, just registered on {@code on} (the access counted by {@link #accessed} already), continues the
         * pending segment whose chain it continues, if any, and awaits its own continuation in the ring.
         */
        private void awaitContinuation(Segment segment, PolicyNode node, Tier on) {
            if (!chainTails) {
                return;
            }
            long now = accesses;
            long start = segment.positions().start();
            long end = segment.positions().end();
            // A run of a chain may also be registered tail first (the prefix layer does, so that the run's tail is
            // the oldest of it and offered first): a registration ending where the one just before it starts is
            // continued by it. Only the one just before: any other at that start is another walk's.
            int newest = (pendingOldest + pendingCount - 1) & (PENDING - 1);
            boolean continued = pendingCount > 0 && pendingSince[newest] == now - 1 && pendingStart[newest] == end;
            // A chain's first segment (start 0) continues nothing: no scan.
            for (int k = start == 0 ? -1 : pendingCount - 1; k >= 0; k--) {
                int slot = (pendingOldest + k) & (PENDING - 1);
                if (pendingEnd[slot] == start && pending[slot] != null) {
                    pending[slot] = null; // continued: not a tail
                    break;
                }
            }
            if (pendingCount == PENDING) {
                dropOldestPending();
            }
            int slot = (pendingOldest + pendingCount) & (PENDING - 1);
            pending[slot] = continued ? null : node;
            pendingStart[slot] = start;
            pendingEnd[slot] = end;
            pendingSince[slot] = now;
            pendingTier[slot] = (byte) on.ordinal();
            pendingCount++;
        }

        /**
         * Whether the oldest pending segment is due to leave the ring at access {@code now}. A continued slot is
         * dropped early, but not the newest: its start may still be continued by the next registration of a run
         * registered tail first. Reads only (also without the lock, from {@link #usedConcurrently}, where a stale
         * answer only moves a drop to the next access).
         */
        private boolean pendingDue(long now) {
            int oldest = pendingOldest; // read once: always a valid index, whatever it races with
            int count = pendingCount;
            return count > 0 && ((pending[oldest] == null && count > 1) || now - pendingSince[oldest] > CONTINUATION_WINDOW);
        }

        /** Takes the oldest pending segment off the ring; if it was not continued, it is a chain tail. */
        private void dropOldestPending() {
            PolicyNode tail = pending[pendingOldest];
            TierQueues on = tiers[pendingTier[pendingOldest]];
            // Still unused on its small queue (not moved, removed or used since): name it first.
            if (tail != null && tail.uses == 0 && tail.queue == on.small) {
                on.small.unlink(tail);
                on.tails.append(tail);
            }
            pending[pendingOldest] = null;
            pendingOldest = (pendingOldest + 1) & (PENDING - 1);
            pendingCount--;
        }

        @Override
        public void registered(Segment segment, Tier tier) {
            PolicyNode node = PolicyNode.of(segment);
            tiers[tier.ordinal()].register(node);
            accessed();
            awaitContinuation(segment, node, tier);
            referenced(segment, node, tier);
        }

        /**
         * A use of {@code segment} on {@code tier}: on the GPU tier the walks learn from it ({@link ChainContinuation})
         * and the simulations see it as a reference.
         */
        private void referenced(Segment segment, PolicyNode node, Tier tier) {
            if (shadows != null) {
                now = Math.max(now, segment.lastUse());
                if (tier == Tier.GPU) {
                    if (chains != null) {
                        ChainContinuation.Walk ended = chains.referenced(node, segment.positions());
                        if (ended != null) {
                            shadows.walkEnded(ended);
                        }
                    }
                    shadows.reference(node.hash, node.sizeBytes);
                }
            }
        }

        /** What the GPU tier learns of its chains, or null (not the continuation variant, or no GPU budget). */
        ChainContinuation chains() {
            return chains;
        }

        /** The retention factor the tier's naming follows now, 0 when it names as S3-FIFO. */
        private double retention(Tier tier) {
            if (shadows == null || tier != Tier.GPU) {
                return 0;
            }
            return pinnedRetention > 0 ? pinnedRetention : pinnedContinuation ? 0 : shadows.retentionFactor();
        }

        @Override
        public void used(Segment segment, Tier tier) {
            PolicyNode node = PolicyNode.of(segment);
            countUse(node);
            accessed();
            referenced(segment, node, tier);
        }

        /**
         * Raises {@code node}'s use counter, capped at {@link #MAX_USES}: read once, checked, written, so a racing
         * write (a touch without the lock) can lose an increment but never leave the counter above the cap.
         */
        private static void countUse(PolicyNode node) {
            int uses = node.uses;
            if (uses < MAX_USES) {
                node.uses = uses + 1;
            }
        }

        /** Every S3-FIFO variant takes a use without the lock unless it needs a queue or its simulations (below). */
        @Override
        public boolean takesConcurrentUses() {
            return true;
        }

        /**
         * {@link #used} without the store's lock, where that touches no queue and no simulation: when no pending chain
         * segment is due to leave the ring (the chain-tail rule's moves) and the tier's simulations do not sample the
         * key (adaptive variant, GPU tier); else false, changing nothing, and the store reports the use under the
         * lock. What it writes is a counter and two clocks: the use counter ({@link #countUse}), the access count of
         * the chain-tail window and the latest use seen (each may lose a racing update, or fall back by one: a window a
         * little longer, a stale segment named a little later). Single-threaded it writes exactly what {@link #used} writes. (The two longs are
         * plain fields: HotSpot on the 64-bit platforms this library runs on, x86-64 and AArch64, never splits a
         * long write, so a racing reader sees one value or the other.)
         */
        @Override
        public boolean usedConcurrently(Segment segment, Tier tier) {
            PolicyNode node = PolicyNode.of(segment);
            if (chainTails && pendingDue(accesses + 1)) {
                return false;
            }
            if (shadows != null && tier == Tier.GPU && (chains != null || shadows.samples(node.hash))) {
                return false; // the walks see every GPU reference
            }
            countUse(node);
            if (chainTails) {
                accesses++;
            }
            if (shadows != null) {
                now = Math.max(now, segment.lastUse());
            }
            return true;
        }

        /** Moves {@code segment}'s node from {@code from}'s queues to {@code to}'s; an eviction leaves a ghost. */
        private PolicyNode move(Segment segment, Tier from, Tier to, boolean evicted) {
            PolicyNode node = PolicyNode.of(segment);
            tiers[from.ordinal()].leave(node, evicted);
            tiers[to.ordinal()].arrive(node, retention(to) > 0);
            return node;
        }

        @Override
        public void demoted(Segment segment, Tier from, Tier to) {
            leftGpu(move(segment, from, to, true), from);
        }

        @Override
        public void promoted(Segment segment, Tier from, Tier to) {
            PolicyNode node = move(segment, from, to, false);
            leftGpu(node, from);
            accessed();
            referenced(segment, node, to);
        }

        @Override
        public void rolledBack(Segment segment, Tier from, Tier to) {
            PolicyNode node = move(segment, from, to, false);
            leftGpu(node, from);
            if (chains != null && to == Tier.GPU) {
                chains.returned(node);
            }
        }

        @Override
        public void removed(Segment segment, Tier tier) {
            PolicyNode node = PolicyNode.of(segment);
            tiers[tier.ordinal()].leave(node, false);
            if (chains != null) {
                chains.left(node, true);
            }
        }

        /** {@code node} left {@code from}: if that is the GPU tier, its walk lets it go. */
        private void leftGpu(PolicyNode node, Tier from) {
            if (chains != null && from == Tier.GPU) {
                chains.left(node, false);
            }
        }

        @Override
        public void held(Segment segment, Tier tier) {
            PolicyNode.of(segment).held = true;
        }

        @Override
        public void released(Segment segment, Tier tier) {
            PolicyNode.of(segment).held = false;
        }

        @Override
        public void collectCandidates(Tier tier, long needed, List<String> keys) {
            double retention = retention(tier);
            if (retention > 0) {
                collectRetaining(tiers[tier.ordinal()], needed, keys, retention);
                return;
            }
            if (chains != null && tier == Tier.GPU && pinnedRetention == 0
                    && (pinnedContinuation || shadows.continuing())) {
                TierQueues q = tiers[tier.ordinal()];
                boolean[] heldPassed = {false};
                long stillNeeded = chains.collect(q.tails, needed, keys, heldPassed);
                if (heldPassed[0] && stillNeeded > 0) {
                    nameHeld(q, keys, stillNeeded);
                }
                return;
            }
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
            int tailMovesLeft = MOVES_PER_CANDIDATE;
            // Held segments keep their place but are passed; named last, only when the others do not add up.
            boolean heldPassed = false;
            for (PolicyNode node = q.tails.head; node != null && stillNeeded > 0; ) {
                PolicyNode next = node.next;
                if (node.uses > 0 && tailMovesLeft-- > 0) { // a tail after all: keep it, in main
                    inMain = keepInMain(q.tails, main, node, inMain);
                } else if (node.held) {
                    heldPassed = true;
                } else {
                    CandidateList.add(keys, node);
                    stillNeeded -= node.sizeBytes;
                }
                node = next;
            }
            while (stillNeeded > 0 && (inSmall != null || inMain != null)) {
                PolicyNode victim = null;
                int movesLeft = MOVES_PER_CANDIDATE;
                if (inSmall != null && (inMain == null || smallLeft >= total / smallShareDivisor)) {
                    while (inSmall != null) {
                        PolicyNode node = inSmall;
                        inSmall = node.next;
                        smallLeft -= node.sizeBytes;
                        if (node.uses > 0 && movesLeft-- > 0) { // used while on probation: keep it, in main
                            inMain = keepInMain(small, main, node, inMain);
                        } else if (node.held) {
                            heldPassed = true;
                        } else {
                            victim = node;
                            break;
                        }
                    }
                }
                while (victim == null && inMain != null) {
                    PolicyNode node = inMain;
                    inMain = node.next;
                    if (node.uses > 0 && movesLeft-- > 0) { // reinserted; terminates: each pass lowers the counter
                        inMain = reinsert(main, node, inMain);
                    } else if (node.held) {
                        heldPassed = true;
                    } else {
                        victim = node;
                    }
                }
                if (victim != null) {
                    CandidateList.add(keys, victim);
                    stillNeeded -= victim.sizeBytes;
                }
            }
            if (heldPassed && stillNeeded > 0) {
                nameHeld(q, keys, stillNeeded);
            }
        }

        /**
         * Names as retention does (adaptive variant, GPU tier, while a retention simulation leads): chain tails;
         * then the segments unused for longer than {@code factor} times the tier's segment count in accesses
         * (the small queue in arrival order, then main in its S3-FIFO order); then the small queue <b>newest
         * first</b> (the segments that arrived last leave first, so the older ones stay until their next use);
         * then main in S3-FIFO order. A used segment met on the small queue moves to main and one met on main is
         * reinserted with its counter decremented, as in S3-FIFO, at most {@link #MOVES_PER_CANDIDATE} moves per
         * candidate; held segments are named last.
         */
        private void collectRetaining(TierQueues q, long needed, List<String> keys, double factor) {
            PolicyNode.Queue small = q.small;
            PolicyNode.Queue main = q.main;
            long staleBefore = now - (long) (factor * Math.max(1, small.size + main.size + q.tails.size));
            long[] stillNeeded = {needed};
            int movesLeft = MOVES_PER_CANDIDATE;
            boolean heldPassed = false;
            PolicyNode inMain = main.head;
            for (PolicyNode node = q.tails.head; node != null && stillNeeded[0] > 0; ) {
                PolicyNode next = node.next;
                if (node.uses > 0 && movesLeft-- > 0) {
                    inMain = keepInMain(q.tails, main, node, inMain);
                } else if (node.held) {
                    heldPassed = true;
                } else {
                    movesLeft = name(node, keys, stillNeeded);
                }
                node = next;
            }
            // Stale on the small queue: arrival order is last-use order there (its segments are unused since).
            PolicyNode inSmall = small.head;
            while (inSmall != null && stillNeeded[0] > 0) {
                PolicyNode node = inSmall;
                if (node.uses > 0 && movesLeft-- > 0) {
                    inSmall = node.next;
                    inMain = keepInMain(small, main, node, inMain);
                    continue;
                }
                if (lastUse(node) > staleBefore) {
                    break;
                }
                inSmall = node.next;
                if (node.held) {
                    heldPassed = true;
                } else {
                    movesLeft = name(node, keys, stillNeeded);
                }
            }
            // Stale on main: its head is the longest since insertion; a recently used one is reinserted as S3-FIFO would.
            while (inMain != null && stillNeeded[0] > 0) {
                PolicyNode node = inMain;
                if (lastUse(node) > staleBefore) {
                    if (node.uses > 0 && movesLeft-- > 0) {
                        inMain = node.next;
                        inMain = reinsert(main, node, inMain);
                        continue;
                    }
                    break;
                }
                inMain = node.next;
                if (node.held) {
                    heldPassed = true;
                } else {
                    movesLeft = name(node, keys, stillNeeded);
                }
            }
            // The small queue newest first, down to where the stale pass stopped.
            PolicyNode stop = inSmall;
            for (PolicyNode node = stop == null ? null : small.tail; node != null && stillNeeded[0] > 0; ) {
                PolicyNode previous = node.previous;
                if (node.uses > 0 && movesLeft-- > 0) {
                    inMain = keepInMain(small, main, node, inMain);
                } else if (node.held) {
                    heldPassed = true;
                } else {
                    movesLeft = name(node, keys, stillNeeded);
                }
                node = node == stop ? null : previous;
            }
            while (inMain != null && stillNeeded[0] > 0) {
                PolicyNode node = inMain;
                inMain = node.next;
                if (node.uses > 0 && movesLeft-- > 0) {
                    inMain = reinsert(main, node, inMain);
                } else if (node.held) {
                    heldPassed = true;
                } else {
                    movesLeft = name(node, keys, stillNeeded);
                }
            }
            if (heldPassed && stillNeeded[0] > 0) {
                nameHeld(q, keys, stillNeeded[0]);
            }
        }

        /** Names the held segments, tails then small then main, oldest first, until {@code stillNeeded} is met. */
        private static void nameHeld(TierQueues q, List<String> keys, long stillNeeded) {
            for (PolicyNode.Queue queue : new PolicyNode.Queue[] {q.tails, q.small, q.main}) {
                for (PolicyNode node = queue.head; node != null && stillNeeded > 0; node = node.next) {
                    if (node.held) {
                        CandidateList.add(keys, node);
                        stillNeeded -= node.sizeBytes;
                    }
                }
            }
        }

        /**
         * Moves {@code node}, used while on {@code from} (tails or small), to main's newest end; returns main's
         * cursor, which starts at the node if it had run off the end.
         */
        private static PolicyNode keepInMain(PolicyNode.Queue from, PolicyNode.Queue main, PolicyNode node,
                PolicyNode inMain) {
            from.unlink(node);
            main.append(node);
            return inMain == null ? node : inMain;
        }

        /**
         * Reinserts {@code node}, used while on main, at main's newest end with its counter decremented, as S3-FIFO
         * does; returns main's cursor, which starts at the node if it had run off the end.
         */
        private static PolicyNode reinsert(PolicyNode.Queue main, PolicyNode node, PolicyNode inMain) {
            node.uses--;
            main.moveToTail(node);
            return inMain == null ? node : inMain;
        }

        /** Adds {@code node} to the candidates; returns the moves the next candidate may cost. */
        private static int name(PolicyNode node, List<String> keys, long[] stillNeeded) {
            CandidateList.add(keys, node);
            stillNeeded[0] -= node.sizeBytes;
            return MOVES_PER_CANDIDATE;
        }

        /** The segment's last use on the store's clock (every node a tracker sees is a store's segment). */
        private static long lastUse(PolicyNode node) {
            return ((Segment) (Object) node).lastUse();
        }

        @Override
        public String toString() {
            StringBuilder out = new StringBuilder("S3FifoTracker[");
            for (Tier tier : Tier.values()) {
                TierQueues q = tiers[tier.ordinal()];
                out.append(tier).append(": ").append(q.small).append(' ').append(q.main).append(' ').append(q.tails)
                        .append(' ').append(q.ghost).append("; ");
            }
            return out.append(']').toString();
        }
    }
}
