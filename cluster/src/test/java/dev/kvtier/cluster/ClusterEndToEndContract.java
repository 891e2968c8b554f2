package dev.kvtier.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;
import dev.kvtier.sync.CacheRoutingHint;
import dev.kvtier.testing.FaultLogRouting;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Ranks publishing through a bus to a router, on every bus: the router's index must equal what the ranks hold. */
@Tag(FaultLogRouting.TAG)
abstract class ClusterEndToEndContract {
    static final ClusterTopology TOPOLOGY = new ClusterTopology(2, 1, 4);
    static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path directory;

    private final List<AutoCloseable> toClose = new ArrayList<>();

    /** A fresh stream retaining {@code retainedMessages}; every call to {@link #handle} then reaches the same stream. */
    protected abstract void newStream(int retainedMessages) throws Exception;

    /** One participant's handle on the stream (its own connection where the bus has connections). */
    protected abstract SyncBus handle() throws Exception;

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    <T extends AutoCloseable> T closeLater(T resource) {
        toClose.add(resource);
        return resource;
    }

    ClusterPublisher publisher(RankTruth truth, long epoch, ClusterPublisher.PrefetchListener prefetch)
            throws Exception {
        SyncBus bus = closeLater(handle());
        ClusterPublisher publisher = new ClusterPublisher(bus, TOPOLOGY, truth.rank, "host-" + truth.rank, epoch,
                truth, prefetch, 10_000);
        truth.attach(publisher);
        return closeLater(publisher);
    }

