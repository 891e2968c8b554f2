package dev.kvtier.cluster;

import dev.kvtier.CacheChangeListener;
import dev.kvtier.KvTierCache;
import dev.kvtier.RecoveryReport;
import dev.kvtier.concurrent.KvTierThreads;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.store.Tier;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Connects one rank's {@link KvTierCache} to the cluster: every committed change to a prefix block (a segment keyed
 * {@link PrefixBlockCache#keyOf}; other keys are ignored) becomes an event of this rank's {@link ClusterPublisher},
 * the publisher's re-announcements walk what the cache holds, and the router's prefetch hints promote the hinted
 * prefix to the GPU. Obtain with {@link #connect}, call {@link #endStep()} at each engine step boundary, close when the
 * rank stops.
 *
 * <p><b>Events follow bytes.</b> The events come from a {@link CacheChangeListener}, which the cache calls only after a
 * change is committed: a block added on a tier is {@code blockStored}; a block moved is {@code blockStored} on the new
 * tier <em>then</em> {@code blockRemoved} from the old one (so that an index which applied only the first half, e.g.
 * when a step is split over two messages, still holds the block); a block removed from its last tier (a cache holds a
 * segment on one tier at a time) is {@code blockGone}. Tokens per block are the layout's.
 *
 * <p><b>Holdings.</b> The cache offers no way to list its segments, so this bridge keeps its own map, block to tier,
 * updated by the same listener calls <em>before</em> they are forwarded (a re-announcement that runs concurrently thus
 * either sees a change or the change's event is sent after the reset; see {@link ClusterPublisher#resetAndReannounce}),
 * and seeded at connection with the prefix blocks the persistent disk tier recovered ({@link KvTierCache#recovery()}:
 * recovered segments are registered on DISK without telling listeners). A new publisher starts with a reset, so a
 * restarted rank tells receivers to forget its older incarnations and re-announces exactly what its disk kept.
 * Connect the bridge before the engine uses the cache: a recovered block removed before it is connected could be
 * announced once too often (the next re-announcement corrects it). Connecting asks for a second reset once the
 * publisher is wired (events between the listener's registration and that moment are covered by the walk); it merges
 * with the publisher's first when that one has not started, else receivers see two resets, which is harmless.
 *
 * <p><b>Recovered blocks are blocks.</b> The persistent disk tier records each block's link to its parent, and
 * recovery rebuilds the chains: a re-announced recovered block is found by {@link PrefixBlockCache#lookupPrefix},
 * restored by {@link PrefixBlockCache#ensurePrefixResident} and continued by {@link PrefixBlockCache#storeBlocks}
 * like before the restart. A recovered block whose parent did not come back is discarded by the recovery (not in
 * {@code recoveredKeys()}, so never announced); one failing its first checksum is dropped with its descendants, and
 * the listener tells each drop.
 *
 * <p><b>Never blocks the cache.</b> The listener runs on the thread that made the change, holding that segment's
 * lock; it only updates a concurrent map and calls the publisher, whose event methods take its short internal lock
 * and queue (they never wait on the network, and the publisher never calls back into the cache under that lock).
 *
 * <p><b>Prefetch.</b> A hint for this rank starts {@link PrefixBlockCache#ensurePrefixResident} of the hinted blocks
 * toward {@link Tier#GPU} on this bridge's own thread ({@code kvtier-cluster-prefetch-*}; the layered async form when
 * the layout is layered), never on the bus's control thread, and closes the pin as soon as the bytes are in place:
 * a prefetch never keeps pages pinned. At most {@value #MAX_QUEUED_PREFETCHES} hints wait; more are dropped (a lost
 * hint only costs the prefetch). Failures (no room, a failed copy, a corrupted block) are counted and logged, never
 * thrown.
 *
 * <p><b>Never silent.</b> {@link #endStep()} is the publisher's: should its publishing thread have ended, the step
 * boundary logs it and starts a new one ({@link ClusterPublisher#publisherRestarts()}); refused and failed publishes
 * are counted there too ({@link ClusterPublisher#refusedMessages()}, {@link ClusterPublisher#publishFailures()}).
 *
 * <p>Thread-safe. Owns its publisher (closed with it), not the cache nor the bus.
 */
public final class RankCacheBridge implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RankCacheBridge.class.getName());
    /** Hints waiting for the prefetch thread; more are dropped. */
    public static final int MAX_QUEUED_PREFETCHES = 64;

    private final KvTierCache cache;
    private final PrefixBlockCache blocks;
    private final int tokensPerBlock;
    private final Map<BlockHash, Tier> holdings = new ConcurrentHashMap<>();
    private final CacheChangeListener listener = new Listener();
    private final ThreadPoolExecutor prefetcher;
    private final AtomicLong prefetchesCompleted = new AtomicLong();
    private final AtomicLong prefetchFailures = new AtomicLong();
    private final AtomicLong prefetchesDropped = new AtomicLong();
    /** Null until the publisher is built: events before that are covered by its first re-announcement. */
    private volatile ClusterPublisher publisher;

    private RankCacheBridge(KvTierCache cache, BlockLayout layout) {
        this.cache = cache;
        this.blocks = cache.prefixBlocks(layout);
        this.tokensPerBlock = layout.tokensPerBlock();
        this.prefetcher = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(MAX_QUEUED_PREFETCHES), KvTierThreads.factory("cluster-prefetch"));
    }

    /**
     * Connects {@code cache} (its prefix blocks of {@code layout}) to a new {@link ClusterPublisher} for {@code rank}
     * on {@code bus}; the arguments after {@code layout} are the publisher's (see its constructor). The publisher's
     * first message is a reset re-announcing what the cache holds (after a restart: what its disk recovered).
     *
     * @param cache             the rank's open cache; not owned (the bridge never closes it)
     * @param layout            the block layout whose prefix blocks are announced and prefetched
     * @param bus               the bus to publish on; not owned
     * @param topology          the cluster's shape
     * @param rank              this rank, in {@code [0, topology.worldSize())}
     * @param host              where a router sends this rank's requests, at most {@link WireFormat#MAX_HOST_BYTES}
     *                          UTF-8 bytes; may be empty
     * @param epoch             this incarnation's epoch, larger than any earlier one of the rank
     *                          ({@link ClusterPublisher#clockEpoch()})
     * @param maxQueuedMessages messages waiting to be published at most, {@code >= 1}
     * @return the connected bridge, owned by the caller: closing it closes its publisher
     * @throws IllegalArgumentException as the publisher's constructor, or for a null cache or layout
     * @throws IllegalStateException    if the cache is closed
     */
    public static RankCacheBridge connect(KvTierCache cache, BlockLayout layout, SyncBus bus, ClusterTopology topology,
            int rank, String host, long epoch, int maxQueuedMessages) {
        if (cache == null || layout == null) {
            throw new IllegalArgumentException("cache and layout must not be null, got " + cache + " and " + layout);
        }
        RankCacheBridge bridge = new RankCacheBridge(cache, layout);
        cache.addListener(bridge.listener);
        bridge.seedWithRecovered(cache.recovery());
        try {
            ClusterPublisher publisher = new ClusterPublisher(bus, topology, rank, host, epoch, bridge::announce,
                    bridge::onPrefetchHint, maxQueuedMessages);
            bridge.publisher = publisher;
            // The constructor's re-announcement may have walked the holdings before an event that, not yet seeing
            // the publisher, was not forwarded: walk once more now that every later event is forwarded (merged
            // with the first when that one has not started).
            publisher.resetAndReannounce();
        } catch (RuntimeException e) {
            cache.removeListener(bridge.listener);
            bridge.prefetcher.shutdownNow();
            throw e;
        }
        return bridge;
    }

    /** Recovered segments are on DISK and were never told to listeners: they start the holdings. */
    private void seedWithRecovered(java.util.Optional<RecoveryReport> recovery) {
        if (recovery.isEmpty()) {
            return;
        }
        for (String key : recovery.get().recoveredKeys()) {
            BlockHash hash = hashOf(key);
            if (hash == null) {
                continue;
            }
            // Only what is still cached (a recovered block failing its first check is dropped, and told).
            cache.get(key).ifPresent(meta -> holdings.putIfAbsent(hash, meta.tier()));
        }
    }

    /** The block of a prefix-block key, or null for any other key. */
    private static BlockHash hashOf(String key) {
        if (!key.startsWith(PrefixBlockCache.KEY_PREFIX)
                || key.length() != PrefixBlockCache.KEY_PREFIX.length() + 2 * BlockHash.BYTES) {
            return null;
        }
        try {
            return BlockHash.fromHex(key.substring(PrefixBlockCache.KEY_PREFIX.length()));
        } catch (IllegalArgumentException notAHash) {
            return null;
        }
    }

    private void announce(ClusterPublisher.Announcer announcer) {
        holdings.forEach((block, tier) -> announcer.block(block, tier, tokensPerBlock));
    }

    /** The cache's events, on the thread that made the change, with the segment lock held: map first, then forward. */
    private final class Listener implements CacheChangeListener {
        @Override
        public void segmentAdded(String key, Tier tier, long bytes) {
            BlockHash block = hashOf(key);
            if (block == null) {
                return;
            }
            holdings.put(block, tier);
            ClusterPublisher p = publisher;
            if (p != null) {
                p.blockStored(block, tier, tokensPerBlock);
            }
        }

        @Override
        public void segmentMoved(String key, Tier from, Tier to, long bytes) {
            BlockHash block = hashOf(key);
            if (block == null) {
                return;
            }
            holdings.put(block, to);
            ClusterPublisher p = publisher;
            if (p != null) {
                p.blockStored(block, to, tokensPerBlock); // present on the new tier before absent from the old
                p.blockRemoved(block, from);
            }
        }

        @Override
        public void segmentRemoved(String key, Tier tier, long bytes) {
            BlockHash block = hashOf(key);
            if (block == null) {
                return;
            }
            holdings.remove(block);
            ClusterPublisher p = publisher;
            if (p != null) {
                p.blockGone(block);
            }
        }
    }

    /** On the bus's control thread: only queues the work. */
    private void onPrefetchHint(List<BlockHash> hinted, long reusableTokens) {
        if (hinted.isEmpty()) {
            return;
        }
        List<BlockHash> chain = List.copyOf(hinted);
        try {
            prefetcher.execute(() -> prefetch(chain));
        } catch (RejectedExecutionException full) {
            prefetchesDropped.incrementAndGet();
            LOG.log(System.Logger.Level.DEBUG, "prefetch of " + chain.size() + " blocks dropped: "
                    + MAX_QUEUED_PREFETCHES + " hints are waiting already (or the bridge is closed)");
        }
    }

    private void prefetch(List<BlockHash> chain) {
        try {
            PrefixPin pin = blocks.layout().isLayered()
                    ? blocks.ensurePrefixResidentByLayer(chain, Tier.GPU).pinned().join()
                    : blocks.ensurePrefixResident(chain, Tier.GPU);
            pin.close();
            prefetchesCompleted.incrementAndGet();
        } catch (RuntimeException e) {
            prefetchFailures.incrementAndGet();
            Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                    ? e.getCause() : e;
            LOG.log(System.Logger.Level.WARNING, "prefetch of " + chain.size() + " blocks from " + chain.getFirst()
                    + " to GPU failed: " + cause);
        }
    }

    /** Ends the engine step: its events go out as one message ({@link ClusterPublisher#endStep()}). */
    public void endStep() {
        publisher.endStep();
    }

    /**
     * The publisher this bridge feeds (for {@link ClusterPublisher#flush}, its counters and epoch).
     *
     * @return the publisher, owned by this bridge (do not close it separately)
     */
    public ClusterPublisher publisher() {
        return publisher;
    }

    /**
     * Blocks this rank holds now by this bridge's account, per tier (what a re-announcement sends).
     *
     * @return an unmodifiable copy: each held block with the tier it was last reported in
     */
    public Map<BlockHash, Tier> holdings() {
        return Map.copyOf(holdings);
    }

    /**
     * Prefetches whose blocks were made GPU-resident (and unpinned again).
     *
     * @return the count since {@link #connect}
     */
    public long prefetchesCompleted() {
        return prefetchesCompleted.get();
    }

    /**
     * Prefetches that failed (no room, a failed copy, a corrupted block, a closed cache).
     *
     * @return the count since {@link #connect}
     */
    public long prefetchFailures() {
        return prefetchFailures.get();
    }

    /**
     * Prefetch hints dropped because {@link #MAX_QUEUED_PREFETCHES} were waiting.
     *
     * @return the count since {@link #connect}
     */
    public long prefetchesDropped() {

        return prefetchesDropped.get();
    }

    /**
     * Stops listening to the cache, waits for a running prefetch (queued ones are dropped), and closes the publisher
     * (messages still queued are dropped; see {@link ClusterPublisher#close()}). Idempotent; does not close the cache.
     */
    @Override
    public void close() {
        cache.removeListener(listener);
        prefetcher.getQueue().clear();
        KvTierThreads.shutdownAndAwait(prefetcher);
        publisher.close();
    }
}
