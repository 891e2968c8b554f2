package dev.kvtier.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvtier.Backend;
import dev.kvtier.CacheChangeListener;
import dev.kvtier.DiskPersistence;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockHasher;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
import dev.kvtier.sync.CacheRoutingHint;
import dev.kvtier.testing.FaultLogRouting;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two ranks, each a real cache (host backend, small budgets) connected by a {@link RankCacheBridge} to one in-process
 * bus, and a {@link ClusterRouter}: after the ranks' events are flushed, the router's index equals what the caches hold
 * and its hints equal a model computed from the caches; demotions keep blocks present, removals take them out, a
 * restarted rank's reset clears its old incarnation and re-announces what its disk recovered (chains its prefix API
 * serves and continues again), and prefetch hints make
 * the hinted prefix GPU-resident without leaving it pinned.
 */
@Tag(FaultLogRouting.TAG)
class RankCacheBridgeTest {
    private static final int PAGE = 4096;
    private static final int TOKENS = 16;
    /** One tensor-parallel group of both ranks: a prefix counts only where both hold it. */
    private static final ClusterTopology TOPOLOGY = new ClusterTopology(2, 2, 0);
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path directory;

    /** One block a page; a test may declare layers before the ranks open. */
    private BlockLayout layout = BlockLayout.of(TOKENS, PAGE);
    private final BlockHasher hasher = new BlockHasher();
    private final BlockHash root = BlockHasher.namespaceRoot("wire-test");
    private final Random random = new Random(13);
    private final List<BlockHash> universe = new ArrayList<>();
    private final List<String> resets = new CopyOnWriteArrayList<>();
    private final KvTierCache[] caches = new KvTierCache[2];
    private final RankCacheBridge[] bridges = new RankCacheBridge[2];
    private InProcessSyncBus bus;
    private ClusterRouter router;

    @BeforeEach
    void start() {
        bus = new InProcessSyncBus(100_000);
        router = ClusterRouter.start(bus, TOPOLOGY, new ClusterRouter.Options(null, Duration.ofHours(1),
                Duration.ofMillis(100), 1024), (batch, outcome) -> {
                    if (outcome == ClusterState.Outcome.RESET) {
                        resets.add("rank " + batch.rank() + " epoch " + batch.epoch());
                    }
                });
    }

    @AfterEach
    void stop() {
        for (int rank = 0; rank < 2; rank++) {
            if (bridges[rank] != null) {
                bridges[rank].close();
            }
            if (caches[rank] != null) {
                caches[rank].close();
            }
        }
        router.close();
        bus.close();
    }

    private KvTierCache open(int rank, boolean persistent) {
        KvTierConfig.Builder config = KvTierConfig.builder().backend(Backend.HOST).pageSizeBytes(PAGE)
                .gpuBudgetBytes(4L * PAGE).cpuBudgetBytes(8L * PAGE).diskExtentBytes(64L * PAGE)
                .diskDirectory(directory.resolve("rank-" + rank));
        if (persistent) {
            config.persistence(DiskPersistence.of("wire-test/rank-" + rank));
        }
        caches[rank] = KvTierCache.open(config.build());
        return caches[rank];
    }

    private RankCacheBridge connect(int rank, long epoch) {
        return connect(rank, epoch, bus);
    }

    private RankCacheBridge connect(int rank, long epoch, SyncBus through) {
        bridges[rank] = RankCacheBridge.connect(caches[rank], layout, through, TOPOLOGY, rank, "host-" + rank, epoch,
                10_000);
        return bridges[rank];
    }

    private void openBoth() {
        for (int rank = 0; rank < 2; rank++) {
            open(rank, false);
            connect(rank, 1);
        }
    }

    private PrefixBlockCache blocks(int rank) {
        return caches[rank].prefixBlocks(layout);
    }

