package dev.kvtier.cluster;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvtier.store.Tier;
import dev.kvtier.testing.FaultLogRouting;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The rank side on its own: no deadlock with an engine's lock, and recovery after the bus refused messages. */
@Tag(FaultLogRouting.TAG)
class ClusterPublisherTest {
    private static final ClusterTopology TOPOLOGY = new ClusterTopology(1, 1, 4);

    /** The in-process bus, but publishes fail while {@code down} is set, and control messages are lost. */
    private static final class FlakyBus implements SyncBus {
        final InProcessSyncBus bus = new InProcessSyncBus(1_000_000);
        final AtomicBoolean down = new AtomicBoolean();

        @Override
        public long publish(byte[] message) {
            if (down.get()) {
                throw new SyncBusException("down on purpose", null);
            }
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
            // lost: the router's resync requests cannot reach the rank, so only the publisher itself can repair
        }

        @Override
        public Subscription subscribeControl(ControlHandler handler) {
            return bus.subscribeControl(handler);
        }

        @Override
        public String describe() {
            return "flaky " + bus.describe();
        }

        @Override
        public void close() {
            bus.close();
        }
    }

    @Test
    void resyncRequestsWhileTheEngineReportsUnderItsOwnLockNeverDeadlock() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            try (InProcessSyncBus bus = new InProcessSyncBus(1_000_000)) {
                RankTruth truth = new RankTruth(0); // reports while holding its own monitor, as an engine may
                try (ClusterPublisher publisher = new ClusterPublisher(bus, TOPOLOGY, 0, "h", 1, truth, null, 100_000);
                        ClusterRouter router = ClusterRouter.start(bus, TOPOLOGY, ClusterRouter.Options.inMemory(),
                                null)) {
                    truth.attach(publisher);
                    Random random = new Random(1);
                    byte[] resync = WireFormat.encode(new WireMessage.ResyncRequest(false, 0));
                    for (int step = 0; step < 300; step++) {
                        truth.randomStep(random, 100, 8);
                        bus.sendControl(resync);
                    }
                    assertTrue(publisher.flush(Duration.ofSeconds(30)));
                    ClusterEndToEndContract.await("router equals the rank", () -> router.state().ranksOutOfSync() == 0
                            && RankTruth.blockLinesOf(router.state()).equals(RankTruth.expectedBlocks(List.of(truth))));
                }
            }
        });
    }

    @Test
    void aBusThatRefusedMessagesIsRepairedByAResetOnceItTakesThemAgain() throws Exception {
        try (FlakyBus bus = new FlakyBus()) {
            RankTruth truth = new RankTruth(0);
            try (ClusterPublisher publisher = new ClusterPublisher(bus, TOPOLOGY, 0, "h", 1, truth, null, 4);
                    ClusterRouter router = ClusterRouter.start(bus, TOPOLOGY, new ClusterRouter.Options(null,
                            Duration.ofHours(1), Duration.ofMillis(50), 64), null)) {
                truth.attach(publisher);
                assertTrue(publisher.flush(Duration.ofSeconds(30)));
                Random random = new Random(2);
                bus.down.set(true);
                for (int step = 0; step < 50; step++) { // far more than the queue of 4 holds
                    truth.randomStep(random, 100, 8);
                }
                assertTrue(publisher.droppedMessages() > 0, "the queue must have overflowed");
                bus.down.set(false);
                truth.store(RankTruth.block(1000), Tier.GPU);
                publisher.endStep(); // the step boundary after the overflow re-announces everything
                assertTrue(publisher.flush(Duration.ofSeconds(30)));
                ClusterEndToEndContract.await("router equals the rank", () -> router.state().ranksOutOfSync() == 0
                        && RankTruth.blockLinesOf(router.state()).equals(RankTruth.expectedBlocks(List.of(truth))));
            }
        }
    }
}
