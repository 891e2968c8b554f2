package dev.kvtier.cluster;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The router in its own JVM for {@link MultiProcessClusterTest}: snapshots every 100 ms into {@code snapshot} and
 * writes its index ({@link ClusterState#describeHoldings()}) and counters to {@code out} every 50 ms, until killed.
 *
 * <p>Arguments: url stream worldSize snapshot out.
 */
public final class RouterProcess {
    private RouterProcess() {
    }

    public static void main(String[] args) throws Exception {
        ClusterTopology topology = new ClusterTopology(Integer.parseInt(args[2]), 1, 4);
        Path out = Path.of(args[4]);
        try (SyncBus bus = new JetStreamSyncBus(args[0], args[1], args[1].toLowerCase(), 1_000_000,
                Duration.ofSeconds(5));
                ClusterRouter router = ClusterRouter.start(bus, topology, new ClusterRouter.Options(Path.of(args[3]),
                        Duration.ofMillis(100), Duration.ofMillis(100), 1024), null)) {
            System.out.println("STARTED");
            System.out.flush();
            while (true) {
                ClusterState state = router.state();
                List<String> lines = new ArrayList<>(state.describeHoldings());
                lines.add("outOfSync " + state.ranksOutOfSync());
                lines.add("stream " + state.lastStreamSequence());
                lines.add("duplicates " + state.duplicates() + " stale " + state.staleEpochs() + " gaps "
                        + state.streamGaps() + " bad " + state.badMessages());
                RankProcess.write(out, lines);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            }
        }
    }
}
