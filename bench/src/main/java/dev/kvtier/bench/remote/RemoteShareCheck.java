package dev.kvtier.bench.remote;

import dev.kvtier.Backend;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.RemoteStoreConfig;
import dev.kvtier.RemoteStoreStats;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockHasher;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixLookup;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.redis.LocalRedisServer;
import dev.kvtier.store.Tier;

import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Two ranks with separate caches sharing one {@code redis-server} (started here by PID): rank A, a second JVM started
 * by this one, stores {@code chains} prompt chains of {@code blocks} blocks (written through to Redis) and exits; rank
 * B, this JVM, with an empty cache of its own, looks every chain up and makes it resident on CPU from Redis. Reports
 * the share of B's block references served from blocks A stored, and B's median and p99 time to make one chain
 * resident from Redis against recomputing it at a configured prefill rate (tokens/s; not measured here).
 *
 * <p>Usage: {@code RemoteShareCheck [chains=16] [blocks=32] [blockBytes=262144] [tokensPerBlock=16]
 * [prefillTokensPerSecond=10000]}.
 */
public final class RemoteShareCheck {
    private static final byte[] KEY = "remote share check deployment key".getBytes(StandardCharsets.UTF_8);

    private RemoteShareCheck() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("rank-a")) {
            rankA(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                    Integer.parseInt(args[5]), Path.of(args[6]));
            return;
        }
        int chains = args.length > 0 ? Integer.parseInt(args[0]) : 16;
        int blocks = args.length > 1 ? Integer.parseInt(args[1]) : 32;
        int blockBytes = args.length > 2 ? Integer.parseInt(args[2]) : 256 << 10;
        int tokensPerBlock = args.length > 3 ? Integer.parseInt(args[3]) : 16;
        double prefillRate = args.length > 4 ? Double.parseDouble(args[4]) : 10_000;
        Path directory = Files.createTempDirectory("kvtier-remote-share");
        LocalRedisServer server = LocalRedisServer.start(directory.resolve("redis"), "");
        try {
            Process rankA = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                    RemoteShareCheck.class.getName(), "rank-a", server.uri(), Integer.toString(chains),
                    Integer.toString(blocks), Integer.toString(blockBytes), Integer.toString(tokensPerBlock),
                    directory.resolve("rank-a").toString()).inheritIO().start();
            if (rankA.waitFor() != 0) {
                throw new IllegalStateException("rank A exited with " + rankA.exitValue());
            }
            rankB(server.uri(), chains, blocks, blockBytes, tokensPerBlock, prefillRate, directory.resolve("rank-b"));
        } finally {
            server.kill();
            try (var paths = Files.walk(directory)) {
                paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static KvTierCache open(String uri, int chains, int blocks, int blockBytes, Path disk) {
        long budget = (long) chains * blocks * blockBytes * 2;
        RemoteStoreConfig remote = RemoteStoreConfig.builder().store(URI.create(uri)).key(KEY)
                .namespace("share-check").storeSetting("commandTimeoutMs", "10000").build();
        return KvTierCache.open(KvTierConfig.builder().backend(Backend.HOST).gpuBudgetBytes(budget)
                .cpuBudgetBytes(budget).pageSizeBytes(blockBytes).diskDirectory(disk)
                .transferTimeout(Duration.ofSeconds(10)).remote(remote).build());
    }

    private static List<BlockHash> chain(int tokensPerBlock, int seed, int blocks) {
        int[] tokens = new int[blocks * tokensPerBlock];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = seed * 1_000_003 + i;
        }
        return new BlockHasher().chain(BlockHasher.namespaceRoot("share-check"), tokens, tokensPerBlock);
    }

    private static void rankA(String uri, int chains, int blocks, int blockBytes, int tokensPerBlock, Path disk)
            throws InterruptedException {
        BlockLayout layout = BlockLayout.of(tokensPerBlock, blockBytes);
        try (KvTierCache cache = open(uri, chains, blocks, blockBytes, disk)) {
            PrefixBlockCache prefix = cache.prefixBlocks(layout);
            Random random = new Random(1);
            byte[] bytes = new byte[blocks * blockBytes];
            for (int c = 0; c < chains; c++) {
                random.nextBytes(bytes);
                prefix.storeBlocks(BlockHash.ROOT, chain(tokensPerBlock, c, blocks), MemorySegment.ofArray(bytes));
            }
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            while (cache.stats().remote().blocksWritten() < (long) chains * blocks && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            RemoteStoreStats stats = cache.stats().remote();
            System.out.printf("rank A: stored %d chains of %d blocks of %d bytes; %d written to Redis, %d dropped%n",
                    chains, blocks, blockBytes, stats.blocksWritten(), stats.writesDropped());
        }
    }

    private static void rankB(String uri, int chains, int blocks, int blockBytes, int tokensPerBlock,
                              double prefillRate, Path disk) {
        BlockLayout layout = BlockLayout.of(tokensPerBlock, blockBytes);
        try (KvTierCache cache = open(uri, chains, blocks, blockBytes, disk)) {
            PrefixBlockCache prefix = cache.prefixBlocks(layout);
            long references = 0;
            long fromA = 0;
            long[] residentNanos = new long[chains];
            for (int c = 0; c < chains; c++) {
                List<BlockHash> hashes = chain(tokensPerBlock, c, blocks);
                PrefixLookup lookup = prefix.lookupPrefix(hashes);
                references += blocks;
                fromA += lookup.remoteBlocks();
                long start = System.nanoTime();
                try (PrefixPin pin = prefix.ensurePrefixResident(hashes, Tier.CPU)) {
                    residentNanos[c] = System.nanoTime() - start;
                    if (pin.size() != blocks) {
                        System.out.printf("rank B: chain %d: %d of %d blocks resident%n", c, pin.size(), blocks);
                    }
                }
            }
            Arrays.sort(residentNanos);
            double recomputeMs = blocks * tokensPerBlock / prefillRate * 1e3;
            double medianMs = residentNanos[chains / 2] / 1e6;
            double p99Ms = residentNanos[Math.min(chains - 1, (int) Math.ceil(chains * 0.99) - 1)] / 1e6;
            RemoteStoreStats stats = cache.stats().remote();
            System.out.printf("rank B: %d of %d block references served from rank A's blocks (%.1f%%); fetched %d"
                            + " blocks, %d bytes, %d rejections, %d failures%n", fromA, references,
                    100.0 * fromA / references, stats.blocksFetched(), stats.bytesFetched(), stats.rejections(),
                    stats.failures());
            System.out.printf("rank B: a %d-block prefix (%d tokens, %d KiB) resident from Redis: median %.2f ms, p99"
                            + " %.2f ms; recomputing it at %.0f tokens/s: %.1f ms (ratio %.3f)%n", blocks,
                    blocks * tokensPerBlock, (long) blocks * blockBytes >> 10, medianMs, p99Ms, prefillRate,
                    recomputeMs, medianMs / recomputeMs);
            System.out.printf("rank B: cost gate estimates: fetch %.2f ms, recompute %.2f ms (per the last look-up)%n",
                    stats.estimatedFetchNanos() / 1e6, stats.estimatedRecomputeNanos() / 1e6);
        }
    }
}
