package dev.kvtier.bench.store;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentHandle;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TierTransfer;
import dev.kvtier.store.TieredStore;
import java.util.List;
import java.util.Optional;
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
 * {@link TieredStore} operations at 10^3, 10^5 and 10^6 segments. The baseline, with the same
 * method names and workload, is {@link SeedPortBenchmark}; run both in one JMH invocation
 * ({@code 'dev.kvtier.bench.store.*'}) and compare line by line.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx4g", "-Xms1g"})
@State(Scope.Thread)
public class TieredStoreBenchmark {

    @Param({"1000", "100000", "1000000"})
    public int segments;

    /** The names of the segments, one of {@link StoreWorkload#KEY_STYLES}: see there why both. */
    @Param({"sequential", "random"})
    public String keys;

    /**
     * The policy by {@link DemotionPolicy#named} name: the store's default ({@link DemotionPolicy#defaultPolicy()},
     * adaptive-s3-fifo) and the one before it. Pass {@code -p policy=least-accessed-first,s3-fifo,w-tinylfu} to
     * measure the others.
     */
    @Param({"adaptive-s3-fifo", "chain-s3-fifo"})
    public String policy;

    private StoreWorkload workload;
    private TieredStore store;
    private SegmentMeta[] spareMetas;
    /** The handle of each resident key, by its index in the workload's keys. */
    private SegmentHandle[] handles;

    @Setup(Level.Trial)
    public void fill() {
        workload = new StoreWorkload(segments, keys);
        store = new TieredStore(workload.budget(), workload.budget(), DemotionPolicy.named(policy));
        PositionRange positions = PositionRange.of(0, 16);
        handles = new SegmentHandle[workload.keys.length];
        for (int i = 0; i < handles.length; i++) {
            handles[i] = store.registerHandle(SegmentMeta.of(workload.keys[i], positions, StoreWorkload.SEGMENT_BYTES),
                    Tier.GPU);
        }
        spareMetas = new SegmentMeta[workload.spareKeys.length];
        for (int i = 0; i < spareMetas.length; i++) {
            spareMetas[i] = SegmentMeta.of(workload.spareKeys[i], positions, StoreWorkload.SEGMENT_BYTES);
        }
    }

    @TearDown(Level.Trial)
    public void release() {
        store = null;
        workload = null;
        spareMetas = null;
        handles = null;
    }

    /** register of a new segment, then remove of it so the store keeps its size: the pair's cost. */
    @Benchmark
    public Optional<SegmentMeta> registerThenRemove() {
        SegmentMeta meta = spareMetas[workload.nextSpare()];
        store.register(meta, Tier.GPU);
        return store.remove(meta.key());
    }

    /**
     * registerThenRemove with {@link TieredStore#discard}, the removal for callers that do not read the final
     * snapshot (the seed port's remove hands back its own record, allocating nothing).
     */
    @Benchmark
    public boolean registerThenDiscard() {
        SegmentMeta meta = spareMetas[workload.nextSpare()];
        store.register(meta, Tier.GPU);
        return store.discard(meta.key());
    }

    @Benchmark
    public boolean touch() {
        return store.touch(workload.nextKey());
    }

    @Benchmark
    public Optional<SegmentMeta> get() {
        return store.get(workload.nextKey());
    }

    /** demote GPU to CPU then promote back: the pair's cost. */
    @Benchmark
    public void demoteThenPromote(Blackhole blackhole) {
        String key = workload.nextKey();
        Optional<TierTransfer> down = store.demote(key, Tier.CPU);
        Optional<TierTransfer> up = store.promote(key, Tier.GPU);
        blackhole.consume(down);
        blackhole.consume(up);
    }

    /**
     * The handle-taking twins of touch, get and demote+promote: what a caller that keeps the store's
     * {@link SegmentHandle} in its own record per segment pays (no hash lookup in the store). Compared with
     * the seed port's key-based methods of the same name without the suffix, on the same key sequence (the
     * handle is read from an array by the key's index, as the key is).
     */
    @Benchmark
    public boolean touchByHandle() {
        return store.touch(handles[workload.nextIndex()]);
    }

    @Benchmark
    public Optional<SegmentMeta> getByHandle() {
        return store.get(handles[workload.nextIndex()]);
    }

    @Benchmark
    public void demoteThenPromoteByHandle(Blackhole blackhole) {
        SegmentHandle handle = handles[workload.nextIndex()];
        blackhole.consume(store.demote(handle, Tier.CPU));
        blackhole.consume(store.promote(handle, Tier.GPU));
    }

    /**
     * A touch, and after every {@value #TOUCHES_PER_QUERY}th a query for a few candidates: the
     * per-touch cost including the lazy index's repairs, which queries pay for the touches before
     * them (no baseline: the seed port would sort the tier per query).
     */
    @Benchmark
    public Object touchWithOccasionalCandidates() {
        String key = workload.nextKey();
        if ((++touches & (TOUCHES_PER_QUERY - 1)) == 0) {
            return store.candidatesForDemotion(Tier.GPU, StoreWorkload.CANDIDATES_WANTED * StoreWorkload.SEGMENT_BYTES);
        }
        return store.touch(key);
    }

    private static final int TOUCHES_PER_QUERY = 1_024;
    private long touches;

    /** A few candidates ({@value StoreWorkload#CANDIDATES_WANTED} segments' worth) from a full tier. */
    @Benchmark
    public List<String> candidatesForDemotionFew() {
        return store.candidatesForDemotion(Tier.GPU, StoreWorkload.CANDIDATES_WANTED * StoreWorkload.SEGMENT_BYTES);
    }
}
