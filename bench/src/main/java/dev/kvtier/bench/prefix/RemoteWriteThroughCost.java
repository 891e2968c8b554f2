package dev.kvtier.bench.prefix;

import dev.kvtier.Backend;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.RemoteStoreConfig;
import dev.kvtier.RemoteStoreStats;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.redis.LocalRedisServer;
import dev.kvtier.remote.InProcessRemoteBlockStore;
import dev.kvtier.store.Tier;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What write-through to a remote block store costs on the store path, and the cost gate's estimates on the
 * in-process store. Three caches on the host backend, one without a remote store (the baseline), one writing through
 * to an {@link InProcessRemoteBlockStore} and one to a {@code redis-server} this command starts on loopback (by PID,
 * opened by URI as a deployment does), on every store, store the same number of fresh blocks per round, interleaved
 * (A B C A B C ...), and the medians are reported: CPU time of the storing thread per block (what the caller pays: the
 * copy out at enqueue), and CPU time of all this JVM's threads per block (the writer's sealing, CRC32C and HMAC-SHA256,
 * the in-process store's copy, Lettuce's encoding and I/O included), with the ratio to the baseline; and the
 * {@code redis-server} process's own CPU per block over all measured rounds (read from {@code /proc}, in 10 ms
 * ticks). Then a fourth cache fetches a chain of {@code blocks} blocks from the in-process store, and the stats'
 * moving averages and the gate's estimate are printed beside the measured time of that restore.
 *
 * <p>Usage: {@code RemoteWriteThroughCost [blockBytes=65536] [blocks=32] [rounds=15]}
 */
public final class RemoteWriteThroughCost {
    private static final byte[] KEY = "bench key, not a secret, 32 byte".getBytes(StandardCharsets.UTF_8);

    private RemoteWriteThroughCost() {
    }

