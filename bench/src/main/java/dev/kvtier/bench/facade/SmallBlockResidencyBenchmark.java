package dev.kvtier.bench.facade;

import dev.kvtier.Backend;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.ResidentSegment;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * The facade's cost per small block (4 KiB, page 4 KiB, host backend): {@code ensureResident(key, GPU)} on
 * keys taken round robin, with GPU room for 3,000 blocks and CPU room for 6,000. {@code hit}: 2,000 keys, every
 * call finds its block on GPU (metadata only). {@code fromCpu}: 6,000 keys, every call promotes its block from
 * CPU and demotes the coldest GPU block to CPU (two 4 KiB copies). {@code fromDisk}: 20,000 keys, every call
 * promotes from DISK (its CRC32C verified), demoting one block GPU to CPU and one CPU to DISK (checked on
 * arrival): three copies and two checksums. Scores are calls per second; against {@code MemorySegment.copy}
 * of 4 KiB ({@code HostCopyBandwidthBenchmark}) they say how far a small block is from "one memcpy plus the
 * metadata" (issue 11). Usage: {@code java -jar benchmarks.jar SmallBlockResidencyBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class SmallBlockResidencyBenchmark {
    private static final int BLOCK = 4096;
    private static final int GPU_BLOCKS = 3_000;
    private static final int CPU_BLOCKS = 6_000;

    /** Where each call finds its block. */
    @Param({"hit", "fromCpu", "fromDisk"})
    public String where;

    private KvTierCache cache;
    private Arena arena;
    private String[] keys;
    private int next;

    @Setup
    public void open() {
        int count = switch (where) {
            case "hit" -> 2_000;
            case "fromCpu" -> CPU_BLOCKS;
            case "fromDisk" -> 20_000;
            default -> throw new IllegalArgumentException("where must be hit, fromCpu or fromDisk, was " + where);
        };
        cache = KvTierCache.open(KvTierConfig.builder()
                .gpuBudgetBytes((long) GPU_BLOCKS * BLOCK)
                .cpuBudgetBytes((long) CPU_BLOCKS * BLOCK)
                .pageSizeBytes(BLOCK)
                .backend(Backend.HOST)
                .build());
        arena = Arena.ofConfined();
        MemorySegment bytes = arena.allocate(BLOCK);
        keys = new String[count];
        for (int i = 0; i < count; i++) {
            keys[i] = "block-" + i;
            bytes.fill((byte) i);
            cache.put(keys[i], PositionRange.of(512L * i, 512L * (i + 1)), bytes, Tier.GPU);
        }
    }

    @TearDown
    public void close() {
        cache.close();
        arena.close();
    }

    @Benchmark
    public ResidentSegment ensureResidentOnGpu() {
        String key = keys[next];
        next = next + 1 == keys.length ? 0 : next + 1;
        return cache.ensureResident(key, Tier.GPU);
    }
}
