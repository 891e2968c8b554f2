package dev.kvtier.bench.persist;

import dev.kvtier.Backend;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Locale;

/**
 * DISK puts per second of a volatile cache, with only the API that predates persistence, so the same
 * class runs against an older build of the core (the A/B of the non-persistent path: run it alternately
 * with each build's classes on the class path). Warm extents (a first pass put and removed), then
 * {@code passes} timed passes; prints each pass's rate.
 * Usage: {@code VolatileDiskPuts DIR COUNT SIZE PASSES} (DIR must not exist or be empty; a fresh temp dir is fine).
 */
public final class VolatileDiskPuts {
    private VolatileDiskPuts() {
    }

    public static void main(String[] args) {
        Path directory = Path.of(args[0]);
        int count = Integer.parseInt(args[1]);
        int size = Integer.parseInt(args[2]);
        int passes = Integer.parseInt(args[3]);
        KvTierConfig config = KvTierConfig.builder().backend(Backend.HOST).gpuBudgetBytes(1 << 20).cpuBudgetBytes(1 << 20)
                .diskDirectory(directory).build();
        try (Arena arena = Arena.ofConfined(); KvTierCache cache = KvTierCache.open(config)) {
            MemorySegment bytes = arena.allocate(size);
            for (int i = 0; i < size; i += 8) {
                bytes.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
            }
            StringBuilder rates = new StringBuilder();
            for (int pass = -1; pass < passes; pass++) {
                long start = System.nanoTime();
                for (int i = 0; i < count; i++) {
                    cache.put("p" + pass + "-" + i, PositionRange.of(i, i + 1), bytes, Tier.DISK);
                }
                double rate = count / ((System.nanoTime() - start) / 1e9);
                for (int i = 0; i < count; i++) {
                    cache.remove("p" + pass + "-" + i);
                }
                if (pass >= 0) { // pass -1 made and zero-filled the extents
                    rates.append(String.format(Locale.ROOT, "%.0f ", rate));
                }
            }
            System.out.println("puts/s " + rates.toString().trim());
        }
    }
}