    /** A new chain of {@code length} blocks of random tokens under the test's namespace. */
    private List<BlockHash> chain(int length) {
        int[] tokens = new int[length * TOKENS];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = random.nextInt(50_000);
        }
        List<BlockHash> chain = hasher.chain(root, tokens, TOKENS);
        universe.addAll(chain);
        return chain;
    }

    private void store(PrefixBlockCache blocks, List<BlockHash> chain, Tier tier) {
        blocks.storeBlocks(BlockHash.ROOT, chain,
                MemorySegment.ofArray(new byte[chain.size() * PAGE]), tier);
    }

    /** Ends the step on every connected rank, waits for their messages and for the router to read them. */
    private void flush() throws InterruptedException {
        for (RankCacheBridge bridge : bridges) {
            if (bridge != null) {
                bridge.endStep();
                assertTrue(bridge.publisher().flush(WAIT), "publisher did not drain");
            }
        }
        assertTrue(router.awaitStreamSequence(bus.lastSequence(), WAIT), "router did not read the stream");
    }

    /** Per block of the universe and rank: the tier bits the caches say and the tier bits the router says. */
    private void assertIndexEqualsCaches() {
        List<String> truth = new ArrayList<>();
        List<String> index = new ArrayList<>();
        for (BlockHash block : universe) {
            for (int rank = 0; rank < 2; rank++) {
                int bits = caches[rank].get(PrefixBlockCache.keyOf(block)).map(meta -> 1 << meta.tier().ordinal())
                        .orElse(0);
                truth.add(block + " rank " + rank + " tiers " + bits);
                index.add(block + " rank " + rank + " tiers " + router.state().tiersOf(block, rank));
            }
        }
        assertEquals(truth, index);
        assertEquals(0, router.state().ranksOutOfSync());
    }

    /**
     * The model of ClusterRouter's rule over the caches themselves: the longest leading run of {@code chain} that every
     * rank of the (single) group holds in some tier; its tokens; both ranks when it is not empty.
     */
    private void assertHintMatchesModel(List<BlockHash> chain) {
        int matched = chain.size();
        for (KvTierCache cache : caches) {
            int held = 0;
            while (held < chain.size() && cache.get(PrefixBlockCache.keyOf(chain.get(held))).isPresent()) {
                held++;
            }
            matched = Math.min(matched, held);
        }
        CacheRoutingHint hint = router.route(chain);
        assertEquals(matched == 0 ? List.of() : List.of(0, 1), hint.relevantRanks(), "ranks for " + hint);
        assertEquals((long) matched * TOKENS, hint.reusableTokens(), "tokens for " + hint);
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + WAIT + ": " + what);
            }
            TimeUnit.MILLISECONDS.sleep(5); // polling a condition with a bound, not timing a result
        }
    }

    @Test
    void theIndexAndHintsFollowStoresDemotionsAndRemovals() throws Exception {
        openBoth();
        AtomicInteger moves = new AtomicInteger();
        caches[0].addListener(new CacheChangeListener() {
            @Override
            public void segmentMoved(String key, Tier from, Tier to, long bytes) {
                moves.incrementAndGet();
            }
        });
        List<BlockHash> shared = chain(4);
        List<BlockHash> other = chain(2);
        store(blocks(0), shared, Tier.GPU);
        store(blocks(1), shared.subList(0, 3), Tier.GPU);
        flush();
        assertIndexEqualsCaches();
        assertHintMatchesModel(shared);
        assertEquals(3L * TOKENS, router.route(shared).reusableTokens());

        // The GPU holds four blocks: a second chain demotes the first one's tail (a move), which stays reusable.
        store(blocks(0), other, Tier.GPU);
        caches[0].put("not-a-block", PositionRange.of(0, 16), MemorySegment.ofArray(new byte[PAGE]), Tier.CPU);
        flush();
        assertTrue(moves.get() > 0, "storing a second chain demoted nothing");
        assertTrue(blocks(0).lookupPrefix(shared).blocksOn(Tier.GPU) < shared.size(), "nothing of the chain left GPU");
        assertIndexEqualsCaches();
        assertHintMatchesModel(shared);
        assertHintMatchesModel(other);
        assertEquals(universe.size(), router.state().blockCount(), "blocks indexed (and no plain segment)");

        // Removing the tail of rank 1's prefix shortens what the group holds.
        assertTrue(blocks(1).removeBlock(shared.get(2)));
        flush();
        assertEquals(0, router.state().tiersOf(shared.get(2), 1));
        assertIndexEqualsCaches();
        assertHintMatchesModel(shared);
        assertEquals(2L * TOKENS, router.route(shared).reusableTokens());
    }

    @Test
    void aRestartedRankResetsAndReannouncesWhatItsDiskRecovered() throws Exception {
        open(0, false);
        connect(0, 1);
        open(1, true);
        connect(1, 1);
        List<BlockHash> persisted = chain(3);
        List<BlockHash> volatileOnly = chain(2);
        for (int rank = 0; rank < 2; rank++) {
            store(blocks(rank), persisted, Tier.DISK);
            store(blocks(rank), volatileOnly, Tier.GPU);
        }
        flush();
        assertIndexEqualsCaches();
        assertHintMatchesModel(persisted);
        assertEquals(2L * TOKENS, router.route(volatileOnly).reusableTokens());

        // Rank 1 stops (closing tells listeners nothing: the index still shows its old incarnation) and comes back.
        bridges[1].close();
        bridges[1] = null;
        caches[1].close();
        open(1, true);
        assertEquals(persisted.size(), caches[1].recovery().orElseThrow().recovered());
        connect(1, 2);
        flush();
        assertTrue(resets.contains("rank 1 epoch 2"), "no reset of rank 1's new epoch among " + resets);
        assertEquals(2, router.state().epoch(1).orElseThrow());
        for (BlockHash block : persisted) {
            assertEquals(1 << Tier.DISK.ordinal(), router.state().tiersOf(block, 1), "recovered " + block);
        }
        for (BlockHash block : volatileOnly) {
            assertEquals(0, router.state().tiersOf(block, 1), "old incarnation's " + block);
        }
        assertIndexEqualsCaches();
        assertHintMatchesModel(persisted);
        assertHintMatchesModel(volatileOnly);
        assertEquals(3L * TOKENS, router.route(persisted).reusableTokens());
        assertEquals(0L, router.route(volatileOnly).reusableTokens());

        // What the router was told, the restarted rank serves: the recovered chain is a chain, and it grows.
        assertEquals(persisted.size(), blocks(1).lookupPrefix(persisted).blocksOn(Tier.DISK));
        BlockHash last = persisted.get(persisted.size() - 1);
        List<BlockHash> more = hasher.chain(last, new int[2 * TOKENS], TOKENS);
        universe.addAll(more);
        assertEquals(2, blocks(1).storeBlocks(last, more, MemorySegment.ofArray(new byte[2 * PAGE]), Tier.DISK));
        List<BlockHash> continued = new ArrayList<>(persisted);
        continued.addAll(more);
        assertEquals(continued.size(), blocks(1).lookupPrefix(continued).cachedBlocks());
        flush();
        assertIndexEqualsCaches();
    }

    /** The shared bus, except that publishing waits until {@link #open} (at most {@link #WAIT}). */
    private final class StalledBus implements SyncBus {
        final CountDownLatch open = new CountDownLatch(1);
        final AtomicInteger published = new AtomicInteger();

        @Override
        public long publish(byte[] message) {
            try {
                open.await(WAIT.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SyncBusException("interrupted", e);
            }
            published.incrementAndGet();
            return bus.publish(message);
        }

        @Override
        public long firstSequence() {
            return bus.firstSequence();
        }

        @Override
        public long lastSequence() {
            return bus.lastSequence();
        }

        @Override
        public Subscription subscribe(long fromSequence, EventHandler handler) {
            return bus.subscribe(fromSequence, handler);
        }

        @Override
        public void sendControl(byte[] message) {
            bus.sendControl(message);
        }

        @Override
        public Subscription subscribeControl(ControlHandler handler) {
            return bus.subscribeControl(handler);
        }

        @Override
        public String streamIdentity() {
            return bus.streamIdentity();
        }

        @Override
        public String describe() {
            return "stalled " + bus.describe();
        }

        @Override
        public void close() {
        }
    }

    @Test
    void aStalledBusNeverHoldsUpTheCache() throws Exception {
        StalledBus stalled = new StalledBus();
        open(0, false);
        connect(0, 1, stalled);
        open(1, false);
        connect(1, 1);
        List<BlockHash> chain = chain(6);
        store(blocks(0), chain, Tier.GPU); // demotes and places blocks: listener calls under segment locks
        store(blocks(1), chain, Tier.CPU);
        assertTrue(blocks(0).removeBlock(chain.getLast()));
        bridges[0].endStep();
        assertEquals(0, stalled.published.get(), "the cache's calls returned only after a publish went through");
        stalled.open.countDown();
        flush();
        assertIndexEqualsCaches();
        assertHintMatchesModel(chain);
    }

    @Test
    void aPrefetchHintMakesThePrefixGpuResidentAndLeavesNoPin() throws Exception {
        openBoth();
        List<BlockHash> hinted = chain(3);
        List<BlockHash> tooLong = chain(6);
        store(blocks(0), hinted, Tier.CPU);
        store(blocks(1), hinted, Tier.CPU);
        store(blocks(0), tooLong, Tier.DISK);
        flush();

        router.sendPrefetch(0, hinted, 3L * TOKENS);
        await("the prefetch completed", () -> bridges[0].prefetchesCompleted() == 1);
        assertEquals(hinted.size(), blocks(0).lookupPrefix(hinted).blocksOn(Tier.GPU));
        assertEquals(0, blocks(1).lookupPrefix(hinted).blocksOn(Tier.GPU), "the hint was for rank 0 only");
        // A pinned block cannot be demoted: the tail goes back to CPU, so the prefetch left it unpinned.
        caches[0].demote(PrefixBlockCache.keyOf(hinted.getLast()), Tier.CPU);
        flush();
        assertIndexEqualsCaches();

        // Six blocks cannot fit a four-block GPU: counted as a failure, nothing thrown, the bus goes on.
        router.sendPrefetch(0, tooLong, 6L * TOKENS);
        await("the prefetch failed", () -> bridges[0].prefetchFailures() == 1);
        assertEquals(1, bridges[0].prefetchesCompleted());
        flush();
        assertIndexEqualsCaches();
    }

    @Test
    void aPrefetchHintOnALayeredLayoutRestoresByLayerAndLeavesNoPin() throws Exception {
        layout = BlockLayout.layered(TOKENS, 2, PAGE / 4, BlockLayout.LayerOrder.KV_MAJOR);
        openBoth();
        List<BlockHash> hinted = chain(3);
        store(blocks(0), hinted, Tier.DISK);
        store(blocks(1), hinted, Tier.DISK);
        flush();

        router.sendPrefetch(0, hinted, 3L * TOKENS);
        await("the prefetch completed", () -> bridges[0].prefetchesCompleted() == 1);
        assertEquals(hinted.size(), blocks(0).lookupPrefix(hinted).blocksOn(Tier.GPU));
        caches[0].demote(PrefixBlockCache.keyOf(hinted.getLast()), Tier.CPU); // refused while pinned
        flush();
        assertIndexEqualsCaches();
        assertHintMatchesModel(hinted);
        assertEquals(0, bridges[0].prefetchFailures());
    }
}
