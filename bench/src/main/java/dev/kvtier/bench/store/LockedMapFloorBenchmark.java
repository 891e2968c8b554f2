package dev.kvtier.bench.store;

import dev.kvtier.store.Tier;
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
 * A floor for the store's point operations (issue 12): the seed port ({@link SeedPortStore}, a {@code HashMap} of
 * mutable records) with every operation taken under the store's lock protocol ({@link LockedSeedPort}), as
 * {@code TieredStore} takes it: one acquisition per operation, two per pair. What thread safety by one exclusive
 * lock costs with no index, no policy and no snapshot. Same workload and method names as {@link SeedPortBenchmark}
 * and {@link TieredStoreBenchmark}; run them in one JMH invocation.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx4g", "-Xms1g"})
@State(Scope.Thread)
public class LockedMapFloorBenchmark {

    @Param({"1000", "100000", "1000000"})
    public int segments;

    /** The names of the segments, one of {@link StoreWorkload#KEY_STYLES}. */
    @Param({"sequential", "random"})
    public String keys;

    private StoreWorkload workload;
    private LockedSeedPort store;
    /** Each resident key's record, by its index in the workload's keys: the "handle" of touchByHandle. */
    private SeedPortStore.Meta[] records;

    @Setup(Level.Trial)
    public void fill() {
        workload = new StoreWorkload(segments, keys);
        store = new LockedSeedPort(workload.budget(), workload.budget());
        records = new SeedPortStore.Meta[workload.keys.length];
        for (int i = 0; i < records.length; i++) {
            records[i] = StoreWorkload.seedRecord(workload.keys[i]);
            store.register(records[i], Tier.GPU);
        }
    }

    @TearDown(Level.Trial)
    public void release() {
        store = null;
        workload = null;
        records = null;
    }

    /** register then remove, each under the lock (two acquisitions, as the store's pair). */
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

    /** The lookup under the lock, answering the record (as the port does; no snapshot). */
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

    /** The record's increment under the lock, the record found by the key's index (a caller's handle). */
    @Benchmark
    public boolean touchByHandle() {
        return store.touch(records[workload.nextIndex()]);
    }
}
