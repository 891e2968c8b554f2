package dev.kvtier.store.policy;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;

import java.util.List;

/**
 * What {@link S3FifoPolicy}'s adaptive continuation variant ({@link DemotionPolicy#adaptiveContinuationS3Fifo()})
 * learns, online, of how prefix chains go on, and the GPU tier's
 * naming by it: the tier's segments in order of the lowest estimated chance that their chain is walked again.
 * Nothing is assumed of the workload: the chance is counted from the chains the tier itself sees. Not thread-safe:
 * owned by one tracker, used under its store's lock.
 *
 * <p><b>Walks.</b> A request references its prefix chain in order, each segment starting where the one before it
 * ended ({@link PositionRange}); a GPU reference (registration, use, promotion) that does not continue the walk in
 * progress ends it and starts another. An ended walk has a <em>depth</em> (where its last segment ends, bucketed on a
 * half-octave log scale, {@link #bucket}) and an end time (on a clock counting walks). A later walk that references
 * one of a walk's last {@value #CONTINUED_BLOCKS} segments (a conversation's next turn reads it all again but the
 * partial last block, whose key changes) <em>continued</em> it. Per depth bucket the chance that a walk is continued
 * is learned from decayed counts (ended walks, continued walks; halved every {@value #DECAY_WALKS} ended walks), and
 * the time from a walk's end to its continuation as a decayed mean G (the plain mean of the first continuations,
 * then weight {@value #GAP_WEIGHT} each). The chance is {@code (continued + 1) / (ended + 2)}.
 *
 * <p><b>Ownership.</b> A segment belongs to the walk that referenced it last. At a walk's end, a segment it
 * referenced that an earlier walk of <em>another</em> chain referenced before (not the walk it continued) is a
 * shared prefix (a system prompt, a document): such segments are named last, least recently walked first. The
 * others rank by their walk: log-odds {@code logit(p) - age / G} that the walk's chain is still alive (continued
 * with chance p, and if alive walked again after an exponential gap of mean G, not for {@code age} walks), lowest
 * first. Why depth: the chance that a chain goes on depends on how far it went (a multi-turn conversation's chance
 * to go on falls with its turn), and how it depends is learned, not assumed.
 *
 * <p><b>Naming</b> ({@link #collect}): the tier's chain tails (as S3-FIFO); the walks' tails (a walk's last
 * segment when it arrived in that walk: most likely a partial last block, never asked for again; oldest walk first;
 * without this rule the naming lost 0.07 of the optimum on chat); then
 * repeatedly the next segment of the
 * oldest walk of the depth bucket with the lowest log-odds (a scan of the non-empty buckets, at most
 * {@value #BUCKETS}, in practice about ten); then shared segments; then the segments of the walk in progress; held
 * segments last. Costs: O(1) per reference; a walk's end O(its segments) (amortised O(1) per reference); a
 * candidate O(non-empty buckets) plus the stale entries it passes, each passed once (a walk keeps the position
 * below which every entry is stale, and leaves its lists when no segment belongs to it any more). Memory: the walks
 * that still own a GPU segment, each an array of its references.
 */
final class ChainContinuation {
    /** A walk is continued when a later walk references one of its last this many segments. */
    static final int CONTINUED_BLOCKS = 2;
    /** Ended walks between halvings of the per-bucket counts: the chances follow a changing workload. */
    static final int DECAY_WALKS = 1024;
    /** Weight of one observed gap in the decayed mean gap G. */
    static final double GAP_WEIGHT = 1.0 / 64;
    /** Depth buckets: half octaves of an end position up to 2^64. */
    static final int BUCKETS = 128;

    private final double[] ended = new double[BUCKETS];
    private final double[] continued = new double[BUCKETS];
    /** Mean walks from a walk's end to its continuation (decayed); 1 until a continuation is seen. */
    private double meanGap = 1;
    /** Continuations seen, up to 1 / {@link #GAP_WEIGHT}: until then G is their plain mean (no start value to forget). */
    private int gaps;
    private long endedWalks;
    /** Walks started so far. */
    private long clock;
    /** The walk in progress, or null before the first reference. */
    private Walk walk;
    /** Per depth bucket, the ended walks owning a non-shared segment, in end order. */
    private final WalkList[] buckets = new WalkList[BUCKETS];
    /** Bit b of word b / 64: bucket b's list is not empty. */
    private final long[] nonEmpty = new long[BUCKETS / 64];
    /** Ended walks owning a shared segment, in end order. */
    private final WalkList shared = new WalkList("shared");
    /** Per-query cursors over the bucket lists ({@link #collect}). */
    private final Cursor[] cursors = new Cursor[BUCKETS];
    private final Cursor sharedCursor = new Cursor();
    private long queries;
    /**
     * Ended walks' tails ({@link Walk#tail}) in end order, a ring of segments with their walks: named first. An entry
     * is stale once its segment left that walk; stale entries leave from the head.
     */
    private PolicyNode[] tailNodes = new PolicyNode[64];
    private Walk[] tailWalks = new Walk[64];
    private int tailHead;
    private int tailCount;
    /** Where {@link Walk#sort} keeps a walk's shared segments while it moves the own ones down (reused). */
    private PolicyNode[] scratch = new PolicyNode[16];

