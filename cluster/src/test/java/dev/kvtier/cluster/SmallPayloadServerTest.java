package dev.kvtier.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvtier.store.Tier;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A nats-server (its own process) whose {@code max_payload} is 4 KiB, far below {@link WireFormat#MAX_MESSAGE_BYTES}:
 * a rank holding 1,000 blocks re-announces them in one reset of ~22 KB, and plays steps of 300 events. Its messages
 * must be split to fit, and the router must end with exactly what the rank holds.
 *
 * <p>Fails on commit 8d41ee6: there the client's {@code IllegalArgumentException} for the too-large reset escaped
 * {@code JetStreamSyncBus.publish}, the publishing thread died, and {@code flush} returned false for ever.
 */
class SmallPayloadServerTest {
    private static final ClusterTopology TOPOLOGY = new ClusterTopology(1, 1, 4);

    @TempDir
    Path directory;

    private LocalNatsServer server;

    @AfterEach
    void stopServer() {
        if (server != null) {
            server.kill();
        }
    }

    @Test
    @Timeout(60)
    void messagesAreSplitToTheServersMaxPayloadAndThePublisherLives() throws Exception {
        server = LocalNatsServer.start(directory.resolve("nats"), "max_payload: 4096\n");
        RankTruth truth = new RankTruth(0);
        for (int i = 0; i < 1000; i++) {
            truth.load(RankTruth.block(i), 1 << Tier.DISK.ordinal());
        }
        try (SyncBus routerBus = new JetStreamSyncBus(server.url(), "SMALL", "small", 100_000, Duration.ofSeconds(2));
                SyncBus rankBus = new JetStreamSyncBus(server.url(), "SMALL", "small", 100_000, Duration.ofSeconds(2));
                ClusterRouter router = ClusterRouter.start(routerBus, TOPOLOGY, ClusterRouter.Options.inMemory(), null);
                ClusterPublisher publisher = new ClusterPublisher(rankBus, TOPOLOGY, 0, "host-0", 1, truth, null,
                        10_000)) {
            truth.attach(publisher);
            Random random = new Random(4096);
            for (int step = 0; step < 5; step++) {
                truth.randomStep(random, 2000, 300);
            }
            assertTrue(publisher.flush(Duration.ofSeconds(20)), "every message went out");
            List<String> expected = RankTruth.expectedBlocks(List.of(truth));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < deadline && !(router.state().ranksOutOfSync() == 0
                    && RankTruth.blockLinesOf(router.state()).equals(expected))) {
                TimeUnit.MILLISECONDS.sleep(50); // polling the router with a bound
            }
            assertEquals(expected, RankTruth.blockLinesOf(router.state()));
            assertEquals(0, router.state().ranksOutOfSync());
            assertTrue(router.state().badMessages().isEmpty(), router.state().badMessages().toString());
        }
    }
}
