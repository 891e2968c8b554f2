package dev.kvtier.store;

import dev.kvtier.store.policy.ArcPolicy;
import dev.kvtier.store.policy.FrequencyExpertPolicy;
import dev.kvtier.store.policy.LruKPolicy;
import dev.kvtier.store.policy.S3FifoPolicy;
import dev.kvtier.store.policy.WTinyLfuPolicy;

import java.util.Comparator;
import java.util.List;

/**
 * Decides which segments of a tier {@link TieredStore#candidatesForDemotion} offers for demotion,
 * first to demote first.
 *
 * <h2>Two ways to write a policy</h2>
 * <ul>
 *   <li><b>An order</b> (the special case): implement {@link #name()} and {@link #demotionOrder()}.
 *       The store keeps, per tier, an index in that order (a red-black tree, O(log n) per update,
 *       O(k + log n) for k candidates; the two built-in orders get an O(1) bucket index), breaks
 *       every tie by {@link Usage#lastUse()} and never sorts a tier. The comparator must be a total
 *       preorder depending only on the {@link Usage} values it is given, cheap, stateless and
 *       thread-safe, and must not call back into the store.</li>
 *   <li><b>A tracker</b> (anything else: admission, ghost entries, frequency sketches, adaptation):
 *       override {@link #newTracker(long, long)}. Each store asks for its own {@link Tracker},
 *       tells it every event (registered, used, demoted, promoted, rolled back, removed, with the
 *       tiers and the segment's size and usage) and asks it for candidates per tier. Built in:
 *       {@link #s3Fifo()}, {@link #wTinyLfu()}, {@link #lru2()} and {@link #arc()}.</li>
 * </ul>
 * A policy object itself must be immutable and thread-safe (one may serve many stores); a tracker
 * belongs to one store and is called under that store's lock, one call at a time, except for the uses it
 * declares it takes concurrently ({@link Tracker#takesConcurrentUses()}).
 *
 * @see #defaultPolicy()
 * @see #leastAccessedFirst()
 * @see #leastRecentlyUsed()
 * @see #s3Fifo()
 * @see #wTinyLfu()
 * @see #lru2()
 * @see #arc()
 */
public interface DemotionPolicy {

    /**
     * What a policy may look at to order segments. The store hands out live views under its lock;
     * do not retain them.
     */
    interface Usage {
        /**
         * The segment's key.
         *
         * @return the key, as registered
         */
        String key();

        /**
         * The segment's size in bytes.
         *
         * @return the size in bytes, {@code >= 0}
         */
        long sizeBytes();

        /**
         * Promotions plus touches so far.
         *
         * @return the access count, {@code >= 0}; kept across tiers
         */
        long accessCount();

        /**
         * When the segment was last registered, touched or promoted, on the store's monotonic
         * logical clock: larger is more recent, and no two segments in one store share a value.
         * (Demotion is not a use: it is the store's decision, not the caller's demand.) Exception: where the
         * tracker takes uses without the lock ({@link Tracker#takesConcurrentUses()}), touches racing each other
         * or a change may be stamped with one value, or with one a little below the newest.
         *
         * @return the stamp of the last use on the store's clock
         */
        long lastUse();

        /**
         * The token positions the segment covers: its place in its sequence (a segment starting at
         * 0 is the start of a prefix chain; the next segment of a chain starts where this one ends).
         *
         * @return the positions, never null; unchanged by moves
         */
        PositionRange positions();
    }

    /**
     * A segment as a {@link Tracker} sees it: its current usage (already updated by the event being
     * reported) and one slot where the tracker may keep its own per-segment node, so that it needs
     * no map of its own. The view is the store's live record: valid until the segment's
     * {@link Tracker#removed} returns; do not retain it beyond that, and do not call the store from it.
     */
    interface Segment extends Usage {
        /**
         * The tracker's node for this segment, or null before the tracker set one.
         *
         * @return the node last kept by {@link #policyNode(Object)}, or null
         */
        Object policyNode();

        /**
         * Keeps {@code node} for this segment (the store never reads it).
         *
         * @param node the tracker's own object for this segment; null clears it
         */
        void policyNode(Object node);
    }

