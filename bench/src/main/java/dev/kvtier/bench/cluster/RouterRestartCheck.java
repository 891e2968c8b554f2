package dev.kvtier.bench.cluster;

import dev.kvtier.cluster.ClusterEvent;
import dev.kvtier.cluster.ClusterRouter;
import dev.kvtier.cluster.ClusterTopology;
import dev.kvtier.cluster.InProcessSyncBus;
import dev.kvtier.cluster.WireFormat;
import dev.kvtier.cluster.WireMessage;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;
import dev.kvtier.sync.CacheRoutingHint;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Issue 13's restart goal: a restarted router serving correct hints within 2 s with 10^6 blocks indexed (snapshot +
 * tail). Builds the index of {@link ClusterIndexFixture} (8 ranks, 4 groups of 2) on an in-process bus, snapshots it,
 * publishes a tail of new blocks, then times, from the start of a new router to its first correct hint for a tail
 * chain: (A) from the snapshot plus the tail; (B, the baseline) replaying the whole stream without a snapshot.
 * Interleaved A B A B ..., median of each.
 *
 * <p>Usage: {@code RouterRestartCheck [blocks=1000000] [tailEvents=10000] [rounds=3]}.
 */
public final class RouterRestartCheck {
    private RouterRestartCheck() {
    }

    public static void main(String[] args) throws Exception {
        int blocks = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        int tailEvents = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        ClusterTopology topology = new ClusterTopology(8, 2, 32);
        ClusterIndexFixture fixture = new ClusterIndexFixture(topology, blocks / 64, 64, 13);
        Path directory = Files.createTempDirectory("kvtier-router-restart-");
        Path snapshot = directory.resolve("router.snapshot");
        try (InProcessSyncBus bus = new InProcessSyncBus(Integer.MAX_VALUE - 8)) {
            for (byte[] message : fixture.messages(1)) {
                bus.publish(message);
            }
            long[] lastSequence = new long[topology.worldSize()];
            ClusterRouter.Options options = new ClusterRouter.Options(snapshot, Duration.ofHours(1),
                    Duration.ofSeconds(1), blocks);
            try (ClusterRouter first = ClusterRouter.start(bus, topology, options, null)) {
                if (!first.awaitStreamSequence(bus.lastSequence(), Duration.ofMinutes(5))) {
                    throw new IllegalStateException("the first router did not catch up");
                }
                for (int rank = 0; rank < lastSequence.length; rank++) {
                    lastSequence[rank] = first.state().lastSequence(rank);
                }
                first.snapshotNow();
            }
            // The tail: new chains on group 0 (ranks 0 and 1), 16 events per message as an engine step would send.
            Random random = new Random(99);
            List<BlockHash> tailChain = new ArrayList<>();
            for (int i = 0; i < tailEvents / 2; i++) {
                tailChain.add(new BlockHash(random.nextLong(), random.nextLong()));
            }
            for (int rank = 0; rank < 2; rank++) {
                List<ClusterEvent> step = new ArrayList<>();
                for (BlockHash block : tailChain) {
                    step.add(new ClusterEvent.BlockStored(block, Tier.CPU, ClusterIndexFixture.TOKENS_PER_BLOCK));
                    if (step.size() == 16) {
                        bus.publish(WireFormat.encode(new WireMessage.RankBatch(rank, 1, ++lastSequence[rank], false,
                                "host" + rank, step)));
                        step.clear();
                    }
                }
                if (!step.isEmpty()) {
                    bus.publish(WireFormat.encode(new WireMessage.RankBatch(rank, 1, ++lastSequence[rank], false,
                            "host" + rank, step)));
                }
            }
            List<BlockHash> query = tailChain.subList(tailChain.size() - 64, tailChain.size());
            long expectedTokens = 64L * ClusterIndexFixture.TOKENS_PER_BLOCK;
            long snapshotBytes = Files.size(snapshot);
            double[] fromSnapshot = new double[rounds];
            double[] fullReplay = new double[rounds];
            for (int round = 0; round < rounds; round++) {
                fromSnapshot[round] = timeToFirstCorrectHint(bus, topology, options, query, expectedTokens);
                fullReplay[round] = timeToFirstCorrectHint(bus, topology, new ClusterRouter.Options(null,
                        Duration.ofHours(1), Duration.ofSeconds(1), blocks), query, expectedTokens);
                System.out.printf("round %d: snapshot+tail %.0f ms, full replay %.0f ms%n", round, fromSnapshot[round],
                        fullReplay[round]);
            }
            double a = median(fromSnapshot);
            double b = median(fullReplay);
            System.out.printf("blocks %d (+%d tail events in %d messages), snapshot %.1f MB: restart to first correct"
                    + " hint median %.0f ms from snapshot + tail, %.0f ms full replay (baseline), ratio %.2f%n",
                    blocks, tailEvents, tailEvents / 16, snapshotBytes / 1e6, a, b, a / b);
        } finally {
            Files.deleteIfExists(snapshot);
            Files.deleteIfExists(directory);
        }
    }

    private static double timeToFirstCorrectHint(InProcessSyncBus bus, ClusterTopology topology,
            ClusterRouter.Options options, List<BlockHash> query, long expectedTokens) throws Exception {
        System.gc(); // start each timed restart from the same heap, not after the previous router's garbage
        long start = System.nanoTime();
        try (ClusterRouter router = ClusterRouter.start(bus, topology, options, null)) {
            if (!router.awaitStreamSequence(bus.lastSequence(), Duration.ofMinutes(5))) {
                throw new IllegalStateException("the restarted router did not catch up");
            }
            CacheRoutingHint hint = router.route(query);
            long elapsed = System.nanoTime() - start;
            if (hint.reusableTokens() != expectedTokens || !hint.relevantRanks().equals(List.of(0, 1))) {
                throw new IllegalStateException("wrong hint after restart: " + hint);
            }
            return elapsed / 1e6;
        }
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
