package dev.kvtier.bench.cluster;

import dev.kvtier.cluster.ClusterEvent;
import dev.kvtier.cluster.ClusterPublisher;
import dev.kvtier.cluster.ClusterState;
import dev.kvtier.cluster.ClusterRouter;
import dev.kvtier.cluster.ClusterTopology;
import dev.kvtier.cluster.JetStreamSyncBus;
import dev.kvtier.cluster.LocalNatsServer;
import dev.kvtier.cluster.SyncBus;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;

/**
 * The stream goal: publish -> applied at the router, p50/p99, at given rates (events/s) and step shapes (events per
 * engine step, one message per step: 1 is the worst shape, one message per event), over JetStream on a nats-server
 * this program starts (loopback). Ours: a {@link ClusterPublisher} (queue, pipelined publishing thread, wire format)
 * to a {@link ClusterRouter} (ordered consumer, decode, apply to the index). Baseline in the same run (after a
 * one-second warm-up of each, not counted): the same message sizes published straight with
 * {@link SyncBus#publishAsync} from the pacing thread (the client's own pipelining, no queue, no thread hand-off) and
 * received by a bare subscription (no decode or apply). Open-loop pacing: a late step is sent at once, and its latency
 * counts from when it was due. Interleaved ours/baseline, median of the rounds.
 *
 * <p>Usage: {@code ClusterLatencyCheck [seconds=3] [rounds=3] [rates=2000,10000] [eventsPerStep=16]}, the last two
 * comma-separated lists.
 */
public final class ClusterLatencyCheck {
    private static final ClusterTopology TOPOLOGY = new ClusterTopology(1, 1, 4);

    private ClusterLatencyCheck() {
    }

