package dev.kvtier.bench.persist;

import dev.kvtier.Backend;
import dev.kvtier.DiskPersistence;
import dev.kvtier.DiskPersistence.FsyncPolicy;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.RecoveryReport;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The persistent DISK tier's two costs (issue 10), each beside its baseline in the same run:
 * <ul>
 *   <li>{@code recovery N...}: open time of a directory holding N persisted segments (4 KiB each), read
 *       from the {@link RecoveryReport} and timed around {@code open}, the median of 3 opens each, lazily
 *       verified (the default), then 3 more with {@code verify(EAGER)} (every byte read and checked; skipped with
 *       {@code -Dbench.recovery.eager=false}, as reading every byte dominates at 10^6 segments); and the
 *       heap of the lazy opens: the peak of the heap pools during the open (what {@code -Xmx} must allow, give or
 *       take the collector's slack; garbage not yet collected counts) and what stays reachable once it returned
 *       (after a full GC, minus the heap before the open);</li>
 *   <li>{@code puts K SIZE ROUNDS}: DISK puts per second of K segments of SIZE bytes into warm extents,
 *       for the volatile cache and each fsync policy, interleaved round by round (A B C D A B C D ...),
 *       the median per mode and its ratio to the volatile one.</li>
 * </ul>
 * Usage: {@code java -cp ... dev.kvtier.bench.persist.PersistenceBench DIR recovery 1000 10000 100000}
 * or {@code ... DIR puts 1000 65536 3}. Writes into DIR (deleted before each case).
 */
public final class PersistenceBench {
    private PersistenceBench() {
    }

    public static void main(String[] args) throws IOException {
        Path root = Path.of(args[0]);
        switch (args[1]) {
            case "recovery" -> {
                for (int i = 2; i < args.length; i++) {
                    recovery(root.resolve("recovery"), Integer.parseInt(args[i]));
                }
            }
            case "puts" -> puts(root.resolve("puts"), Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                    Integer.parseInt(args[4]));
            default -> throw new IllegalArgumentException("mode must be recovery or puts, was " + args[1]);
        }
    }

    private static KvTierConfig config(Path directory, DiskPersistence persistence, int page) {
        KvTierConfig.Builder builder = KvTierConfig.builder().backend(Backend.HOST).gpuBudgetBytes(1 << 20)
                .cpuBudgetBytes(1 << 20).pageSizeBytes(page).diskDirectory(directory);
        return (persistence == null ? builder : builder.persistence(persistence)).build();
    }

    private static void recovery(Path directory, int segments) throws IOException {
        delete(directory);
        int size = 4096;
        DiskPersistence persistence = DiskPersistence.of("bench/recovery");
        try (Arena arena = Arena.ofConfined();
             KvTierCache cache = KvTierCache.open(config(directory, persistence, size))) {
            MemorySegment bytes = arena.allocate(size);
            for (int i = 0; i < segments; i++) {
                bytes.set(java.lang.foreign.ValueLayout.JAVA_INT, 0, i);
                cache.put("segment-" + i, PositionRange.of(16L * i, 16L * i + 16), bytes, Tier.DISK);
            }
        }
        long[] wall = new long[3];
        long[] reported = new long[3];
        long[] cpu = new long[3];
        long[] eager = new long[3];
        long[] peakHeap = new long[3];
        long[] retainedHeap = new long[3];
        DiskPersistence eagerly = persistence.verify(DiskPersistence.Verification.EAGER);
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        for (int round = 0; round < 3; round++) { // lazy and eager opens interleaved: both see the same machine
            long heapBefore = heapAfterGc();
            java.lang.management.ManagementFactory.getMemoryPoolMXBeans().forEach(
                    java.lang.management.MemoryPoolMXBean::resetPeakUsage);
            long start = System.nanoTime();
            long startCpu = threads.getCurrentThreadCpuTime();
            try (KvTierCache cache = KvTierCache.open(config(directory, persistence, size))) {
                wall[round] = System.nanoTime() - start;
                cpu[round] = threads.getCurrentThreadCpuTime() - startCpu;
                peakHeap[round] = java.lang.management.ManagementFactory.getMemoryPoolMXBeans().stream()
                        .filter(pool -> pool.getType() == java.lang.management.MemoryType.HEAP)
                        .mapToLong(pool -> pool.getPeakUsage().getUsed()).sum();
                retainedHeap[round] = heapAfterGc() - heapBefore;
                RecoveryReport report = cache.recovery().orElseThrow();
                reported[round] = report.duration().toNanos();
                if (report.recovered() != segments) {
                    throw new AssertionError("recovered " + report.recovered() + " of " + segments);
                }
            }
            if (!Boolean.parseBoolean(System.getProperty("bench.recovery.eager", "true"))) {
                continue;
            }
            start = System.nanoTime();
            try (KvTierCache cache = KvTierCache.open(config(directory, eagerly, size))) { // every byte read and checked
                eager[round] = System.nanoTime() - start;
                if (cache.recovery().orElseThrow().recovered() != segments) {
                    throw new AssertionError("eager verification dropped segments");
                }
            }
        }
        Arrays.sort(wall);
        Arrays.sort(reported);
        Arrays.sort(cpu);
        Arrays.sort(eager);
        Arrays.sort(peakHeap);
        Arrays.sort(retainedHeap);
        System.out.printf(Locale.ROOT, "recovery %d segments: open %.1f ms (median of 3: %s), of which recovery %.1f ms;"
                        + " CPU time of the opening thread %.1f ms (%s); verify(EAGER) open %.1f ms (%s); heap peak during"
                        + " the open %.0f MiB (%s), retained after it %.0f MiB (%s); journal %d bytes; load average %.2f%n",
                segments, wall[1] / 1e6, ms(wall), reported[1] / 1e6, cpu[1] / 1e6, ms(cpu), eager[1] / 1e6, ms(eager),
                peakHeap[1] / MIB, mib(peakHeap), retainedHeap[1] / MIB, mib(retainedHeap),
                Files.size(directory.resolve("kvtier.journal")),
                java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        delete(directory);
    }

    private static final double MIB = 1 << 20;

    /** Heap in use after a full collection (two, so what the first freed is gone from the pools too). */
    private static long heapAfterGc() {
        System.gc();
        System.gc();
        return java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static String mib(long[] bytes) {
        StringBuilder s = new StringBuilder();
        for (long b : bytes) {
            s.append(s.isEmpty() ? "" : " ").append(String.format(Locale.ROOT, "%.0f", b / MIB));
        }
        return s.toString();
    }

    private static String ms(long[] nanos) {
        StringBuilder s = new StringBuilder();
        for (long n : nanos) {
            s.append(s.isEmpty() ? "" : " ").append(String.format(Locale.ROOT, "%.1f", n / 1e6));
        }
        return s.toString();
    }

    /** Modes in the order they are interleaved: null is the volatile cache. */
    private static final List<FsyncPolicy> MODES = Arrays.asList(null, FsyncPolicy.NONE, FsyncPolicy.PER_BATCH,
            FsyncPolicy.PER_SEGMENT);

    private static void puts(Path root, int count, int size, int rounds) throws IOException {
        List<List<Double>> rates = new ArrayList<>();
        MODES.forEach(mode -> rates.add(new ArrayList<>()));
        for (int round = 0; round < rounds; round++) {
            for (int m = 0; m < MODES.size(); m++) {
                rates.get(m).add(putsPerSecond(root.resolve("m" + m), MODES.get(m), count, size));
            }
        }
        double baseline = median(rates.get(0));
        for (int m = 0; m < MODES.size(); m++) {
            double median = median(rates.get(m));
            System.out.printf(Locale.ROOT, "DISK puts of %d B, %s: %.0f puts/s (%.1f MB/s), median of %s; ratio to volatile %.3f%n",
                    size, MODES.get(m) == null ? "volatile (no persistence)" : "persistent " + MODES.get(m), median,
                    median * size / 1e6, rates.get(m).stream().map(r -> String.format(Locale.ROOT, "%.0f", r)).toList(),
                    median / baseline);
        }
    }

    /** One round: a fresh directory, its extents made and warmed by a first pass, then the timed pass. */
    private static double putsPerSecond(Path directory, FsyncPolicy mode, int count, int size) throws IOException {
        delete(directory);
        DiskPersistence persistence = mode == null ? null : DiskPersistence.of("bench/puts").fsync(mode);
        try (Arena arena = Arena.ofConfined();
             KvTierCache cache = KvTierCache.open(config(directory, persistence, 64 << 10))) {
            MemorySegment bytes = arena.allocate(size);
            for (int i = 0; i < size; i += 8) {
                bytes.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
            }
            for (int i = 0; i < count; i++) { // extents created and zero-filled here, not in the timed pass
                cache.put("warm-" + i, PositionRange.of(i, i + 1), bytes, Tier.DISK);
            }
            for (int i = 0; i < count; i++) {
                cache.remove("warm-" + i);
            }
            long start = System.nanoTime();
            for (int i = 0; i < count; i++) {
                cache.put("timed-" + i, PositionRange.of(i, i + 1), bytes, Tier.DISK);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            return count / seconds;
        } finally {
            delete(directory);
        }
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(Comparator.naturalOrder());
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static void delete(Path directory) throws IOException {
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> files = Files.walk(directory)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }
}