    ChainContinuation() {
        for (int b = 0; b < BUCKETS; b++) {
            buckets[b] = new WalkList("bucket " + b);
            cursors[b] = new Cursor();
        }
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder("ChainContinuation[G ").append(Math.round(meanGap)).append(", walks ")
                .append(clock);
        for (int b = 0; b < BUCKETS; b++) {
            if (ended[b] > 0) {
                out.append(String.format(java.util.Locale.ROOT, ", b%d %.0f/%.0f", b, continued[b], ended[b]));
            }
        }
        return out.append(']').toString();
    }

    /** Half-octave bucket of an end position: {@code 2 log2(end)} rounded down, 0 for an end of 0 or 1. */
    static int bucket(long end) {
        if (end <= 1) {
            return 0;
        }
        int log = 63 - Long.numberOfLeadingZeros(end);
        int half = (int) ((end >>> (log - 1)) & 1);
        return Math.min(BUCKETS - 1, 2 * log + half);
    }

    /** The ring of walk tails' length (tests: it stays bounded without queries). */
    int tailRingCapacity() {
        return tailNodes.length;
    }

    /** The walk clock: walks started so far. */
    long clock() {
        return clock;
    }

    /**
     * Log-odds that a walk ending in bucket {@code b} {@code age} walks ago is still going on. The chance is the
     * bucket's continued / ended counts with one of each added (so an unseen bucket counts as even); a walk counted
     * as ended before a halving and continued after it can leave more continued than ended, so the ended count is
     * taken as at least the continued one (the chance stays below 1, the log-odds finite).
     */
    double aliveLogOdds(int b, long age) {
        double p = (continued[b] + 1) / (Math.max(ended[b], continued[b]) + 2);
        return Math.log(p / (1 - p)) - age / meanGap;
    }

    /** The walk {@code node} belongs to, or null (not on the GPU tier, or never referenced there). */
    private static Walk walkOf(PolicyNode node) {
        return slot(node) instanceof Walk w ? w : null;
    }

    /** The walk that referenced {@code node} last, whether it is on the GPU tier now or left it since; or null. */
    private static Walk lastWalkOf(PolicyNode node) {
        Object slot = slot(node);
        return slot instanceof Walk w ? w : slot instanceof Away away ? away.walk : null;
    }

    /** The tracker's per-segment slot ({@link DemotionPolicy.Segment#policyNode}): a walk, an {@link Away} or null. */
    private static Object slot(PolicyNode node) {
        return ((DemotionPolicy.Segment) (Object) node).policyNode();
    }

    private static void slot(PolicyNode node, Object walkOrAway) {
        ((DemotionPolicy.Segment) (Object) node).policyNode(walkOrAway);
    }

    /**
     * What a segment that left the GPU tier keeps of its last walk there: that walk, so that a later walk reading it
     * again (promoted back) still counts as continuing it. One per walk, shared by its segments.
     */
    private static final class Away {
        final Walk walk;

        Away(Walk walk) {
            this.walk = walk;
        }
    }

    /**
     * A GPU reference of {@code node} (registered, used or promoted onto the tier) covering {@code positions}; returns
     * the walk it ended, if it ended one (for the simulations: {@link RetentionShadows#walkEnded}), else null.
     */
    Walk referenced(PolicyNode node, PositionRange positions) {
        long start = positions.start();
        Walk endedNow = null;
        if (walk == null || start == 0 || start != walk.end) {
            endedNow = endWalk();
            walk = new Walk();
            clock++;
        }
        Walk before = lastWalkOf(node);
        if (before != null && before.ended && !before.continued
                && positions.end() >= before.end - CONTINUED_BLOCKS * Math.max(1, positions.end() - start)) {
            before.continued = true;
            continued[before.bucket]++;
            walk.continues = before;
            if (gaps < 1 / GAP_WEIGHT) {
                gaps++;
            }
            meanGap += Math.max(GAP_WEIGHT, 1.0 / gaps) * ((clock - before.endTime) - meanGap);
        }
        join(node);
        walk.end = positions.end();
        return endedNow;
    }