    /**
     * One store's policy state. The store calls every method under its lock, one at a time, after it
     * has checked the operation is valid; a tracker is never shared between stores. The one exception is
     * {@link #usedConcurrently}, called without the lock if and only if {@link #takesConcurrentUses()} says so.
     *
     * <p>Contract (checked for the built-in trackers by property tests): {@link #collectCandidates}
     * names only segments that are on the asked tier, each once, never a removed one, in the order
     * to demote them, stopping as soon as their sizes add up to {@code needed} (all of the tier's
     * segments if they do not); the answers depend only on the sequence of events and queries, so
     * one history gives one answer. A tracker may reorganise its own state while answering (e.g.
     * move a segment between its queues) but must not change anything the store can see.
     *
     * <p>Errors: a tracker should not throw. If it does, the store undoes its own change (for
     * register, touch, demote, promote and rollback; remove is reported before anything changes)
     * and throws an {@link IllegalStateException} naming the policy and the event, with the
     * tracker's exception as its cause.
     */
    interface Tracker {
        /**
         * {@code segment} was registered on {@code tier} (a use).
         *
         * @param segment the segment concerned, the store's live view of it (see {@link Segment})
         * @param tier    the tier it was registered on
         */
        void registered(Segment segment, Tier tier);

        /**
         * {@code segment}, which stays on {@code tier}, was touched (an access and a use).
         *
         * @param segment the segment concerned, the store's live view of it (see {@link Segment})
         * @param tier    the tier it is on
         */
        void used(Segment segment, Tier tier);

        /**
         * Whether this tracker takes some uses without the store's lock, through {@link #usedConcurrently}: asked
         * once, when the store is built. The default, false, keeps every call under the lock (a tracker written
         * for that contract keeps it). Why a tracker would: a touch is the store's most frequent operation, and
         * the lock's atomic instruction costs as much as the rest of a touch at 10^3 segments (issue 12).
         *
         * @return true when the store should report touches through {@link #usedConcurrently} first
         */
        default boolean takesConcurrentUses() {
            return false;
        }

        /**
         * A touch of {@code segment}, reported <b>without the store's lock</b> (only if {@link #takesConcurrentUses()}):
         * either record it and answer true, or change nothing and answer false, and the store then takes its lock
         * and reports the same use through {@link #used} (the segment's usage is not raised a second time). Called
         * after the store raised the segment's {@link Usage#accessCount()} and {@link Usage#lastUse()} (without the
         * lock too), with the tier it was on when the store looked.
         *
         * <p>It may run at the same time as any other call of this tracker, under the lock or not, including another
         * use of the same segment, its removal or its move off {@code tier} (it may then be called for a segment the
         * tracker already forgot). So it must never block, never throw, and leave every structure of the tracker
         * consistent whatever it races with: it may read state the lock guards, racily (a read may be stale), and
         * may only write fields whose lost or late update cannot break an invariant (a counter, a bit), never a
         * link or a queue. A use it records may be lost, or counted once for two racing uses; with no race it must
         * record exactly what {@link #used} would (single-threaded answers do not change). The default answers
         * false.
         *
         * @param segment the segment touched, a live view that may be removed or moved concurrently
         * @param tier    the tier the segment was on when the store looked, which it may have left since
         * @return true when the use was recorded; false to have the store report it again through {@link #used} under
         *         its lock
         */
        default boolean usedConcurrently(Segment segment, Tier tier) {
            return false;
        }

        /**
         * {@code segment} was booked from {@code from} down to {@code to} (not a use).
         *
         * @param segment the segment concerned, the store's live view of it (see {@link Segment})
         * @param from    the tier it left
         * @param to      the slower tier it is booked to
         */
        void demoted(Segment segment, Tier from, Tier to);

        /**
         * {@code segment} was booked from {@code from} up to {@code to} (an access and a use).
         *
         * @param segment the segment concerned, the store's live view of it (see {@link Segment})
         * @param from    the tier it left
         * @param to      the faster tier it is booked to
         */
        void promoted(Segment segment, Tier from, Tier to);

        /**
         * The latest move of {@code segment} was rolled back: it went from {@code from} back to
         * {@code to}, where it was before the move (a promotion's access is taken back).
         *
         * @param segment the segment concerned, the store's live view of it (see {@link Segment})
         * @param from    the tier the rolled-back move booked it to
         * @param to      the tier it is back on
         */
        void rolledBack(Segment segment, Tier from, Tier to);

        /**
         * {@code segment}, on {@code tier}, is about to be removed; forget it.
         *
         * @param segment the segment concerned, the store's live view of it (see {@link Segment})
         * @param tier    the tier it is on
         */
        void removed(Segment segment, Tier tier);

