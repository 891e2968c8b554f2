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
import dev.kvtier.remote.InProcessRemoteBlockStore;
import dev.kvtier.store.Tier;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What write-through to a remote block store costs on the store path, and the cost gate's estimates on the
 * in-process store. Two caches on the host backend, one without a remote store (the baseline) and one writing
 * through to an {@link InProcessRemoteBlockStore} on every store, store the same number of fresh blocks per round,
 * interleaved (A B A B ...), and the medians are reported: CPU time of the storing thread per block (what the caller
 * pays: the copy out at enqueue), and CPU time of all threads per block (the writer's sealing, CRC32C and
 * HMAC-SHA256, and the in-process store's copy included), with the ratio to the baseline. Then a third cache fetches
 * a chain of {@code blocks} blocks from the store, and the stats' moving averages and the gate's estimate are printed
 * beside the measured time of that restore.
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
        long[][] callerNanos = new long[2][rounds];
        long[][] processNanos = new long[2][rounds];
        try (InProcessRemoteBlockStore store = new InProcessRemoteBlockStore();
             KvTierCache plain = KvTierCache.open(config(layout, blocks, null));
             KvTierCache shared = KvTierCache.open(config(layout, blocks, store));
             Arena arena = Arena.ofConfined()) {
            MemorySegment bytes = arena.allocate((long) blocks * blockBytes);
            for (long i = 0; i < bytes.byteSize(); i += 8) {
                bytes.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
            }
            KvTierCache[] caches = {plain, shared};
            long chainId = 1;
            for (int round = -3; round < rounds; round++) { // three warm-up rounds
                for (int c = 0; c < 2; c++) {
                    PrefixBlockCache prefix = caches[c].prefixBlocks(layout);
                    List<BlockHash> hashes = chain(chainId++, blocks);
                    long written = caches[c].stats().remote().blocksWritten();
                    long process0 = allThreadsCpu(threads);
                    long caller0 = threads.getCurrentThreadCpuTime();
                    prefix.storeBlocks(BlockHash.ROOT, hashes, bytes, Tier.CPU);
                    long caller = threads.getCurrentThreadCpuTime() - caller0;
                    if (c == 1) { // the writer's work belongs to the store path too: wait for it
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
            RemoteStoreStats written = shared.stats().remote();
            System.out.printf(Locale.ROOT, "store path, %d blocks of %d bytes per call, medians of %d interleaved rounds"
                    + " (written %d, dropped %d)%n", blocks, blockBytes, rounds, written.blocksWritten(),
                    written.writesDropped());
            System.out.printf(Locale.ROOT, "  caller CPU per block:  no remote %,d ns, write-through %,d ns, ratio %.2f%n",
                    median(callerNanos[0]), median(callerNanos[1]),
                    (double) median(callerNanos[1]) / median(callerNanos[0]));
            System.out.printf(Locale.ROOT, "  all threads' CPU per block: no remote %,d ns, write-through %,d ns, ratio %.2f%n",
                    median(processNanos[0]), median(processNanos[1]),
                    (double) median(processNanos[1]) / median(processNanos[0]));

            // The gate's estimates: a third cache fetches a chain the shared one wrote.
            List<BlockHash> hashes = chain(chainId++, blocks);
            shared.prefixBlocks(layout).storeBlocks(BlockHash.ROOT, hashes, bytes, Tier.CPU);
            while (shared.stats().remote().blocksWritten() < written.blocksWritten() + blocks) {
                Thread.onSpinWait();
            }
            long[] fetchNanos = new long[rounds];
            long[] estimateNanos = new long[rounds];
            RemoteStoreStats estimates = null;
            try (KvTierCache reader = KvTierCache.open(config(layout, blocks, store))) {
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
        }
    }

    private static KvTierConfig config(BlockLayout layout, int blocks, InProcessRemoteBlockStore store) {
        long bytes = layout.bytesPerBlock();
        KvTierConfig.Builder builder = KvTierConfig.builder().backend(Backend.HOST)
                .pageSizeBytes((int) Math.min(bytes, 64 << 10)).gpuBudgetBytes(4 * blocks * bytes)
                .cpuBudgetBytes(4 * blocks * bytes);
        if (store != null) {
            builder.remote(RemoteStoreConfig.builder().store(store).key(KEY).namespace("bench")
                    .maxBytesInFlight(Math.max(RemoteStoreConfig.DEFAULT_MAX_BYTES_IN_FLIGHT, 2L * blocks * (bytes + 4096)))
                    .build());
        }
        return builder.build();
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