    /** {@code node} arrived on the GPU tier without a reference (a rolled back demotion): it joins the walk in progress. */
    void returned(PolicyNode node) {
        if (walk == null) {
            walk = new Walk();
            clock++;
        }
        join(node);
    }

    /** {@code node}, on the GPU tier, joins the walk in progress, leaving the one it belonged to. */
    private void join(PolicyNode node) {
        Walk owner = walkOf(node);
        if (owner == walk) {
            return;
        }
        if (owner != null) {
            leaveWalk(owner);
        }
        Walk last = lastWalkOf(node);
        if (last == walk) { // left the tier during this walk and came back: its entry is there already
            walk.live++;
        } else {
            walk.add(node, last);
        }
        slot(node, walk);
    }

    /** {@code node} left the GPU tier (demoted, rolled back off it) or is removed ({@code removed}). */
    void left(PolicyNode node, boolean removed) {
        Walk w = walkOf(node);
        if (w != null) {
            slot(node, removed ? null : w.away());
            leaveWalk(w);
        } else if (removed) {
            slot(node, null);
        }
    }

    private void leaveWalk(Walk w) {
        if (--w.live == 0 && w.ended) {
            unlinkEverywhere(w);
        }
    }

    private void unlinkEverywhere(Walk w) {
        // No segment belongs to it: only its depth and times are still read (through an Away).
        w.nodes = null;
        w.count = 0;
        w.ownCount = 0;
        if (w.ownLink.queue != null) {
            WalkList list = buckets[w.bucket];
            list.unlink(w.ownLink);
            if (list.head == null) {
                nonEmpty[w.bucket >>> 6] &= ~(1L << w.bucket);
            }
        }
        if (w.sharedLink.queue != null) {
            shared.unlink(w.sharedLink);
        }
    }

    /** Ends the walk in progress: counts it, sorts its segments into its own and shared ones, files it. */
    private Walk endWalk() {
        Walk w = walk;
        if (w == null) {
            return null;
        }
        w.ended = true;
        w.endTime = clock;
        w.bucket = bucket(w.end);
        ended[w.bucket]++;
        if (++endedWalks % DECAY_WALKS == 0) {
            for (int i = 0; i < BUCKETS; i++) {
                ended[i] /= 2;
                continued[i] /= 2;
            }
        }
        w.sort(this);
        if (w.tail != null) {
            pushTail(w.tail, w);
        }
        if (w.live == 0) {
            w.nodes = null;
            w.count = 0;
            w.ownCount = 0;
        } else {
            if (w.ownCount > 0) {
                buckets[w.bucket].append(w.ownLink);
                nonEmpty[w.bucket >>> 6] |= 1L << w.bucket;
            }
            if (w.count > w.ownCount) {
                shared.append(w.sharedLink);
            }
        }
        return w;
    }

    /**
     * Adds a walk's tail to the ring. A full ring first drops its stale entries (queries drop them only from its
     * head, and a tier that never needs room asks none), and grows only if more than half are still live: its size
     * stays within twice the tails on the tier, and each entry is dropped once (amortised O(1)).
     */
    private void pushTail(PolicyNode node, Walk w) {
        if (tailCount == tailNodes.length) {
            int length = tailNodes.length;
            int live = 0;
            for (int i = 0; i < tailCount; i++) {
                int slot = (tailHead + i) % length;
                if (walkOf(tailNodes[slot]) == tailWalks[slot]) {
                    live++;
                }
            }
            PolicyNode[] nodes = new PolicyNode[2 * live > length ? 2 * length : length];
            Walk[] walks = new Walk[nodes.length];
            int kept = 0;
            for (int i = 0; i < tailCount; i++) {
                int slot = (tailHead + i) % length;
                if (walkOf(tailNodes[slot]) == tailWalks[slot]) {
                    nodes[kept] = tailNodes[slot];
                    walks[kept++] = tailWalks[slot];
                }
            }
            tailNodes = nodes;
            tailWalks = walks;
            tailHead = 0;
            tailCount = kept;
        }
        int slot = (tailHead + tailCount) % tailNodes.length;
        tailNodes[slot] = node;
        tailWalks[slot] = w;
        tailCount++;
    }

