package dev.kvtier.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvtier.store.Tier;
import dev.kvtier.testing.FaultLogRouting;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
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
        /** The next message larger than this is refused for good (as a server refuses one above max_payload). */
        final java.util.concurrent.atomic.AtomicInteger refuseOnceAbove =
                new java.util.concurrent.atomic.AtomicInteger(Integer.MAX_VALUE);
        /** The next publish throws an Error (the kind of failure nothing expects), once. */
        final AtomicBoolean failBadlyOnce = new AtomicBoolean();

        @Override
        public long publish(byte[] message) {
            if (down.get()) {
                throw new SyncBusException("down on purpose", null);
            }
            int limit = refuseOnceAbove.get();
            if (message.length > limit && refuseOnceAbove.compareAndSet(limit, Integer.MAX_VALUE)) {
                throw new SyncBusException("refused on purpose: " + message.length + " bytes", null, true);
            }
            if (failBadlyOnce.compareAndSet(true, false)) {
                throw new Error("failing badly on purpose");
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
        public String streamIdentity() {
            return bus.streamIdentity();
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

    /**
     * A message the bus refuses for good is dropped, counted, and followed by a reset that repairs the receivers. Fails
     * on commit 8d41ee6 (the publisher retried the refused message for ever, and had no such counter).
     */
    @Test
    void aRefusedMessageIsCountedAndFollowedByAReset() throws Exception {
        try (FlakyBus bus = new FlakyBus()) {
            RankTruth truth = new RankTruth(0);
            try (ClusterPublisher publisher = new ClusterPublisher(bus, TOPOLOGY, 0, "h", 1, truth, null, 1000);
                    ClusterRouter router = ClusterRouter.start(bus, TOPOLOGY, new ClusterRouter.Options(null,
                            Duration.ofHours(1), Duration.ofMillis(50), 64), null)) {
                truth.attach(publisher);
                assertTrue(publisher.flush(Duration.ofSeconds(30)));
                Random random = new Random(3);
                for (int step = 0; step < 10; step++) {
                    truth.randomStep(random, 100, 2);
                }
                bus.refuseOnceAbove.set(400);
                truth.randomStep(random, 100, 40); // a step of ~40 events: about 900 bytes, refused
                for (int step = 0; step < 10; step++) {
                    truth.randomStep(random, 100, 2);
                }
                assertTrue(publisher.flush(Duration.ofSeconds(30)));
                assertEquals(1, publisher.refusedMessages());
                assertTrue(publisher.publishFailures() >= 1);
                ClusterEndToEndContract.await("router equals the rank", () -> router.state().ranksOutOfSync() == 0
                        && RankTruth.blockLinesOf(router.state()).equals(RankTruth.expectedBlocks(List.of(truth))));
            }
        }
    }

    /**
     * Should the publishing thread end all the same (an Error), the next step boundary says so and starts a new one,
     * which sends what the old one had not. Fails on commit 8d41ee6 (the thread stayed dead and flush never returned
     * true).
     */
    @Test
    void aPublishingThreadThatDiesIsRestartedAtTheNextStep() throws Exception {
        try (FlakyBus bus = new FlakyBus()) {
            RankTruth truth = new RankTruth(0);
            try (ClusterPublisher publisher = new ClusterPublisher(bus, TOPOLOGY, 0, "h", 1, truth, null, 1000);
                    ClusterRouter router = ClusterRouter.start(bus, TOPOLOGY, new ClusterRouter.Options(null,
                            Duration.ofHours(1), Duration.ofMillis(50), 64), null)) {
                truth.attach(publisher);
                assertTrue(publisher.flush(Duration.ofSeconds(30)));
                Random random = new Random(4);
                bus.failBadlyOnce.set(true);
                for (int step = 0; step < 20; step++) {
                    truth.randomStep(random, 100, 3);
                    TimeUnit.MILLISECONDS.sleep(2); // steps apart in time, so that the thread is dead before the last
                }
                assertTrue(publisher.flush(Duration.ofSeconds(30)));
                assertEquals(1, publisher.publisherRestarts());
                ClusterEndToEndContract.await("router equals the rank", () -> router.state().ranksOutOfSync() == 0
                        && RankTruth.blockLinesOf(router.state()).equals(RankTruth.expectedBlocks(List.of(truth))));
            }
        }
    }

    /**
     * A flood of bad control messages is counted exactly and thins out in the log. Fails on commit 8d41ee6 (there
     * each was logged and none counted; the counter does not exist).
     */
    @Test
    void badControlMessagesAreCountedAndTheirLogIsRateLimited() throws Exception {
        java.util.logging.Logger julLogger = java.util.logging.Logger.getLogger(ClusterPublisher.class.getName());
        java.util.concurrent.atomic.AtomicInteger lines = new java.util.concurrent.atomic.AtomicInteger();
        java.util.logging.Handler counting = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord record) {
                if (record.getMessage() != null && record.getMessage().contains("bad control message")) {
                    lines.incrementAndGet();
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        julLogger.addHandler(counting);
        try (InProcessSyncBus bus = new InProcessSyncBus(1000);
                ClusterPublisher publisher = new ClusterPublisher(bus, TOPOLOGY, 0, "h", 1, announcer -> { }, null,
                        100)) {
            long start = System.nanoTime();
            for (int i = 0; i < 500; i++) {
                bus.sendControl(new byte[] {1, 2, 3, (byte) i});
            }
            bus.sendControl(WireFormat.encode(new WireMessage.RankBatch(0, 1, 1, true, "x", List.of())));
            ClusterEndToEndContract.await("every bad control message counted", () -> publisher.badControlMessages()
                    .values().stream().mapToLong(Long::longValue).sum() == 501);
            long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
            assertEquals(1L, publisher.badControlMessages().get(MalformedMessageException.Reason.BAD_STRUCTURE));
            assertTrue(lines.get() <= seconds + 2, lines.get() + " log lines in " + seconds + " s");
        } finally {
            julLogger.removeHandler(counting);
        }
    }
}
