package dev.kvtier.cluster;

import org.junit.jupiter.api.Tag;
import dev.kvtier.testing.FaultLogRouting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One well-formed message that anyone able to publish on the stream could send, against a rank and a router on the
 * in-process bus: neither a sequence from the future nor an epoch from the far future may lock the rank out of
 * routing. Both tests fail on commit 8d41ee6: there the rank's own resets were skipped as duplicates after a future
 * sequence (the rank stayed out of sync and re-published its whole holdings at every resync request), and every
 * message of the rank was stale after a forged reset with a huge epoch.
 */
@Tag(FaultLogRouting.TAG) // faults injected on purpose: the library's warnings go to target/test-logs
class HostileMessageTest {
    private static final ClusterTopology TOPOLOGY = new ClusterTopology(2, 1, 4);
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final InProcessSyncBus bus = new InProcessSyncBus(100_000);
    private final Random random = new Random(4);

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        bus.close();
    }

    private <T extends AutoCloseable> T closeLater(T resource) {
        toClose.add(resource);
        return resource;
    }

    private List<RankTruth> ranks() {
        List<RankTruth> truths = new ArrayList<>();
        for (int rank = 0; rank < TOPOLOGY.worldSize(); rank++) {
            RankTruth truth = new RankTruth(rank);
            ClusterPublisher publisher = closeLater(new ClusterPublisher(bus, TOPOLOGY, rank, "host-" + rank,
                    ClusterPublisher.clockEpoch(), truth, null, 100_000));
            truth.attach(publisher);
            truths.add(truth);
        }
        return truths;
    }

    private ClusterRouter router() {
        return closeLater(ClusterRouter.start(bus, TOPOLOGY, new ClusterRouter.Options(null, Duration.ofHours(1),
                Duration.ofMillis(100), 1024), null));
    }

    private void play(List<RankTruth> truths, int steps) {
        for (int step = 0; step < steps; step++) {
            for (RankTruth truth : truths) {
                truth.randomStep(random, 200, 5);
            }
        }
    }

    private static void assertRouterCatchesUp(ClusterRouter router, List<RankTruth> truths) throws Exception {
        List<String> expected = RankTruth.expectedBlocks(truths);
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline && !(router.state().ranksOutOfSync() == 0
                && RankTruth.blockLinesOf(router.state()).equals(expected))) {
            TimeUnit.MILLISECONDS.sleep(20); // polling the router with a bound
        }
        assertEquals(expected, RankTruth.blockLinesOf(router.state()));
        assertEquals(0, router.state().ranksOutOfSync(), "ranks out of sync");
    }

    @Test
    @Timeout(60)
    void aMessageWithAFutureSequenceDoesNotLockTheRankOut() throws Exception {
        ClusterRouter router = router();
        List<RankTruth> truths = ranks();
        play(truths, 20);
        assertRouterCatchesUp(router, truths);

        ClusterPublisher rank0 = truths.get(0).publisher();
        bus.publish(WireFormat.encode(new WireMessage.RankBatch(0, rank0.epoch(), 1_000_000_000L, false, "x",
                List.of())));
        play(truths, 20);
        assertRouterCatchesUp(router, truths);

        // Quiet: the rank is in sync, so nothing asks it to re-announce again and again.
        assertTrue(rank0.flush(WAIT));
        long published = rank0.publishedMessages();
        TimeUnit.MILLISECONDS.sleep(600); // six resync rounds of the router
        assertTrue(rank0.flush(WAIT));
        assertEquals(published, rank0.publishedMessages(), "the rank keeps re-announcing");
    }

    @Test
    @Timeout(60)
    void aResetWithAnEpochFarInTheFutureIsRefused() throws Exception {
        ClusterRouter router = router();
        List<RankTruth> truths = ranks();
        play(truths, 10);
        assertRouterCatchesUp(router, truths);

        long farFuture = System.currentTimeMillis() + TimeUnit.DAYS.toMillis(365);
        bus.publish(WireFormat.encode(new WireMessage.RankBatch(0, farFuture, 1, true, "x", List.of())));
        play(truths, 10);
        assertRouterCatchesUp(router, truths);
        assertEquals(0, router.state().staleEpochs(), "the rank's own messages were taken as stale");
        assertEquals(1L, router.state().badMessages().get(MalformedMessageException.Reason.EPOCH_AHEAD));
    }
}