    /**
     * Names the GPU tier's segments as the class comment says until their sizes add up to {@code needed}: chain
     * tails ({@code tails}, unused ones), walks by bucket, shared segments, the walk in progress; returns what is
     * still needed after those (held segments are the caller's: they are passed here), and sets {@code heldPassed[0]}
     * if it passed a held one.
     */
    long collect(PolicyNode.Queue tails, long needed, List<String> keys, boolean[] heldPassed) {
        long stillNeeded = needed;
        long query = ++queries;
        for (PolicyNode node = tails.head; node != null && stillNeeded > 0; node = node.next) {
            if (node.held) {
                heldPassed[0] = true;
            } else if (node.uses == 0) {
                CandidateList.add(keys, node);
                stillNeeded -= node.sizeBytes;
            }
        }
        for (int i = 0; i < tailCount && stillNeeded > 0; i++) {
            int slot = (tailHead + i) % tailNodes.length;
            PolicyNode node = tailNodes[slot];
            if (walkOf(node) != tailWalks[slot]) {
                if (i == 0) { // stale for good: off the ring
                    tailNodes[slot] = null;
                    tailWalks[slot] = null;
                    tailHead = (tailHead + 1) % tailNodes.length;
                    tailCount--;
                    i--;
                }
            } else if (nameable(node, tails, heldPassed)) {
                CandidateList.add(keys, node);
                stillNeeded -= node.sizeBytes;
            }
        }
        while (stillNeeded > 0) {
            int best = -1;
            double bestOdds = Double.POSITIVE_INFINITY;
            for (int word = 0; word < nonEmpty.length; word++) {
                for (long bits = nonEmpty[word]; bits != 0; bits &= bits - 1) {
                    int b = word * 64 + Long.numberOfTrailingZeros(bits);
                    Cursor c = cursors[b];
                    if (c.query != query) {
                        c.start(query, buckets[b].head, false);
                    }
                    Walk w = c.peek(tails, heldPassed);
                    if (w != null) {
                        double odds = aliveLogOdds(b, clock - w.endTime);
                        if (odds < bestOdds) {
                            bestOdds = odds;
                            best = b;
                        }
                    }
                }
            }
            if (best < 0) {
                break;
            }
            PolicyNode node = cursors[best].take();
            CandidateList.add(keys, node);
            stillNeeded -= node.sizeBytes;
        }
        if (stillNeeded > 0) {
            sharedCursor.start(query, shared.head, true);
            while (stillNeeded > 0 && sharedCursor.peek(tails, heldPassed) != null) {
                PolicyNode node = sharedCursor.take();
                CandidateList.add(keys, node);
                stillNeeded -= node.sizeBytes;
            }
        }
        if (stillNeeded > 0 && walk != null) {
            for (int i = 0; i < walk.count && stillNeeded > 0; i++) {
                PolicyNode node = walk.nodes[i];
                if (walkOf(node) == walk && nameable(node, tails, heldPassed)) {
                    CandidateList.add(keys, node);
                    stillNeeded -= node.sizeBytes;
                }
            }
        }
        return stillNeeded;
    }

    /**
     * Whether {@code node}, owned by the walk being scanned, may be named now: not held (noted), and not an unused
     * chain tail (those were offered first).
     */
    private static boolean nameable(PolicyNode node, PolicyNode.Queue tails, boolean[] heldPassed) {
        if (node.held) {
            heldPassed[0] = true;
            return false;
        }
        return node.queue != tails || node.uses > 0;
    }

    /** One query's position in a list of walks: the walk and the entry next to look at. */
    private static final class Cursor {
        long query;
        Walk walk;
        int index;
        boolean sharedPart;

        void start(long query, WalkLink head, boolean sharedPart) {
            this.query = query;
            this.sharedPart = sharedPart;
            this.walk = head == null ? null : head.walk;
            this.index = head == null ? 0 : walk.scan(sharedPart);
        }

        /** Moves to the next nameable entry; returns its walk, or null at the end of the list. */
        Walk peek(PolicyNode.Queue tails, boolean[] heldPassed) {
            while (walk != null) {
                int end = sharedPart ? walk.count : walk.ownCount;
                while (index < end) {
                    PolicyNode node = walk.nodes[index];
                    if (walkOf(node) != walk) {
                        walk.passedStale(sharedPart, index); // stale for good: the segment left this walk
                        index++;
                    } else if (!nameable(node, tails, heldPassed)) {
                        index++;
                    } else {
                        return walk;
                    }
                }
                WalkLink next = (sharedPart ? walk.sharedLink : walk.ownLink).next;
                walk = next == null ? null : next.walk;
                index = walk == null ? 0 : walk.scan(sharedPart);
            }
            return null;
        }