    ClusterRouter router(Path snapshot) throws Exception {
        SyncBus bus = closeLater(handle());
        return closeLater(ClusterRouter.start(bus, TOPOLOGY, new ClusterRouter.Options(snapshot,
                Duration.ofHours(1), Duration.ofMillis(100), 1024), null));
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + WAIT + ": " + what);
            }
            Thread.onSpinWait();
            TimeUnit.MILLISECONDS.sleep(5); // polling a condition with a bound, not timing a result
        }
    }

    static void flush(ClusterPublisher... publishers) {
        for (ClusterPublisher publisher : publishers) {
            assertTrue(publisher.flush(WAIT), "publisher did not drain");
        }
    }

    void awaitIndexEquals(ClusterRouter router, List<RankTruth> truths) throws InterruptedException {
        await("router in sync and equal to the ranks' holdings", () -> router.state().ranksOutOfSync() == 0
                && RankTruth.blockLinesOf(router.state()).equals(RankTruth.expectedBlocks(truths)));
    }

    @Test
    void theRoutersIndexEqualsWhatTheRanksHold() throws Exception {
        newStream(100_000);
        RankTruth zero = new RankTruth(0);
        RankTruth one = new RankTruth(1);
        ClusterPublisher p0 = publisher(zero, 1, null);
        ClusterPublisher p1 = publisher(one, 1, null);
        // Steps that end while a publisher's first reset is still running wait and go out merged with the next:
        // let the resets go first so that the count of messages below is one per step.
        flush(p0, p1);
        Random random = new Random(42);
        for (int step = 0; step < 200; step++) {
            zero.randomStep(random, 300, 8);
            one.randomStep(random, 300, 8);
        }
        flush(p0, p1);
        // Started after the ranks: it reads the whole stream, finds every rank in sync and asks nobody to resync.
        ClusterRouter router = router(null);
        SyncBus probe = closeLater(handle());
        assertTrue(router.awaitStreamSequence(probe.lastSequence(), WAIT));
        assertEquals(RankTruth.expectedBlocks(List.of(zero, one)), RankTruth.blockLinesOf(router.state()));
        assertEquals(0, router.state().ranksOutOfSync());
        assertEquals(0, router.state().duplicates());
        assertTrue(router.state().badMessages().isEmpty());
        assertEquals(2 + 400, probe.lastSequence(), "one message per step, plus each rank's reset");
    }

    @Test
    void duplicatePublishesAreStoredOnceAndBadMessagesSkipped() throws Exception {
        newStream(1000);
        SyncBus bus = closeLater(handle());
        ClusterRouter router = router(null);
        byte[] reset = WireFormat.encode(new WireMessage.RankBatch(0, 1, 1, true, "h", List.of(
                new ClusterEvent.BlockStored(RankTruth.block(1), Tier.GPU, 16))));
        byte[] gone = WireFormat.encode(new WireMessage.RankBatch(0, 1, 2, false, "h", List.of(
                new ClusterEvent.BlockGone(RankTruth.block(1)))));
        byte[] corrupt = gone.clone();
        corrupt[corrupt.length - 1] ^= 1;
        bus.publish(reset);
        bus.publish(corrupt);
        bus.publish(reset); // a retried publish after a lost acknowledgement
        bus.publish(gone);
        bus.publish(reset);
        long last = bus.publish(gone);
        assertTrue(router.awaitStreamSequence(last, WAIT));
        assertEquals(0, router.state().blockCount(), "the replayed store must not bring the block back");
        assertEquals(3, router.state().duplicates());
        assertEquals(Map.of(MalformedMessageException.Reason.BAD_CHECKSUM, 1L), router.state().badMessages());
    }

    @Test
    void aRestartedRouterResumesFromItsSnapshotAndTheTail() throws Exception {
        newStream(100_000);
        Path snapshot = directory.resolve("router.snapshot");
        RankTruth zero = new RankTruth(0);
        RankTruth one = new RankTruth(1);
        ClusterPublisher p0 = publisher(zero, 1, null);
        ClusterPublisher p1 = publisher(one, 1, null);
        Random random = new Random(5);
        ClusterRouter first = router(snapshot);
        for (int step = 0; step < 50; step++) {
            zero.randomStep(random, 200, 6);
            one.randomStep(random, 200, 6);
        }
        flush(p0, p1);
        awaitIndexEquals(first, List.of(zero, one));
        first.snapshotNow();
        first.close();
        for (int step = 0; step < 50; step++) {
            zero.randomStep(random, 200, 6);
            one.randomStep(random, 200, 6);
        }
        flush(p0, p1);
        ClusterRouter second = router(snapshot);
        awaitIndexEquals(second, List.of(zero, one));
        assertEquals(0, second.state().duplicates(), "resumed right after the snapshot: nothing read twice");
        assertEquals(0, second.state().streamGaps());
    }

    @Test
    void retentionShorterThanTheDowntimeIsAGapRepairedByResync() throws Exception {
        newStream(5);
        Path snapshot = directory.resolve("router.snapshot");
        RankTruth zero = new RankTruth(0);
        RankTruth one = new RankTruth(1);
        ClusterPublisher p0 = publisher(zero, 1, null);
        ClusterPublisher p1 = publisher(one, 1, null);
        Random random = new Random(9);
        ClusterRouter first = router(snapshot);
        zero.randomStep(random, 100, 20);
        one.randomStep(random, 100, 20);
        flush(p0, p1);
        awaitIndexEquals(first, List.of(zero, one));
        first.snapshotNow();
        first.close();
        for (int step = 0; step < 30; step++) { // 60 messages while the router is down; the stream keeps 5
            zero.randomStep(random, 100, 5);
            one.randomStep(random, 100, 5);
        }
        flush(p0, p1);
        ClusterRouter second = router(snapshot);
        await("the gap is seen", () -> second.state().streamGaps() >= 1);
        // Never stale meanwhile: until the ranks re-announce, nothing of theirs is routed to.
        awaitIndexEquals(second, List.of(zero, one));
        assertTrue(second.state().streamGaps() >= 1);
    }

    @Test
    void aRestartedRankClearsItsOldEpochAndReannouncesWhatItKept() throws Exception {
        newStream(100_000);
        RankTruth zero = new RankTruth(0);
        RankTruth one = new RankTruth(1);
        ClusterRouter router = router(null);
        ClusterPublisher p0 = publisher(zero, 1, null);
        ClusterPublisher p1 = publisher(one, 1, null);
        Random random = new Random(11);
        for (int step = 0; step < 40; step++) {
            zero.randomStep(random, 100, 6);
            one.randomStep(random, 100, 6);
        }
        flush(p0, p1);
        awaitIndexEquals(router, List.of(zero, one));
        p0.close(); // the process dies...
        zero.keepOnly(Tier.DISK); // ...and its disk tier is what comes back
        ClusterPublisher restarted = publisher(zero, 2, null);
        zero.randomStep(random, 100, 6);
        flush(restarted);
        awaitIndexEquals(router, List.of(zero, one));
        assertEquals(2, router.state().epoch(0).orElseThrow());
    }

    @Test
    void aPrefetchHintReachesTheRankItNames() throws Exception {
        newStream(1000);
        LinkedBlockingQueue<List<BlockHash>> hints = new LinkedBlockingQueue<>();
        LinkedBlockingQueue<List<BlockHash>> other = new LinkedBlockingQueue<>();
        RankTruth zero = new RankTruth(0);
        RankTruth one = new RankTruth(1);
        ClusterRouter router = router(null);
        ClusterPublisher p0 = publisher(zero, 1, (blocks, tokens) -> other.add(blocks));
        ClusterPublisher p1 = publisher(one, 1, (blocks, tokens) -> hints.add(blocks));
        one.store(RankTruth.block(1), Tier.DISK);
        one.store(RankTruth.block(2), Tier.DISK);
        p1.endStep();
        flush(p0, p1);
        awaitIndexEquals(router, List.of(zero, one));
        List<BlockHash> chain = List.of(RankTruth.block(1), RankTruth.block(2), RankTruth.block(3));
        CacheRoutingHint hint = router.route(chain);
        assertEquals(List.of(1), hint.relevantRanks());
        assertEquals(2L * RankTruth.TOKENS, hint.reusableTokens());
        router.sendPrefetch(1, chain.subList(0, 2), hint.reusableTokens());
        List<BlockHash> received = hints.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(received);
        assertEquals(chain.subList(0, 2), received);
        assertTrue(other.isEmpty(), "rank 0 was not named");
    }
}