        /**
         * {@code segment}, named as a candidate on {@code tier}, cannot leave it until {@link #released} (a prefix
         * block whose children are there: it may only leave after them). A tracker should keep its rank but not name
         * it meanwhile, except when the tier's other segments do not add up to what is asked; otherwise every later
         * query names it again only for it to be refused. Not a use, and no access. It ends with {@link #released}
         * or when the segment leaves the tier. The default does nothing (it is named, and refused, again).
         *
         * @param segment the segment concerned, the store's live view of it (see {@link Segment})
         * @param tier    the tier it must stay on for now
         */
        default void held(Segment segment, Tier tier) {
        }

        /**
         * {@code segment}, on {@code tier}, may leave it again (see {@link #held}). The default does nothing.
         *
         * @param segment the segment concerned, the store's live view of it (see {@link Segment})
         * @param tier    the tier it was held on
         */
        default void released(Segment segment, Tier tier) {
        }

        /**
         * Appends to {@code keys} the keys to demote from {@code tier} until their sizes add up to
         * at least {@code needed} ({@code > 0}), or all of the tier's keys.
         *
         * @param tier   the tier to name candidates on
         * @param needed how many bytes the candidates must add up to, {@code > 0}
         * @param keys   where to append the keys, first to demote first; the store owns it and may hold keys already
         */
        void collectCandidates(Tier tier, long needed, List<String> keys);
    }

    /**
     * A short stable name for logs and benchmark labels, e.g. {@code "least-accessed-first"}.
     *
     * @return the policy's name, not blank, the same on every call; built-in names are those {@link #named} takes
     */
    String name();

    /**
     * The demotion order of an order policy: segments that compare smaller are demoted first.
     * Tracker policies return null (the default).
     *
     * @return the comparator ordering segments to demote first, or null for a tracker policy
     */
    default Comparator<Usage> demotionOrder() {
        return null;
    }

    /**
     * A fresh tracker for one store with these budgets. The default serves {@link #demotionOrder()}
     * through an index per tier (the comparator adapter); tracker policies override it.
     *
     * @param gpuBudget the store's GPU budget in bytes, {@code >= 0}
     * @param cpuBudget the store's CPU budget in bytes, {@code >= 0} (disk is unbounded)
     * @return a new tracker with no segments, owned by the store that asked for it
     * @throws IllegalArgumentException (from the default) if {@link #demotionOrder()} is null
     */
    default Tracker newTracker(long gpuBudget, long cpuBudget) {
        return OrderTracker.of(this, UsageBucketIndex.DEFAULT_EMPTY_BUCKET_SLACK);
    }

    /**
     * The policy a store or cache gets when none is given: {@link #adaptiveS3Fifo()}, chosen by
     * measurement against LRU, the seed's policy, the other built-in policies and the offline optimum on
     * generated chat, chat-with-think-time, tool-agent and document-QA traces (bench/RESULTS.md, Policy against
     * the optimum; {@link #chainAwareS3Fifo()} was the default before it). Kept by the held-out comparison with the
     * classic policies (LRU, LFU, LRU-2, ARC, S3-FIFO, W-TinyLFU): chosen on the tuning families and seeds
     * (bench/results/policy-tuning.md) and reported on held-out ones (bench/results/policy-heldout.md), where it is
     * within 2% of the best classic policy of a cell in 76 of 108 cells and up to about 20% behind it in one (LFU on
     * document QA at GPU 2%, short window). {@link #adaptiveS3FifoLfu()} does better there (88 of 108, worst cell
     * 0.833 against 0.795) but is not the default: it costs about 2.4x LRU's time per reference at 10^3 GPU segments
     * (the cost limit is 1.5x), every GPU use takes the store's lock, and it falls more than 2% behind this policy in
     * 15 held-out cells of the production-shaped families (conversation, agent loop, burst chat).
     *
     * @return the default policy, {@link #adaptiveS3Fifo()}
     */
    static DemotionPolicy defaultPolicy() {
        return adaptiveS3Fifo();
    }

    /**
     * The seed's policy: least accessed first, ties broken by least recently used (the
     * LFU-with-LRU-tie-break order; the store's access counts are kept across tiers). The default
     * before {@link #chainAwareS3Fifo()}; the seed twins use it explicitly.
     *
     * @return a policy named {@code "least-accessed-first"}, immutable and shareable between stores (each gets its
     *         own tracker)
     */
    static DemotionPolicy leastAccessedFirst() {
        return StandardDemotionPolicy.LEAST_ACCESSED_FIRST;
    }

