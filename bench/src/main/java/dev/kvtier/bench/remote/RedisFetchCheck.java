package dev.kvtier.bench.remote;

import dev.kvtier.redis.LocalRedisServer;
import dev.kvtier.redis.RedisRemoteBlockStore;
import dev.kvtier.remote.RemoteBlockStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Fetch throughput of {@link RedisRemoteBlockStore#getAllInto} against {@code redis-benchmark}'s pipelined GET on the
 * same {@code redis-server} (started here by PID on a loopback port) at the same value sizes, in one run, rounds
 * interleaved: per size, {@code rounds} times (store into native memory, store into arrays, raw Lettuce GET pipeline,
 * redis-benchmark), each for about {@code secondsPerMeasure}. The store fetches {@code batch} keys per call (a bounded
 * {@code GETRANGE} per key, one flush): {@code getAllInto} with a sink that copies each value into its own native
 * buffer (where a cache puts a fetched block: what the cache's restores do, less the checks), and {@code getAll}, an
 * array per value; the raw Lettuce line is {@code batch} plain {@code GET}s flushed once into arrays (what the store
 * would cost without its size bound and its sink); {@code redis-benchmark -c 1 -P batch -t get -d SIZE} is the
 * engine's own client. Also the p99 latency of one {@code batch}-key {@code getAllInto} (HdrHistogram). Medians of the
 * rounds. The first fetch of every size is compared byte for byte with what was stored.
 *
 * <p>Usage: {@code RedisFetchCheck [rounds=3] [secondsPerMeasure=2] [batch=32] [sizes=65536,1048576,4194304]}.
 */
public final class RedisFetchCheck {
    private RedisFetchCheck() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 2;
        int batch = args.length > 2 ? Integer.parseInt(args[2]) : 32;
        List<Integer> sizes = new ArrayList<>();
        for (String size : (args.length > 3 ? args[3] : "65536,1048576,4194304").split(",")) {
            sizes.add(Integer.parseInt(size.trim()));
        }
        Path directory = Files.createTempDirectory("kvtier-redis-fetch");
        LocalRedisServer server = LocalRedisServer.start(directory, "");
        try (RedisRemoteBlockStore store = RedisRemoteBlockStore.open(URI.create(server.uri()),
                Map.of("commandTimeoutMs", "60000"))) {
            RedisClient rawClient = RedisClient.create(server.uri());
            try (StatefulRedisConnection<String, byte[]> raw = rawClient.connect(
                    RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE))) {
                raw.setAutoFlushCommands(false);
                System.out.printf("redis-server %s on 127.0.0.1:%d, %d-key batches, %d rounds of %.1f s, medians%n",
                        server.cli("INFO", "server").lines().filter(l -> l.startsWith("redis_version"))
                                .findFirst().orElse("?"), server.port(), batch, rounds, seconds);
                System.out.println("size      store MB/s  store arrays MB/s  lettuce GET MB/s  redis-benchmark MB/s"
                        + "  store/benchmark  store p99 batch ms");
                for (int size : sizes) {
                    measureSize(server, store, raw, size, batch, rounds, seconds);
                }
            } finally {
                rawClient.shutdown();
            }
        } finally {
            server.kill();
            try (var paths = Files.walk(directory)) {
                paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static void measureSize(LocalRedisServer server, RedisRemoteBlockStore store,
                                    StatefulRedisConnection<String, byte[]> raw, int size, int batch, int rounds,
                                    double seconds) throws Exception {
        server.cli("FLUSHALL");
        Map<String, byte[]> values = new LinkedHashMap<>();
        Random random = new Random(size);
        for (int i = 0; i < batch; i++) {
            byte[] value = new byte[size];
            random.nextBytes(value);
            values.put("kvtier:bench:" + size + ":" + i, value);
        }
        store.putAll(values).get(60, TimeUnit.SECONDS);
        List<String> keys = List.copyOf(values.keySet());
        // redis-benchmark GETs one key ("key:__rand_int__" without -r): give it a value of the size first.
        byte[] benchmarkValue = new byte[size];
        random.nextBytes(benchmarkValue);
        RedisFuture<String> set = raw.async().set("key:__rand_int__", benchmarkValue);
        raw.flushCommands();
        set.get(60, TimeUnit.SECONDS);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment[] destinations = new MemorySegment[batch];
            for (int i = 0; i < batch; i++) {
                destinations[i] = arena.allocate(size, 4096);
            }
            checkFetchedBytes(store, keys, values, destinations);
            // Warm up the clients' code (JIT) on this size before the measured rounds.
            intoMegabytesPerSecond(store, keys, destinations, (long) size * batch, seconds, null);
            arraysMegabytesPerSecond(store, keys, (long) size * batch, seconds);
            rawMegabytesPerSecond(raw, keys, (long) size * batch, seconds);
            double[] intoRate = new double[rounds];
            double[] arraysRate = new double[rounds];
            double[] rawRate = new double[rounds];
            double[] benchmarkRate = new double[rounds];
            Histogram latency = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
            for (int round = 0; round < rounds; round++) {
                intoRate[round] = intoMegabytesPerSecond(store, keys, destinations, (long) size * batch, seconds,
                        round == 0 ? null : latency);
                arraysRate[round] = arraysMegabytesPerSecond(store, keys, (long) size * batch, seconds);
                rawRate[round] = rawMegabytesPerSecond(raw, keys, (long) size * batch, seconds);
                benchmarkRate[round] = redisBenchmarkMegabytesPerSecond(server, size, batch, seconds);
            }
            double intoMedian = median(intoRate);
            double benchmarkMedian = median(benchmarkRate);
            System.out.printf("%-9s %10.0f  %17.0f  %16.0f  %20.0f  %15.2f  %18.2f%n", size >= 1 << 20
                    ? (size >> 20) + " MiB" : (size >> 10) + " KiB", intoMedian, median(arraysRate),
                    median(rawRate), benchmarkMedian, intoMedian / benchmarkMedian,
                    latency.getValueAtPercentile(99) / 1e6);
        }
    }

    /** One fetch into the destinations, compared byte for byte with what was stored: the figures are of real bytes. */
    private static void checkFetchedBytes(RedisRemoteBlockStore store, List<String> keys, Map<String, byte[]> values,
                                          MemorySegment[] destinations) throws Exception {
        store.getAllInto(keys, (index, value) -> copy(value, destinations[index])).get(60, TimeUnit.SECONDS);
        for (int i = 0; i < keys.size(); i++) {
            byte[] expected = values.get(keys.get(i));
            if (MemorySegment.mismatch(destinations[i], 0, expected.length, MemorySegment.ofArray(expected), 0,
                    expected.length) != -1) {
                throw new IllegalStateException("the store fetched other bytes for " + keys.get(i));
            }
        }
    }

    private static void copy(ByteBuffer value, MemorySegment destination) {
        if (value == null) {
            throw new IllegalStateException("a key is missing");
        }
        MemorySegment.copy(MemorySegment.ofBuffer(value), 0, destination, 0, value.remaining());
    }

    /** One fetch of the measured kind; throws when a value is missing. */
    private interface Fetch {
        void run() throws Exception;
    }

    private static double intoMegabytesPerSecond(RedisRemoteBlockStore store, List<String> keys,
                                                 MemorySegment[] destinations, long bytesPerCall, double seconds,
                                                 Histogram latency) throws Exception {
        RemoteBlockStore.ValueSink sink = (index, value) -> copy(value, destinations[index]);
        return megabytesPerSecond(bytesPerCall, seconds, latency,
                () -> store.getAllInto(keys, sink).get(60, TimeUnit.SECONDS));
    }

    private static double arraysMegabytesPerSecond(RedisRemoteBlockStore store, List<String> keys,
                                                   long bytesPerCall, double seconds) throws Exception {
        return megabytesPerSecond(bytesPerCall, seconds, null, () -> {
            if (store.getAll(keys).get(60, TimeUnit.SECONDS).contains(null)) {
                throw new IllegalStateException("the store lost a key");
            }
        });
    }

    private static double rawMegabytesPerSecond(StatefulRedisConnection<String, byte[]> raw, List<String> keys,
                                                long bytesPerCall, double seconds) throws Exception {
        return megabytesPerSecond(bytesPerCall, seconds, null, () -> {
            List<RedisFuture<byte[]>> gets = new ArrayList<>(keys.size());
            for (String key : keys) {
                gets.add(raw.async().get(key));
            }
            raw.flushCommands();
            for (RedisFuture<byte[]> get : gets) {
                if (get.get(60, TimeUnit.SECONDS) == null) {
                    throw new IllegalStateException("a key is missing");
                }
            }
        });
    }

    /** Runs {@code fetch} for about {@code seconds} after one warm call; its rate, each call's time in latency. */
    private static double megabytesPerSecond(long bytesPerCall, double seconds, Histogram latency, Fetch fetch)
            throws Exception {
        fetch.run();
        long calls = 0;
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        long now = start;
        while (now < end) {
            long callStart = System.nanoTime();
            fetch.run();
            now = System.nanoTime();
            if (latency != null) {
                latency.recordValue(now - callStart);
            }
            calls++;
        }
        return calls * bytesPerCall / ((now - start) / 1e9) / 1e6;
    }

    private static final Pattern REQUESTS_PER_SECOND = Pattern.compile("GET:\\s*([0-9.]+)\\s*requests per second");

    private static double redisBenchmarkMegabytesPerSecond(LocalRedisServer server, int size, int batch,
                                                           double seconds) throws IOException, InterruptedException {
        // Requests for about `seconds` at 1 GB/s; at least 10 pipelines.
        long requests = Math.max(10L * batch, (long) (seconds * 1e9 / size));
        Process benchmark = new ProcessBuilder(LocalRedisServer.findBinary().resolveSibling("redis-benchmark")
                .toString(), "-h", "127.0.0.1", "-p", Integer.toString(server.port()), "-c", "1", "-P",
                Integer.toString(batch), "-t", "get", "-d", Integer.toString(size), "-n", Long.toString(requests),
                "-q").redirectErrorStream(true).start();
        String output = new String(benchmark.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (benchmark.waitFor() != 0) {
            throw new IOException("redis-benchmark failed: " + output);
        }
        Matcher matcher = REQUESTS_PER_SECOND.matcher(output.substring(Math.max(0, output.lastIndexOf("GET:"))));
        if (!matcher.find()) {
            throw new IOException("no GET rate in redis-benchmark's output: " + output);
        }
        return Double.parseDouble(matcher.group(1)) * size / 1e6;
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
