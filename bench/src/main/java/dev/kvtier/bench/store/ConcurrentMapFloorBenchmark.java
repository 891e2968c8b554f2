package dev.kvtier.bench.store;

import dev.kvtier.store.Tier;
import java.util.concurrent.ConcurrentHashMap;
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

/**
 * A floor for the store's point operations (issue 12): what a thread-safe map alone costs, a
 * {@link ConcurrentHashMap} of the seed port's mutable records ({@link SeedPortStore.Meta}). touch is a lookup
 * and a plain increment of the record's count (lossy under concurrent touches, as the store's lock-free touch);
 * register+remove is {@code putIfAbsent} then {@code remove}, each an atomic instruction or a bin lock; get answers
 * the record. No budgets, no tiers, no order: anything a store adds comes on top. No demote+promote: a budget check
 * and a tier change are one atomic step across two objects, which a concurrent map alone cannot give (that floor
 * is {@link LockedMapFloorBenchmark}'s). Same workload and method names as {@link SeedPortBenchmark} and
 * {@link TieredStoreBenchmark}; run them in one JMH invocation.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx4g", "-Xms1g"})
@State(Scope.Thread)
public class ConcurrentMapFloorBenchmark {

    @Param({"1000", "100000", "1000000"})
    public int segments;

    /** The names of the segments, one of {@link StoreWorkload#KEY_STYLES}. */
    @Param({"sequential", "random"})
    public String keys;

    private StoreWorkload workload;
    private ConcurrentHashMap<String, SeedPortStore.Meta> map;
    /** Each resident key's record, by its index in the workload's keys: the "handle" of touchByHandle. */
    private SeedPortStore.Meta[] records;

    @Setup(Level.Trial)
    public void fill() {
        workload = new StoreWorkload(segments, keys);
        map = new ConcurrentHashMap<>();
        records = new SeedPortStore.Meta[workload.keys.length];
        for (int i = 0; i < records.length; i++) {
            records[i] = StoreWorkload.seedRecord(workload.keys[i]);
            records[i].tier = Tier.GPU;
            map.put(workload.keys[i], records[i]);
        }
    }

    @TearDown(Level.Trial)
    public void release() {
        map = null;
        workload = null;
        records = null;
    }

    /** putIfAbsent of a new record, then remove of it. */
    @Benchmark
    public SeedPortStore.Meta registerThenRemove() {
        String key = workload.spareKeys[workload.nextSpare()];
        map.putIfAbsent(key, StoreWorkload.seedRecord(key));
        return map.remove(key);
    }

    @Benchmark
    public boolean touch() {
        SeedPortStore.Meta record = map.get(workload.nextKey());
        if (record == null) {
            return false;
        }
        record.accessCount++;
        return true;
    }

    @Benchmark
    public SeedPortStore.Meta get() {
        return map.get(workload.nextKey());
    }

    /** The record's plain increment alone, the record found by the key's index (a caller's handle). */
    @Benchmark
    public boolean touchByHandle() {
        records[workload.nextIndex()].accessCount++;
        return true;
    }
}
