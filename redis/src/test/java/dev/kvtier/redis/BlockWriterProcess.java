package dev.kvtier.redis;

import dev.kvtier.Backend;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.RemoteStoreConfig;
import dev.kvtier.RemoteStoreStats;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockLayout;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A prefix cache in its own JVM that writes the same blocks as the test's JVM, at the same moment, through the same
 * Redis, for {@link RedisFaultTest}: one writer of two. Both writers use the same namespace, deployment key, layout
 * and block hashes ({@link #chain}); the bytes of a block differ between them ({@link #content}), as two ranks'
 * computations of one prefix may (the block hash names the tokens, not the bytes), so both values are valid and each
 * tells its writer apart.
 *
 * <p>Arguments: the Redis URI, a directory for the cache's DISK tier, and this writer's number. Protocol, one line
 * each: it prints {@code ready} once its cache is open; on {@code go <round> <epoch nanos>} it waits until that instant
 * (the wall clock both JVMs share), stores round {@code round}'s chain, waits until its write-through is done and
 * prints {@code done <round> <written> <dropped> <failures> <start> <end>} (its remote counters, and the wall-clock
 * nanos of the store call and of the write-through seen done); on {@code quit} or the end of its input it closes the
 * cache and exits. Its logs go to its standard error.
 */
public final class BlockWriterProcess {
    /** Blocks of each round's chain. */
    static final int BLOCKS = 16;
    /** 64 KiB blocks: a round is a 1 MiB pipeline per writer, long enough for the two to overlap at the server. */
    static final int BLOCK_BYTES = 64 << 10;
    static final BlockLayout LAYOUT = BlockLayout.of(RedisPrefixCacheTest.LAYOUT.tokensPerBlock(), BLOCK_BYTES);
    static final String NAMESPACE = "two-writers";
    static final byte[] KEY = "a deployment key of 32 bytes....".getBytes(StandardCharsets.UTF_8);

    private BlockWriterProcess() {
    }

    /**
     * Runs one writer; see the class comment.
     *
     * @param args the Redis URI, the DISK tier's directory, this writer's number
     * @throws Exception if the cache cannot be opened or its input cannot be read: the process exits with a failure
     */
    public static void main(String[] args) throws Exception {
        String uri = args[0];
        Path disk = Path.of(args[1]);
        int writer = Integer.parseInt(args[2]);
        try (KvTierCache cache = openWriter(uri, disk)) {
            System.out.println("ready");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null && !line.equals("quit"); line = in.readLine()) {
                String[] go = line.split(" ");
                int round = Integer.parseInt(go[1]);
                long[] window = writeRound(cache, round, writer, Long.parseLong(go[2]));
                RemoteStoreStats stats = cache.stats().remote();
                System.out.println("done " + round + " " + stats.blocksWritten() + " " + stats.writesDropped() + " "
                        + stats.failures() + " " + window[0] + " " + window[1]);
            }
        }
    }

    /** A cache that writes every block it stores through to the Redis at {@code uri}. */
    static KvTierCache openWriter(String uri, Path disk) {
        RemoteStoreConfig remote = RemoteStoreConfig.builder().store(URI.create(uri))
                .storeSetting("commandTimeoutMs", "5000").key(KEY).namespace(NAMESPACE)
                .writeThrough(RemoteStoreConfig.WriteThrough.ON_STORE).build();
        return KvTierCache.open(KvTierConfig.builder().backend(Backend.HOST).gpuBudgetBytes(4L * BLOCKS * BLOCK_BYTES)
                .cpuBudgetBytes(64L * BLOCKS * BLOCK_BYTES).pageSizeBytes(BLOCK_BYTES)
                .diskExtentBytes(16L * BLOCK_BYTES).diskDirectory(disk).transferTimeout(Duration.ofSeconds(5))
                .remote(remote).build());
    }

    /**
     * Waits until {@code startEpochNanos}, stores round {@code round}'s chain with writer {@code writer}'s bytes, and
     * waits (at most 10 s) until the write-through of every round so far is written or dropped.
     *
     * @return the wall-clock nanos of the store call and of the write-through seen done
     */
    static long[] writeRound(KvTierCache cache, int round, int writer, long startEpochNanos) {
        List<BlockHash> hashes = chain(round);
        MemorySegment bytes = contents(hashes, writer);
        // Parked until 2 ms before the instant, then spinning: both JVMs leave the wait within microseconds of it.
        for (long left = startEpochNanos - epochNanos(); left > 0; left = startEpochNanos - epochNanos()) {
            if (left > 2_000_000) {
                LockSupport.parkNanos(left - 2_000_000);
            } else {
                Thread.onSpinWait();
            }
        }
        long start = epochNanos();
        cache.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, hashes, bytes);
        long expected = (long) (round + 1) * BLOCKS;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            RemoteStoreStats stats = cache.stats().remote();
            if (stats.blocksWritten() + stats.writesDropped() >= expected || System.nanoTime() > deadline) {
                return new long[] {start, epochNanos()};
            }
            LockSupport.parkNanos(100_000); // not spinning: the writer threads and Redis share these cores
        }
    }

    /** The wall clock in nanoseconds since the epoch (microsecond resolution here): one clock for both JVMs. */
    static long epochNanos() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /** Round {@code round}'s chain: the same hashes in both writers (16 tokens a block, as {@link #LAYOUT}). */
    static List<BlockHash> chain(int round) {
        return RedisPrefixCacheTest.chain(1000 + round, BLOCKS);
    }

    /** Writer {@code writer}'s bytes of block {@code hash}: different for each writer. */
    static byte[] content(BlockHash hash, int writer) {
        byte[] bytes = new byte[BLOCK_BYTES];
        new Random((hash.high() ^ hash.low()) * 31 + writer).nextBytes(bytes);
        return bytes;
    }

    private static MemorySegment contents(List<BlockHash> hashes, int writer) {
        byte[] all = new byte[hashes.size() * BLOCK_BYTES];
        for (int i = 0; i < hashes.size(); i++) {
            System.arraycopy(content(hashes.get(i), writer), 0, all, i * BLOCK_BYTES, BLOCK_BYTES);
        }
        return MemorySegment.ofArray(all);
    }
}
