package dev.kvtier.bench.store;

import dev.kvtier.store.Tier;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The baseline for {@link TieredStoreBenchmark}: the same operations, workload and method names on
 * {@link SeedPortStore}, the naive port of the Rust seed (no lock, sort per candidates call).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx4g", "-Xms1g"})
@State(Scope.Thread)
public class SeedPortBenchmark {

    @Param({"1000", "100000", "1000000"})
    public int segments;

    /** The names of the segments, one of {@link StoreWorkload#KEY_STYLES}: see there why both. */
    @Param({"sequential", "random"})
    public String keys;

    private StoreWorkload workload;
    private SeedPortStore store;

    @Setup(Level.Trial)
    public void fill() {
        workload = new StoreWorkload(segments, keys);
        store = new SeedPortStore(workload.budget(), workload.budget());
        for (String key : workload.keys) {
            store.register(StoreWorkload.seedRecord(key), Tier.GPU);
        }
    }

    @TearDown(Level.Trial)
    public void release() {
        store = null;
        workload = null;
    }

    /** register of a new segment, then remove of it; the seed's register takes the caller's record. */
    @Benchmark
    public SeedPortStore.Meta registerThenRemove() {
        String key = workload.spareKeys[workload.nextSpare()];
        store.register(StoreWorkload.seedRecord(key), Tier.GPU);
        return store.remove(key);
    }

    @Benchmark
    public boolean touch() {
        return store.touch(workload.nextKey());
    }

    @Benchmark
    public SeedPortStore.Meta get() {
        return store.get(workload.nextKey());
    }

    @Benchmark
    public void demoteThenPromote(Blackhole blackhole) {
        String key = workload.nextKey();
        blackhole.consume(store.demote(key, Tier.CPU));
        blackhole.consume(store.promote(key, Tier.GPU));
    }

    @Benchmark
    public List<String> candidatesForDemotionFew() {
        return store.candidatesForDemotion(Tier.GPU, StoreWorkload.CANDIDATES_WANTED * StoreWorkload.SEGMENT_BYTES);
    }
}
