package dev.kvtier.bench.prefix;

import dev.kvtier.Backend;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.prefix.PrefixRestore;
import dev.kvtier.store.Tier;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Per-layer against whole-prefix restore latency: a prefix of {@code blocks} blocks on CPU, each of
 * {@code layers} layers (K and V regions of {@code regionBytes}, layer-major), is made resident on the GPU
 * (1) whole, with one batched transfer ({@code ensurePrefixResident}), and (2) layer by layer
 * ({@code ensurePrefixResidentByLayer}: one batched transfer per layer), timing when layer 0 is in place and
 * when all are. The two are interleaved (A B A B ...) and the medians reported, as every figure on this busy
 * machine must be. Between runs the blocks go back to CPU (tail first).
 *
 * <p>Usage: {@code LayeredRestoreLatency [backend=host|cuda] [blocks=64] [layers=32] [regionBytes=2048] [rounds=15]}
 */
public final class LayeredRestoreLatency {
    private LayeredRestoreLatency() {
    }

    public static void main(String[] args) throws Exception {
        Backend backend = Backend.valueOf(arg(args, 0, "host").toUpperCase(Locale.ROOT));
        int blocks = Integer.parseInt(arg(args, 1, "64"));
        int layers = Integer.parseInt(arg(args, 2, "32"));
        int regionBytes = Integer.parseInt(arg(args, 3, "2048"));
        int rounds = Integer.parseInt(arg(args, 4, "15"));
        BlockLayout layout = BlockLayout.layered(16, layers, regionBytes, BlockLayout.LayerOrder.LAYER_MAJOR);
        long blockBytes = layout.bytesPerBlock();
        Path disk = Files.createTempDirectory("kvtier-layered-");
        KvTierConfig config = KvTierConfig.builder().backend(backend).pageSizeBytes((int) Math.min(blockBytes, 64 << 10))
                .gpuBudgetBytes(2 * blocks * blockBytes).cpuBudgetBytes(2 * blocks * blockBytes).diskDirectory(disk).build();
        List<BlockHash> hashes = new ArrayList<>();
        for (int i = 0; i < blocks; i++) {
            hashes.add(new BlockHash(0x1a7e, i + 1));
        }
        long[] whole = new long[rounds];
        long[] firstLayer = new long[rounds];
        long[] allLayers = new long[rounds];
        long[] firstStamped = new long[rounds];
        long[] allStamped = new long[rounds];
        try (KvTierCache cache = KvTierCache.open(config); Arena arena = Arena.ofConfined()) {
            PrefixBlockCache prefix = cache.prefixBlocks(layout);
            MemorySegment bytes = arena.allocate(blocks * blockBytes);
            for (long i = 0; i < bytes.byteSize(); i += 8) {
                bytes.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
            }
            prefix.storeBlocks(BlockHash.ROOT, hashes, bytes, Tier.CPU);
            for (int round = -2; round < rounds; round++) { // two warm-up rounds
                long t0 = System.nanoTime();
                try (PrefixPin pin = prefix.ensurePrefixResident(hashes, Tier.GPU)) {
                    require(pin.size() == blocks, "whole restore pinned " + pin.size());
                }
                long wholeNanos = System.nanoTime() - t0;
                backToCpu(cache, hashes);
                long t1 = System.nanoTime();
                PrefixRestore restore = prefix.ensurePrefixResidentByLayer(hashes, Tier.GPU);
                // Stamped by a stage on the thread that completes the future (not counting the caller's wake-up;
                // a stage attached after completion stamps later, so this never flatters the layered path).
                java.util.concurrent.atomic.AtomicLong firstAt = new java.util.concurrent.atomic.AtomicLong();
                java.util.concurrent.atomic.AtomicLong allAt = new java.util.concurrent.atomic.AtomicLong();
                restore.layer(0).thenRun(() -> firstAt.set(System.nanoTime()));
                restore.pinned().thenRun(() -> allAt.set(System.nanoTime()));
                restore.layer(0).get(60, TimeUnit.SECONDS);
                long firstNanos = System.nanoTime() - t1;
                try (PrefixPin pin = restore.pinned().get(60, TimeUnit.SECONDS)) {
                    require(pin.size() == blocks, "layered restore pinned " + pin.size());
                }
                long allNanos = System.nanoTime() - t1;
                backToCpu(cache, hashes);
                if (round >= 0) {
                    whole[round] = wholeNanos;
                    firstLayer[round] = firstNanos;
                    allLayers[round] = allNanos;
                    firstStamped[round] = firstAt.get() - t1;
                    allStamped[round] = allAt.get() - t1;
                }
            }
        }
        Files.deleteIfExists(disk); // the cache deleted its extents on close
        double w = median(whole) / 1e3;
        double f = median(firstLayer) / 1e3;
        double a = median(allLayers) / 1e3;
        System.out.printf(Locale.ROOT, "backend %s: prefix of %d blocks x %d layers (block %d B, %.1f MiB), CPU -> GPU, "
                        + "median of %d interleaved rounds%n", backend, blocks, layers, blockBytes,
                blocks * blockBytes / 1048576.0, rounds);
        System.out.printf(Locale.ROOT, "  whole prefix, one batch (ensurePrefixResident):   %10.1f us%n", w);
        double fs = median(firstStamped) / 1e3;
        double as = median(allStamped) / 1e3;
        System.out.printf(Locale.ROOT, "  layered: layer 0 in place (stamped at completion): %10.1f us  (%.3f of whole)%n", fs, fs / w);
        System.out.printf(Locale.ROOT, "  layered: layer 0, the caller woken (get returns):  %10.1f us  (%.3f of whole)%n", f, f / w);
        System.out.printf(Locale.ROOT, "  layered: all layers pinned (stamped):              %10.1f us  (%.3f of whole)%n", as, as / w);
        System.out.printf(Locale.ROOT, "  layered: all layers pinned, the caller woken:      %10.1f us  (%.3f of whole)%n", a, a / w);
    }

    /** Demotes every block to CPU, tail first (a parent may not leave GPU before its child). */
    private static void backToCpu(KvTierCache cache, List<BlockHash> hashes) {
        for (int i = hashes.size() - 1; i >= 0; i--) {
            cache.demote(PrefixBlockCache.keyOf(hashes.get(i)), Tier.CPU);
        }
    }

    private static double median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted.length % 2 == 1 ? sorted[sorted.length / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2.0;
    }

    private static String arg(String[] args, int index, String fallback) {
        return args.length > index ? args[index] : fallback;
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new IllegalStateException(message);
        }
    }
}