    /**
     * Plain least recently used first; access counts are ignored.
     *
     * @return a policy named {@code "least-recently-used"}, immutable and shareable between stores (each gets its own
     *         tracker)
     */
    static DemotionPolicy leastRecentlyUsed() {
        return StandardDemotionPolicy.LEAST_RECENTLY_USED;
    }

    /**
     * S3-FIFO per tier (Yang et al., SOSP 2023): a small FIFO (10% of the tier's bytes) that new
     * arrivals enter, a main FIFO with a 2-bit use counter per segment (reinserted while the counter
     * is positive, decremented each time), and a ghost FIFO of keys recently demoted out of the small
     * queue that sends them straight to main when they come back. O(1) per event, amortised O(1)
     * per candidate. Name {@code "s3-fifo"}.
     *
     * @return a policy named {@code "s3-fifo"}, immutable and shareable between stores (each gets its own tracker)
     */
    static DemotionPolicy s3Fifo() {
        return S3FifoPolicy.INSTANCE;
    }

    /**
     * W-TinyLFU per tier (Einziger, Friedman and Manes 2017, as in Caffeine): a small LRU window
     * (1% of the tier's bytes) in front of a segmented LRU main space (probation and protected,
     * 80% protected), with admission from the window into main decided by a count-min sketch of
     * each key's recent popularity (4-bit counters, halved periodically; one sketch per store, so
     * popularity is kept across tiers). O(1) per event and per candidate. Name {@code "w-tinylfu"}.
     *
     * @return a policy named {@code "w-tinylfu"}, immutable and shareable between stores (each gets its own tracker)
     */
    static DemotionPolicy wTinyLfu() {
        return WTinyLfuPolicy.INSTANCE;
    }

    /**
     * LRU-2 (LRU-K with K = 2, O'Neil et al. 1993) per tier: segments with one known use first, least recently used
     * first, then the others by their second-to-last use, oldest first. A segment keeps its history (its last two
     * uses on the store's clock) across tiers, and a removed key's last use is remembered in a bounded history (at
     * most as many keys as the store has segments) for when it is registered again. O(log n) per event, O(k + log n)
     * for k candidates. Name {@code "lru-2"}.
     *
     * @return a policy named {@code "lru-2"}, immutable and shareable between stores (each gets its own tracker)
     */
    static DemotionPolicy lru2() {
        return LruKPolicy.INSTANCE;
    }

    /**
     * ARC (Megiddo and Modha 2003) per tier: a recency list and a frequency list of the tier's segments, ghost lists
     * of the keys recently demoted out of each, and a target size for the recency list that moves towards whichever
     * ghosts come back. O(1) per event, O(k) for k candidates. Name {@code "arc"}.
     *
     * @return a policy named {@code "arc"}, immutable and shareable between stores (each gets its own tracker)
     */
    static DemotionPolicy arc() {
        return ArcPolicy.INSTANCE;
    }

    /**
     * S3-FIFO aware of prefix chains (the previous default; {@link #adaptiveS3Fifo()}, the default now,
     * names as this one does except where its GPU tier learns to retain). As {@link #s3Fifo()}
     * with a small queue of 1/5 of the tier's bytes and ghosts for 4x the tier's segment count, and
     * one rule more: a segment registered at the end of a walk along a chain (no registration starts
     * where it ends within the next 32 accesses; see {@link Usage#positions()}) is usually a request's
     * partial last block, whose key changes when the sequence grows, so while unused it is named before any
     * other. O(1) per event, amortised O(1) per candidate. Name {@code "chain-s3-fifo"}.
     *
     * @return a policy named {@code "chain-s3-fifo"}, immutable and shareable between stores (each gets its own
     *         tracker)
     */
    static DemotionPolicy chainAwareS3Fifo() {
        return S3FifoPolicy.CHAIN_AWARE;
    }

    /**
     * The default ({@link #defaultPolicy()}): {@link #chainAwareS3Fifo()} with a learned retention on the GPU tier: miniature
     * simulations of the tier's sampled references (Waldspurger et al., ATC 2017) compare S3-FIFO with keeping a stable set (segments unused
     * for 1.5, 3 or 6 times the tier's segment count named first, then the newest arrivals), and the tier names
     * its candidates the way that currently gets the most hits. Suits traffic whose reuse comes back after
     * longer than the tier can hold everything (multi-turn chat with user think time) without losing S3-FIFO's
     * behaviour elsewhere. O(1) amortised per event (a sampled reference updates four bounded simulations of
     * at most 256 keys each), amortised O(1) per candidate. Name {@code "adaptive-s3-fifo"}.
     *
     * @return a policy named {@code "adaptive-s3-fifo"}, immutable and shareable between stores (each gets its own
     *         tracker)
     */
    static DemotionPolicy adaptiveS3Fifo() {
        return S3FifoPolicy.ADAPTIVE;
    }