        /** The entry {@link #peek} stopped at, stepping past it. */
        PolicyNode take() {
            return walk.nodes[index++];
        }
    }

    /**
     * One walk: its references of GPU segments in order (with the walk each segment belonged to before, to tell
     * shared segments at the end), how many of them it still owns, and its links in a bucket list and the shared list.
     */
    static final class Walk {
        long end;
        long endTime;
        int bucket;
        boolean ended;
        boolean continued;
        Walk continues;
        /**
         * After {@link #sort}: the walk's last segment if it arrived on the tier in this walk (registered, most
         * likely a partial last block whose key changes when the chain grows), else null. For the simulations only.
         */
        PolicyNode tail;
        PolicyNode[] nodes = new PolicyNode[4];
        private Walk[] previous = new Walk[4];
        int count;
        /** After {@link #sort}: entries below this are the walk's own segments, the rest shared ones. */
        int ownCount;
        /** Segments that belong to this walk. */
        int live;
        private Away away;
        /** Entries below these are stale for good (their segment left the walk): where a scan starts. */
        private int ownScan;
        private int sharedScan;
        /** Its place in its depth bucket's list of walks (own part) and in the list of walks with shared segments. */
        final WalkLink ownLink = new WalkLink(this);
        final WalkLink sharedLink = new WalkLink(this);

        Away away() {
            if (away == null) {
                away = new Away(this);
            }
            return away;
        }

        void add(PolicyNode node, Walk before) {
            if (count == nodes.length) {
                nodes = java.util.Arrays.copyOf(nodes, 2 * count);
                previous = java.util.Arrays.copyOf(previous, 2 * count);
            }
            nodes[count] = node;
            previous[count] = before;
            count++;
            live++;
        }

        /**
         * Drops the entries whose segment left (and the tail), then puts the own segments first and the shared ones (referenced
         * before by a walk other than the one this continued) after them, each part in reference order.
         */
        void sort(ChainContinuation owner) {
            PolicyNode[] scratch = owner.scratch;
            tail = count > 0 && previous[count - 1] == null && walkOf(nodes[count - 1]) == this ? nodes[count - 1] : null;
            // Own entries move down in place (never past an entry not yet read); shared ones wait in the scratch array.
            int own = 0;
            int kept = 0;
            int sharedCount = 0;
            if (scratch.length < count) {
                scratch = new PolicyNode[Math.max(count, 2 * scratch.length)];
            }
            for (int i = 0; i < count; i++) {
                PolicyNode node = nodes[i];
                if (walkOf(node) != this || node == tail) { // the tail is on the ring of tails instead
                    continue;
                }
                kept++;
                Walk before = previous[i];
                if (before != null && before != continues) {
                    scratch[sharedCount++] = node;
                } else {
                    nodes[own++] = node;
                }
            }
            owner.scratch = scratch;
            System.arraycopy(scratch, 0, nodes, own, sharedCount);
            java.util.Arrays.fill(scratch, 0, sharedCount, null);
            for (int i = kept; i < count; i++) {
                nodes[i] = null;
            }
            count = kept;
            ownCount = own;
            ownScan = 0;
            sharedScan = own;
            previous = null; // needed no more
            continues = null; // let continued walks go
        }

        int scan(boolean sharedPart) {
            return sharedPart ? sharedScan : ownScan;
        }

        void passedStale(boolean sharedPart, int index) {
            if (sharedPart) {
                if (index == sharedScan) {
                    sharedScan++;
                }
            } else if (index == ownScan) {
                ownScan++;
            }
        }
    }

    /** A walk's place in one {@link WalkList}: a walk is in two lists at once, so it has one link for each. */
    private static final class WalkLink extends LinkedFifo.Link<WalkLink, WalkList> {
        final Walk walk;

        WalkLink(Walk walk) {
            this.walk = walk;
        }

        @Override
        long queuedBytes() {
            return 0; // the lists order walks; bytes are counted per segment elsewhere
        }
    }

    /** A list of walks, oldest first: a depth bucket's (through their own-part links) or the shared one. */
    private static final class WalkList extends LinkedFifo<WalkLink, WalkList> {
        WalkList(String name) {
            super(name);
        }
    }
}
