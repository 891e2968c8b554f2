package dev.kvtier.bench.remote;

import dev.kvtier.Backend;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.RemoteStoreConfig;
import dev.kvtier.RemoteStoreStats;
import dev.kvtier.inference.Generation;
import dev.kvtier.inference.KvTierDecoder;
import dev.kvtier.inference.LlamaConfig;
import dev.kvtier.inference.LlamaModel;
import dev.kvtier.inference.LlamaWeights;
import dev.kvtier.inference.ReferenceDecoder;
import dev.kvtier.redis.LocalRedisServer;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Two ranks serving the same prompts with the reference decoder of {@code dev.kvtier.inference} ({@link KvTierDecoder})
 * and one {@code redis-server} (started here by PID). Rank A, a second JVM started by this one, prefills
 * {@code prompts} prompts of {@code blocks} full blocks and one token more, its blocks written through to Redis, and
 * exits. Rank B, this JVM, with the same model (shape and weights seed), deployment key and namespace and an empty
 * cache of its own, serves the same prompts, each one twice, interleaved and in alternating order: with its prefix
 * fetched from Redis, and recomputed by the same decoder over a cache without a remote store (the decoder's own
 * prefill, measured in the same run). Each output (tokens and the logits' bits) is checked against the reference
 * decoder's (keys and values in plain arrays, no kvtier).
 *
 * <p>Reports the share of B's block references served from blocks A stored, B's time to first token (median and p99)
 * with the prefix from Redis against recomputing it, their ratio, the cost gate's fetch estimate beside the measured
 * recompute, and the block bytes per token of the shape used. Two prompts more than asked are stored by A and served
 * first by B, unmeasured (warm-up). Exits with status 1 when an output differs from the reference's.
 *
 * <p>Usage: {@code RemoteShareCheck [prompts=12] [blocks=32] [size=small] [tokensPerBlock=16]}, {@code size}
 * {@code tiny} or {@code small} ({@link LlamaConfig#TINY}, {@link LlamaConfig#SMALL}).
 */
public final class RemoteShareCheck {
    private static final byte[] KEY = "remote share check deployment key".getBytes(StandardCharsets.UTF_8);
    private static final String NAMESPACE = "share-check";
    private static final long WEIGHTS_SEED = 42;
    private static final int WARM_UP_PROMPTS = 2;

    private RemoteShareCheck() {
    }

    /**
     * Runs the check (rank B, starting Redis and rank A), or rank A when the first argument is {@code rank-a}.
     *
     * @param args see the class comment
     * @throws Exception if Redis or rank A cannot be started, or rank A fails
     */
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("rank-a")) {
            rankA(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]), size(args[4]),
                    Integer.parseInt(args[5]), Path.of(args[6]));
            return;
        }
        int prompts = args.length > 0 ? Integer.parseInt(args[0]) : 12;
        int blocks = args.length > 1 ? Integer.parseInt(args[1]) : 32;
        String size = args.length > 2 ? args[2] : "small";
        int tokensPerBlock = args.length > 3 ? Integer.parseInt(args[3]) : KvTierDecoder.DEFAULT_TOKENS_PER_BLOCK;
        size(size); // refused here, before anything starts
        if (prompts < 1 || blocks < 1 || tokensPerBlock < 1) {
            throw new IllegalArgumentException("prompts, blocks and tokensPerBlock must be >= 1, were " + prompts
                    + ", " + blocks + ", " + tokensPerBlock);
        }
        Path directory = Files.createTempDirectory("kvtier-remote-share");
        LocalRedisServer server = LocalRedisServer.start(directory.resolve("redis"), "");
        boolean identical;
        try {
            long start = System.nanoTime();
            Process rankA = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                    RemoteShareCheck.class.getName(), "rank-a", server.uri(), Integer.toString(prompts + WARM_UP_PROMPTS),
                    Integer.toString(blocks), size, Integer.toString(tokensPerBlock),
                    directory.resolve("rank-a").toString()).inheritIO().start();
            if (rankA.waitFor() != 0) {
                throw new IllegalStateException("rank A exited with " + rankA.exitValue());
            }
            System.out.printf(Locale.ROOT, "rank A took %.1f s (its JVM's start included)%n",
                    (System.nanoTime() - start) / 1e9);
            identical = rankB(server.uri(), prompts, blocks, size(size), tokensPerBlock, directory.resolve("rank-b"));
        } finally {
            server.kill();
            try (var paths = Files.walk(directory)) {
                paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        if (!identical) {
            System.err.println("[remote share check] FAILED: an output differs from the reference decoder's");
            System.exit(1);
        }
    }

    private static LlamaConfig size(String name) {
        return switch (name) {
            case "tiny" -> LlamaConfig.TINY;
            case "small" -> LlamaConfig.SMALL;
            default -> throw new IllegalArgumentException("size must be tiny or small, was " + name);
        };
    }

    /** A cache on the host backend holding every prompt's blocks twice over; with the remote store when uri is set. */
    private static KvTierCache open(String uri, long blockBytes, int prompts, int blocks, Path disk) {
        long budget = 2L * (prompts + WARM_UP_PROMPTS) * blocks * blockBytes;
        KvTierConfig.Builder config = KvTierConfig.builder().backend(Backend.HOST).gpuBudgetBytes(budget)
                .cpuBudgetBytes(budget).pageSizeBytes(4096).diskDirectory(disk).transferTimeout(Duration.ofSeconds(10));
        if (uri != null) {
            config.remote(RemoteStoreConfig.builder().store(URI.create(uri)).key(KEY).namespace(NAMESPACE)
                    .storeSetting("commandTimeoutMs", "10000").build());
        }
        return KvTierCache.open(config.build());
    }

    /** Prompt {@code index}: {@code blocks} full blocks and one token more (the token whose logits choose the first). */
    private static int[] prompt(LlamaConfig config, int index, int blocks, int tokensPerBlock) {
        Random random = new Random(1_000_003L * (index + 1));
        int[] tokens = new int[blocks * tokensPerBlock + 1];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = random.nextInt(config.vocabSize());
        }
        return tokens;
    }

    private static void rankA(String uri, int prompts, int blocks, LlamaConfig size, int tokensPerBlock, Path disk)
            throws InterruptedException {
        LlamaModel model = new LlamaModel(LlamaWeights.generate(size, WEIGHTS_SEED));
        long blockBytes = KvTierDecoder.layoutFor(size, tokensPerBlock).bytesPerBlock();
        try (KvTierCache cache = open(uri, blockBytes, prompts, blocks, disk)) {
            KvTierDecoder decoder = new KvTierDecoder(model, cache, tokensPerBlock, Duration.ofSeconds(30));
            long[] ttft = new long[prompts];
            for (int p = 0; p < prompts; p++) {
                ttft[p] = decoder.generate(prompt(size, p, blocks, tokensPerBlock), 1).timeToFirstTokenNanos();
            }
            long stored = decoder.counters().blocksStored();
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            while (cache.stats().remote().blocksWritten() + cache.stats().remote().writesDropped() < stored
                    && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            RemoteStoreStats stats = cache.stats().remote();
            Arrays.sort(ttft);
            System.out.printf(Locale.ROOT, "rank A: prefilled %d prompts of %d blocks (%d tokens each), median TTFT"
                    + " %.1f ms; stored %d blocks of %d bytes, %d written to Redis, %d dropped%n", prompts, blocks,
                    blocks * tokensPerBlock + 1, ttft[prompts / 2] / 1e6, stored, blockBytes, stats.blocksWritten(),
                    stats.writesDropped());
        }
    }

    /** Rank B's measurement; true when every output equals the reference decoder's. */
    private static boolean rankB(String uri, int prompts, int blocks, LlamaConfig size, int tokensPerBlock,
                                 Path disk) {
        LlamaModel model = new LlamaModel(LlamaWeights.generate(size, WEIGHTS_SEED));
        ReferenceDecoder reference = new ReferenceDecoder(model);
        long blockBytes = KvTierDecoder.layoutFor(size, tokensPerBlock).bytesPerBlock();
        long[] fromRedis = new long[prompts];
        long[] recomputed = new long[prompts];
        long references = 0;
        long servedFromA = 0;
        int differing = 0;
        RemoteStoreStats stats;
        try (KvTierCache shared = open(uri, blockBytes, prompts, blocks, disk.resolve("shared"));
             KvTierCache alone = open(null, blockBytes, prompts, blocks, disk.resolve("alone"))) {
            KvTierDecoder withRedis = new KvTierDecoder(model, shared, tokensPerBlock, Duration.ofSeconds(30));
            KvTierDecoder recompute = new KvTierDecoder(model, alone, tokensPerBlock, Duration.ofSeconds(30));
            // Prompts 0 and 1 warm the code up (unmeasured); the measured prompts follow, as A stored them.
            for (int p = 0; p < prompts + WARM_UP_PROMPTS; p++) {
                int[] prompt = prompt(size, p, blocks, tokensPerBlock);
                Generation expected = reference.generate(prompt, 1);
                Generation fetched;
                Generation computed;
                if (p % 2 == 0) {
                    fetched = withRedis.generate(prompt, 1);
                    computed = recompute.generate(prompt, 1);
                } else {
                    computed = recompute.generate(prompt, 1);
                    fetched = withRedis.generate(prompt, 1);
                }
                boolean same = expected.sameOutputAs(fetched) && expected.sameOutputAs(computed);
                differing += same ? 0 : 1;
                if (!same) {
                    System.out.printf("rank B: prompt %d: output differs from the reference decoder's%n", p);
                }
                if (p >= WARM_UP_PROMPTS) {
                    int m = p - WARM_UP_PROMPTS;
                    fromRedis[m] = fetched.timeToFirstTokenNanos();
                    recomputed[m] = computed.timeToFirstTokenNanos();
                    references += blocks;
                    // B's cache held none of these blocks before: every cached one came from Redis, written by A.
                    servedFromA += fetched.cachedTokens() / tokensPerBlock;
                    if (computed.cachedTokens() != 0) {
                        throw new IllegalStateException("the recompute run found " + computed.cachedTokens()
                                + " tokens cached; it must compute the whole prompt");
                    }
                }
            }
            stats = shared.stats().remote();
            KvTierDecoder.Counters counters = withRedis.counters();
            System.out.printf(Locale.ROOT, "rank B: %d of %d block references served from rank A's blocks (%.1f%%);"
                    + " fetched %d blocks, %d bytes; %d rejections, %d failures, %d restores failed%n", servedFromA,
                    references, 100.0 * servedFromA / references, stats.blocksFetched(), stats.bytesFetched(),
                    stats.rejections(), stats.failures(), counters.restoreFailures());
        }
        Arrays.sort(fromRedis);
        Arrays.sort(recomputed);
        double redisMedian = fromRedis[prompts / 2] / 1e6;
        double recomputeMedian = recomputed[prompts / 2] / 1e6;
        long tokens = (long) blocks * tokensPerBlock;
        System.out.printf(Locale.ROOT, "rank B: model %s (%,d parameters, %d layers, kvDim %d): %,d bytes of keys and"
                + " values per token, %,d per %d-token block, %,d per %d-block prefix%n",
                size == LlamaConfig.TINY ? "tiny" : "small", size.parameterCount(), size.layers(), size.kvDim(),
                blockBytes / tokensPerBlock, blockBytes, tokensPerBlock, blockBytes * blocks, blocks);
        System.out.printf(Locale.ROOT, "rank B: time to first token, a prompt of %d tokens whose first %d (%d blocks)"
                        + " were prefilled by A, %d prompts each way, interleaved: prefix from Redis median %.1f ms, p99"
                        + " %.1f ms; recomputed by the decoder median %.1f ms, p99 %.1f ms; Redis / recompute %.3f"
                        + " (median), %.3f (p99)%n", tokens + 1, tokens, blocks, prompts, redisMedian,
                percentile99(fromRedis) / 1e6, recomputeMedian, percentile99(recomputed) / 1e6,
                redisMedian / recomputeMedian, (double) percentile99(fromRedis) / percentile99(recomputed));
        System.out.printf(Locale.ROOT, "rank B: the decoder's measured prefill: %.0f tokens/s (median); the cost gate's"
                        + " fetch estimate for %d blocks: %.2f ms (moving averages: round trip %.2f ms, %,d MB/s)%n",
                tokens / (recomputeMedian / 1e3), blocks, stats.estimatedFetchNanos() / 1e6,
                stats.roundTripNanos() / 1e6, stats.bytesPerSecond() / 1_000_000);
        System.out.printf("rank B: outputs identical to the reference decoder's: %d of %d prompts%n",
                prompts + WARM_UP_PROMPTS - differing, prompts + WARM_UP_PROMPTS);
        return differing == 0;
    }

    /** Nearest rank: with fewer than 100 samples, the slowest. */
    private static long percentile99(long[] sorted) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(sorted.length * 0.99) - 1)];
    }
}