    record Result(double eventsPerSecond, double p50Ms, double p99Ms, double maxMs) {
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int[] rates = args.length > 2 ? Arrays.stream(args[2].split(",")).mapToInt(Integer::parseInt).toArray()
                : new int[] {2000, 10000};
        int[] shapes = args.length > 3 ? Arrays.stream(args[3].split(",")).mapToInt(Integer::parseInt).toArray()
                : new int[] {16};
        Path store = Files.createTempDirectory("kvtier-latency-nats-");
        int streams = 0;
        try (LocalNatsServer server = LocalNatsServer.start(store)) {
            for (int rate : rates) {
                for (int eventsPerStep : shapes) {
                    streams = run(server.url(), rate, eventsPerStep, seconds, rounds, streams);
                }
            }
        } finally {
            try (Stream<Path> paths = Files.walk(store)) {
                paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** One rate and step shape: warm-up, then {@code rounds} interleaved rounds; returns the streams used so far. */
    private static int run(String url, int rate, int eventsPerStep, int seconds, int rounds, int streams)
            throws Exception {
        ours(url, "LAT" + (++streams), rate, eventsPerStep, 1); // warm-up (JIT, connections), not counted
        raw(url, "LAT" + (++streams), rate, eventsPerStep, 1);
        Result[] ours = new Result[rounds];
        Result[] raw = new Result[rounds];
        for (int round = 0; round < rounds; round++) {
            ours[round] = ours(url, "LAT" + (++streams), rate, eventsPerStep, seconds);
            raw[round] = raw(url, "LAT" + (++streams), rate, eventsPerStep, seconds);
            System.out.printf("rate %d steps of %d round %d: ours %s | raw %s%n", rate, eventsPerStep, round,
                    ours[round], raw[round]);
        }
        Result a = median(ours);
        Result b = median(raw);
        System.out.printf("rate %d events/s (steps of %d): ours %.0f events/s p50 %.2f ms p99 %.2f ms;"
                + " raw JetStream p50 %.2f ms p99 %.2f ms; p99 ratio %.2f%n", rate, eventsPerStep,
                a.eventsPerSecond(), a.p50Ms(), a.p99Ms(), b.p50Ms(), b.p99Ms(), a.p99Ms() / b.p99Ms());
        return streams;
    }

    private static Result median(Result[] results) {
        double[] rate = Arrays.stream(results).mapToDouble(Result::eventsPerSecond).sorted().toArray();
        double[] p50 = Arrays.stream(results).mapToDouble(Result::p50Ms).sorted().toArray();
        double[] p99 = Arrays.stream(results).mapToDouble(Result::p99Ms).sorted().toArray();
        double[] max = Arrays.stream(results).mapToDouble(Result::maxMs).sorted().toArray();
        int m = results.length / 2;
        return new Result(rate[m], p50[m], p99[m], max[m]);
    }

    private static Result ours(String url, String stream, int rate, int eventsPerStep, int seconds) throws Exception {
        int steps = rate * seconds / eventsPerStep;
        long interval = TimeUnit.SECONDS.toNanos(1) * eventsPerStep / rate;
        AtomicLongArray due = new AtomicLongArray(steps + 2);
        Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        CountDownLatch all = new CountDownLatch(steps);
        try (SyncBus routerBus = bus(url, stream); SyncBus rankBus = bus(url, stream);
                // No periodic resync requests: a reset during the run would re-announce the (empty) holdings in place
                // of the steps waiting for it, and those steps would never be counted.
                ClusterRouter router = ClusterRouter.start(routerBus, TOPOLOGY, new ClusterRouter.Options(null,
                        Duration.ofHours(1), Duration.ofHours(1), 1024),
                        (batch, outcome) -> {
                            // A step is recognised by its first block (high half = step number), not by its sequence:
                            // a resync request may add a reset message and shift the sequences.
                            if (outcome != ClusterState.Outcome.DUPLICATE && !batch.events().isEmpty()
                                    && batch.events().get(0) instanceof ClusterEvent.BlockStored first) {
                                long now = System.nanoTime();
                                synchronized (histogram) {
                                    histogram.recordValue(Math.max(0, now - due.get((int) first.block().high())));
                                }
                                all.countDown();
                            }
                        });
                ClusterPublisher publisher = new ClusterPublisher(rankBus, TOPOLOGY, 0, "bench", 1, announcer -> { },
                        null, 100_000)) {
            publisher.flush(Duration.ofSeconds(10));
            long start = System.nanoTime();
            long block = 0;
            for (int step = 0; step < steps; step++) {
                long dueAt = start + step * interval;
                waitUntil(dueAt);
                for (int e = 0; e < eventsPerStep; e++) {
                    block++;
                    publisher.blockStored(new BlockHash(step, block), Tier.GPU, 16);
                }
                due.set(step, dueAt);
                publisher.endStep();
            }
            if (!all.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the router did not apply every step within 60 s");
            }
            double elapsed = (System.nanoTime() - start) / 1e9;
            return result(histogram, steps * (double) eventsPerStep / elapsed);
        }
    }

    private static Result raw(String url, String stream, int rate, int eventsPerStep, int seconds) throws Exception {
        int steps = rate * seconds / eventsPerStep;
        long interval = TimeUnit.SECONDS.toNanos(1) * eventsPerStep / rate;
        AtomicLongArray due = new AtomicLongArray(steps + 1);
        Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        CountDownLatch all = new CountDownLatch(steps);
        // The same size as one of our steps: frame + batch header + its block-stored events.
        byte[] payload = new byte[dev.kvtier.cluster.WireFormat.batchOverhead(5) + eventsPerStep * 22];
        try (SyncBus receiving = bus(url, stream); SyncBus sending = bus(url, stream);
                SyncBus.Subscription ignored = receiving.subscribe(1, (sequence, bytes) -> {
                    long now = System.nanoTime();
                    synchronized (histogram) {
                        histogram.recordValue(Math.max(0, now - due.get((int) sequence)));
                    }
                    all.countDown();
                })) {
            long start = System.nanoTime();
            @SuppressWarnings("unchecked")
            java.util.concurrent.CompletableFuture<Long>[] acks = new java.util.concurrent.CompletableFuture[steps];
            for (int step = 0; step < steps; step++) {
                long dueAt = start + step * interval;
                waitUntil(dueAt);
                due.set(step + 1, dueAt);
                acks[step] = sending.publishAsync(payload);
            }
            if (!all.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the raw subscriber did not get every message within 60 s");
            }
            java.util.concurrent.CompletableFuture.allOf(acks).get(60, TimeUnit.SECONDS); // a failed publish throws
            double elapsed = (System.nanoTime() - start) / 1e9;
            return result(histogram, steps * (double) eventsPerStep / elapsed);
        }
    }

    private static SyncBus bus(String url, String stream) {
        return new JetStreamSyncBus(url, stream, stream.toLowerCase(), 1_000_000, Duration.ofSeconds(5));
    }

    private static void waitUntil(long deadline) {
        for (long left = deadline - System.nanoTime(); left > 0; left = deadline - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    private static Result result(Histogram histogram, double eventsPerSecond) {
        synchronized (histogram) {
            return new Result(eventsPerSecond, histogram.getValueAtPercentile(50) / 1e6,
                    histogram.getValueAtPercentile(99) / 1e6, histogram.getMaxValue() / 1e6);
        }
    }
}