    public static void main(String[] args) throws Exception {
        int blockBytes = Integer.parseInt(args.length > 0 ? args[0] : "65536");
        int blocks = Integer.parseInt(args.length > 1 ? args[1] : "32");
        int rounds = Integer.parseInt(args.length > 2 ? args[2] : "15");
        BlockLayout layout = BlockLayout.of(16, blockBytes);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        String[] names = {"no remote", "in-process store", "Redis store"};
        long[][] callerNanos = new long[names.length][rounds];
        long[][] processNanos = new long[names.length][rounds];
        Path redisDirectory = Files.createTempDirectory("kvtier-write-through-cost");
        try (LocalRedisServer server = LocalRedisServer.start(redisDirectory, "");
             InProcessRemoteBlockStore store = new InProcessRemoteBlockStore();
             KvTierCache plain = KvTierCache.open(config(layout, blocks, null));
             KvTierCache shared = KvTierCache.open(config(layout, blocks, remote(blocks, layout).store(store)));
             KvTierCache redis = KvTierCache.open(config(layout, blocks,
                     remote(blocks, layout).store(URI.create(server.uri()))));
             Arena arena = Arena.ofConfined()) {
            MemorySegment bytes = arena.allocate((long) blocks * blockBytes);
            for (long i = 0; i < bytes.byteSize(); i += 8) {
                bytes.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
            }
            KvTierCache[] caches = {plain, shared, redis};
            long chainId = 1;
            long redisTicks = 0;
            for (int round = -3; round < rounds; round++) { // three warm-up rounds
                if (round == 0) {
                    redisTicks = cpuTicks(server.pid());
                }
                for (int c = 0; c < caches.length; c++) {
                    PrefixBlockCache prefix = caches[c].prefixBlocks(layout);
                    List<BlockHash> hashes = chain(chainId++, blocks);
                    long written = caches[c].stats().remote().blocksWritten();
                    long process0 = allThreadsCpu(threads);
                    long caller0 = threads.getCurrentThreadCpuTime();
                    prefix.storeBlocks(BlockHash.ROOT, hashes, bytes, Tier.CPU);
                    long caller = threads.getCurrentThreadCpuTime() - caller0;
                    if (c > 0) { // the writer's work belongs to the store path too: wait for it
                        while (caches[c].stats().remote().blocksWritten() + caches[c].stats().remote().writesDropped()
                                < written + blocks) {
                            Thread.sleep(0, 100_000); // not a spin: this thread's CPU is counted too
                        }
                    }
                    long process = allThreadsCpu(threads) - process0;
                    if (round >= 0) {
                        callerNanos[c][round] = caller / blocks;
                        processNanos[c][round] = process / blocks;
                    }
                    for (int i = hashes.size() - 1; i >= 0; i--) {
                        prefix.removeBlock(hashes.get(i));
                    }
                }
            }
            redisTicks = cpuTicks(server.pid()) - redisTicks;
            RemoteStoreStats written = shared.stats().remote();
            RemoteStoreStats writtenToRedis = redis.stats().remote();
            System.out.printf(Locale.ROOT, "store path, %d blocks of %d bytes per call, medians of %d interleaved rounds"
                    + " (in-process store: written %d, dropped %d; Redis %s: written %d, dropped %d)%n", blocks,
                    blockBytes, rounds, written.blocksWritten(), written.writesDropped(), server.uri(),
                    writtenToRedis.blocksWritten(), writtenToRedis.writesDropped());
            for (int c = 1; c < caches.length; c++) {
                System.out.printf(Locale.ROOT, "  caller CPU per block: %s %,d ns, write-through to the %s %,d ns,"
                        + " ratio %.2f%n", names[0], median(callerNanos[0]), names[c], median(callerNanos[c]),
                        (double) median(callerNanos[c]) / median(callerNanos[0]));
            }
            for (int c = 1; c < caches.length; c++) {
                System.out.printf(Locale.ROOT, "  all threads' CPU per block: %s %,d ns, write-through to the %s %,d ns,"
                        + " ratio %.2f%n", names[0], median(processNanos[0]), names[c], median(processNanos[c]),
                        (double) median(processNanos[c]) / median(processNanos[0]));
            }
            System.out.printf(Locale.ROOT, "  redis-server's own CPU per block written: %,d ns (%d ticks of 10 ms over"
                    + " %d blocks)%n", redisTicks * 10_000_000L / Math.max(1, (long) rounds * blocks), redisTicks,
                    (long) rounds * blocks);

            // The gate's estimates: a third cache fetches a chain the shared one wrote.
            List<BlockHash> hashes = chain(chainId++, blocks);
            shared.prefixBlocks(layout).storeBlocks(BlockHash.ROOT, hashes, bytes, Tier.CPU);
            while (shared.stats().remote().blocksWritten() < written.blocksWritten() + blocks) {
                Thread.onSpinWait();
            }
            long[] fetchNanos = new long[rounds];
            long[] estimateNanos = new long[rounds];
            RemoteStoreStats estimates = null;
            try (KvTierCache reader = KvTierCache.open(config(layout, blocks, remote(blocks, layout).store(store)))) {
                PrefixBlockCache prefix = reader.prefixBlocks(layout);
                for (int round = -3; round < rounds; round++) { // three warm-up rounds (and first measurements)
                    prefix.lookupPrefix(hashes); // a round trip measured, and the gate's estimate for the chain
                    long estimate = reader.stats().remote().estimatedFetchNanos();
                    long t0 = System.nanoTime();
                    try (PrefixPin pin = prefix.ensurePrefixResident(hashes, Tier.CPU)) {
                        if (pin.size() != blocks) {
                            throw new IllegalStateException("fetched " + pin.size() + " of " + blocks + " blocks");
                        }
                    }
                    long took = System.nanoTime() - t0;
                    for (int i = hashes.size() - 1; i >= 0; i--) {
                        prefix.removeBlock(hashes.get(i));
                    }
                    if (round >= 0) {
                        fetchNanos[round] = took;
                        estimateNanos[round] = estimate;
                    }
                }
                estimates = reader.stats().remote();
            }
            System.out.printf(Locale.ROOT, "cost gate on the in-process store, a chain of %d blocks of %d bytes,"
                    + " medians of %d rounds:%n", blocks, blockBytes, rounds);
            System.out.printf(Locale.ROOT, "  moving averages at the end: round trip %,d ns, bandwidth %,d MB/s%n",
                    estimates.roundTripNanos(), estimates.bytesPerSecond() / 1_000_000);
            System.out.printf(Locale.ROOT, "  estimated fetch %,d ns; measured restore (fetch, check, store locally,"
                    + " pin) %,d ns; estimate / measured %.2f%n", median(estimateNanos), median(fetchNanos),
                    (double) median(estimateNanos) / median(fetchNanos));
        } finally {
            try (var paths = Files.walk(redisDirectory)) {
                paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** The remote store's settings but the store itself: a queue that holds two calls' blocks. */
    private static RemoteStoreConfig.Builder remote(int blocks, BlockLayout layout) {
        return RemoteStoreConfig.builder().key(KEY).namespace("bench").maxBytesInFlight(Math.max(
                RemoteStoreConfig.DEFAULT_MAX_BYTES_IN_FLIGHT, 2L * blocks * (layout.bytesPerBlock() + 4096)));
    }

    private static KvTierConfig config(BlockLayout layout, int blocks, RemoteStoreConfig.Builder remote) {
        long bytes = layout.bytesPerBlock();
        KvTierConfig.Builder builder = KvTierConfig.builder().backend(Backend.HOST)
                .pageSizeBytes((int) Math.min(bytes, 64 << 10)).gpuBudgetBytes(4 * blocks * bytes)
                .cpuBudgetBytes(4 * blocks * bytes);
        if (remote != null) {
            builder.remote(remote.build());
        }
        return builder.build();
    }

    /** User and system CPU of process {@code pid} in clock ticks ({@code /proc/pid/stat} fields 14 and 15). */
    private static long cpuTicks(long pid) throws java.io.IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }

    private static List<BlockHash> chain(long id, int blocks) {
        List<BlockHash> hashes = new ArrayList<>(blocks);
        for (int i = 0; i < blocks; i++) {
            hashes.add(new BlockHash(0x7e1e + id, i + 1));
        }
        return hashes;
    }

    /**
     * CPU time of every live thread, in nanoseconds (the process's own counter ticks in 10 ms on Linux, too coarse for
     * a round; kvtier's threads live as long as the caches, so none is lost between two readings).
     */
    private static long allThreadsCpu(ThreadMXBean threads) {
        long sum = 0;
        for (long id : threads.getAllThreadIds()) {
            long cpu = threads.getThreadCpuTime(id);
            sum += Math.max(0, cpu);
        }
        return sum;
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
