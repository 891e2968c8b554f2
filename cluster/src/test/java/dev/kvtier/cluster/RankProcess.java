package dev.kvtier.cluster;

import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A rank in its own JVM for {@link MultiProcessClusterTest}: plays {@code steps} random engine steps, keeping its
 * holdings in {@code <dir>/rank-<r>.state} after each (its "persistent tier"), then writes {@code rank-<r>.final},
 * prints DONE, and keeps answering resync requests until its stdin closes.
 *
 * <p>Arguments: url stream worldSize rank epoch seed steps dir recover(true|false). With recover, it starts from the
 * DISK-tier blocks of its state file, as a restarted rank with a persistent disk tier would.
 */
public final class RankProcess {
    private RankProcess() {
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String stream = args[1];
        int worldSize = Integer.parseInt(args[2]);
        int rank = Integer.parseInt(args[3]);
        long epoch = Long.parseLong(args[4]);
        long seed = Long.parseLong(args[5]);
        int steps = Integer.parseInt(args[6]);
        Path dir = Path.of(args[7]);
        boolean recover = Boolean.parseBoolean(args[8]);
        ClusterTopology topology = new ClusterTopology(worldSize, 1, 4);
        RankTruth truth = new RankTruth(rank);
        Path state = dir.resolve("rank-" + rank + ".state");
        if (recover && Files.exists(state)) {
            for (String line : Files.readAllLines(state)) {
                String[] parts = line.split(" ");
                truth.load(BlockHash.fromHex(parts[0]), Integer.parseInt(parts[1]));
            }
            truth.keepOnly(Tier.DISK);
        }
        try (SyncBus bus = new JetStreamSyncBus(url, stream, stream.toLowerCase(), 1_000_000, Duration.ofSeconds(1));
                ClusterPublisher publisher = new ClusterPublisher(bus, topology, rank, "host-" + rank, epoch, truth,
                        null, 100_000)) {
            truth.attach(publisher);
            Random random = new Random(seed);
            for (int step = 0; step < steps; step++) {
                truth.randomStep(random, 200, 8);
                write(state, truth.stateLines());
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // pacing, so that kills land mid-run
            }
            if (!publisher.flush(Duration.ofSeconds(60))) {
                System.out.println("FLUSH-TIMEOUT");
            }
            write(dir.resolve("rank-" + rank + ".final"), truth.blockLines());
            System.out.println("DONE");
            System.out.flush();
            while (System.in.read() >= 0) {
                // keep answering resync requests until the test closes our stdin
            }
        }
    }

    static void write(Path target, List<String> lines) throws IOException {
        Path temporary = target.resolveSibling(target.getFileName() + ".tmp");
        Files.write(temporary, new ArrayList<>(lines), StandardCharsets.UTF_8);
        Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