    /**
     * {@link #adaptiveS3Fifo()} whose GPU tier also learns, online, how its prefix chains go on, and whose simulations
     * compare one more behaviour: naming first the segments whose chain is least likely to be walked again. A walk is
     * a request's run along its chain; per depth bucket (where the walk ended, half octaves) the tier counts how often
     * a later walk continued one ended there, and the mean time until it did; a segment's chance is its last walk's
     * (log-odds {@code logit(p) - age / G}); prefix segments shared between chains (system prompts, documents) are
     * named last. Nothing is assumed of the workload. On generated multi-turn chat it gets more hits than
     * {@link #adaptiveS3Fifo()} (+0.03 of the optimum at 10,000 requests), but it loses some cells that one meets, so it is not the default
     * (bench/RESULTS.md, Policy against the optimum). Every GPU touch takes the store's lock (the walks see every reference).
     * O(1) amortised per event; a candidate costs O(non-empty depth buckets). Name
     * {@code "adaptive-continuation-s3-fifo"}.
     *
     * @return a policy named {@code "adaptive-continuation-s3-fifo"}, immutable and shareable between stores (each
     *         gets its own tracker)
     */
    static DemotionPolicy adaptiveContinuationS3Fifo() {
        return S3FifoPolicy.CONTINUATION;
    }

    /**
     * {@link #adaptiveS3Fifo()} with least accessed first as a second expert on the GPU tier: miniature simulations of
     * the tier's sampled references (Waldspurger et al., ATC 2017) compare an S3-FIFO cache with an LFU cache of the
     * tier's scaled budget, and while LFU gets more hits (traffic where popularity, not recency, predicts reuse, as in
     * document QA) the tier names its segments least accessed first (the store's access counts, kept across tiers,
     * least recently used first among equals), otherwise as the adaptive S3-FIFO does. Every use of a GPU segment
     * takes the store's lock (the adaptive S3-FIFO takes most without it). O(1) per use (an arrival onto the GPU tier
     * whose access count no segment there has walks the tier's b access-count buckets below it, O(b); a sampled
     * reference costs O(log 256) in the simulations), O(k) for k candidates; measured (PolicyOpCost) about 1.3x LRU's
     * cost per reference at 10^5 and 10^6 GPU segments, 2.4x at 10^3, where its simulations sample a quarter of the
     * references. Name {@code "adaptive-s3-fifo-lfu"}.
     *
     * @return the shared, immutable policy (each store gets its own tracker)
     */
    static DemotionPolicy adaptiveS3FifoLfu() {
        return FrequencyExpertPolicy.INSTANCE;
    }

    /**
     * The built-in policy called {@code name}: {@code "least-accessed-first"},
     * {@code "least-recently-used"}, {@code "s3-fifo"}, {@code "w-tinylfu"}, {@code "lru-2"}, {@code "arc"},
     * {@code "chain-s3-fifo"}, {@code "adaptive-s3-fifo"}, {@code "adaptive-continuation-s3-fifo"} or
     * {@code "adaptive-s3-fifo-lfu"} (for command
     * lines and benchmark parameters).
     *
     * @param name one of the names above, exactly (case matters)
     * @return the built-in policy whose {@link #name()} is {@code name}
     * @throws IllegalArgumentException naming the value and the known names if there is none
     */
    static DemotionPolicy named(String name) {
        for (DemotionPolicy policy : List.of(leastAccessedFirst(), leastRecentlyUsed(), s3Fifo(), wTinyLfu(), lru2(), arc(),
                chainAwareS3Fifo(), adaptiveS3Fifo(), adaptiveContinuationS3Fifo(), adaptiveS3FifoLfu())) {
            if (policy.name().equals(name)) {
                return policy;
            }
        }
        throw new IllegalArgumentException("no built-in demotion policy is named \"" + name
                + "\"; known: least-accessed-first, least-recently-used, s3-fifo, w-tinylfu, lru-2, arc, chain-s3-fifo, "
                + "adaptive-s3-fifo, adaptive-continuation-s3-fifo, adaptive-s3-fifo-lfu");
    }
}
