package dev.kvtier.bench.store;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentHandle;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The store's point operations against {@link SeedPortStore}, interleaved in one JVM for a machine too busy
 * for JMH's back-to-back runs: for each operation and size, short slices (default 20 ms) of the seed port
 * and of {@link TieredStore} alternate (A B A B ...), so both see the same load; each pair gives a ratio
 * (seed ns/op over ours: above 1 means ours is faster) and the median over the pairs is printed with the
 * median ns/op of each. Same workload as the JMH pair ({@link StoreWorkload}). Not a substitute for JMH on a
 * quiet machine (no forks, no JMH blackhole): every result is stored in a static field, so, as under JMH's
 * blackhole, no call is dead code and no returned object is scalar-replaced (with results only tested, the
 * JIT sometimes eliminated {@code get}'s snapshot allocation and sometimes not, from run to run).
 * Usage: {@code java -Xmx4g -cp benchmarks.jar dev.kvtier.bench.store.StoreAbCheck [policy] [sizes] [pairs] [sliceMs]
 * [keyStyle] [ops]}: {@code keyStyle} one of {@link StoreWorkload#KEY_STYLES} (default sequential), {@code ops} a
 * comma-separated subset of the operation names (default all). Times are the measuring thread's CPU time per
 * operation unless {@code -Dkvtier.abcheck.wall=true} (see {@link #CPU_TIME}).
 * The policy {@value #NO_POLICY} (not a real policy: its tracker ignores every event and names no candidates)
 * measures what the store costs without any policy, to tell the store's own share of a gap from the policy's.
 * Each round also runs the two floors of {@link LockedMapFloorBenchmark} and {@link ConcurrentMapFloorBenchmark} in
 * slices of their own (seed, ours, locked map, concurrent map), printed beside ours as the seed's ns/op over theirs.
 */
public final class StoreAbCheck {
    /** The policy argument that measures the store without a policy (see the class comment). */
    static final String NO_POLICY = "no-policy";
    /**
     * Indices 4-6 are ours by handle against the seed port's by key (see TieredStoreBenchmark#touchByHandle); 7 our
     * discard against the port's remove; 8 a touch and then a get of the same key, the get of a segment that just
     * changed (a caller reading a segment's metadata after using it), against the port's same pair.
     */
    private static final String[] OPS = {"touch", "get", "demoteThenPromote", "registerThenRemove",
        "touchByHandle", "getByHandle", "demoteThenPromoteByHandle", "registerThenDiscard", "touchThenGet"};
    /** Ours: the handle of each resident key, by its index in the workload's keys. */
    private static SegmentHandle[] handles;
    private static long sink;
    /**
     * Whether slices are timed in this thread's CPU time (the default; {@code -Dkvtier.abcheck.wall=true} for wall
     * time). Why: on a machine shared with other work a slice's wall time includes the time the thread waited for a
     * core, which varies 2-3x from slice to slice; its CPU time does not (what the other work does to the caches
     * still shows).
     */
    private static final boolean CPU_TIME = !Boolean.getBoolean("kvtier.abcheck.wall");
    private static final java.lang.management.ThreadMXBean THREADS = java.lang.management.ManagementFactory.getThreadMXBean();
    /** Where every result escapes to (see the class comment). */
    private static Object escaped;

    private StoreAbCheck() {
    }

    public static void main(String[] args) {
        String policy = args.length > 0 ? args[0] : DemotionPolicy.defaultPolicy().name();
        String sizes = args.length > 1 ? args[1] : "1000,100000,1000000";
        int pairs = args.length > 2 ? Integer.parseInt(args[2]) : 15;
        long sliceNanos = (args.length > 3 ? Long.parseLong(args[3]) : 20) * 1_000_000;
        String keyStyle = args.length > 4 ? args[4] : "sequential";
        List<String> only = args.length > 5 ? List.of(args[5].split(",")) : List.of(OPS);
        System.out.println("policy " + policy + ", keys " + keyStyle + ", " + (CPU_TIME ? "thread CPU" : "wall") + " time");
        System.out.println("| operation | segments | ours ns/op | seed port ns/op | seed / ours (median of " + pairs
                + " rounds) | locked map ns/op | seed / locked | concurrent map ns/op | seed / concurrent |");
        for (String size : sizes.split(",")) {
            int n = Integer.parseInt(size.strip());
            StoreWorkload workload = new StoreWorkload(n, keyStyle);
            TieredStore ours = new TieredStore(workload.budget(), workload.budget(),
                    policy.equals(NO_POLICY) ? new NoPolicy() : DemotionPolicy.named(policy));
            SeedPortStore seed = new SeedPortStore(workload.budget(), workload.budget());
            lockedMap = new LockedSeedPort(workload.budget(), workload.budget());
            concurrentMap = new ConcurrentHashMap<>();
            PositionRange positions = PositionRange.of(0, 16);
            handles = new SegmentHandle[n];
            lockedRecords = new SeedPortStore.Meta[n];
            concurrentRecords = new SeedPortStore.Meta[n];
            for (int i = 0; i < n; i++) {
                String key = workload.keys[i];
                handles[i] = ours.registerHandle(SegmentMeta.of(key, positions, StoreWorkload.SEGMENT_BYTES), Tier.GPU);
                seed.register(StoreWorkload.seedRecord(key), Tier.GPU);
                lockedRecords[i] = StoreWorkload.seedRecord(key);
                lockedMap.register(lockedRecords[i], Tier.GPU);
                concurrentRecords[i] = StoreWorkload.seedRecord(key);
                concurrentMap.put(key, concurrentRecords[i]);
            }
            SegmentMeta[] spares = new SegmentMeta[workload.spareKeys.length];
            for (int i = 0; i < spares.length; i++) {
                spares[i] = SegmentMeta.of(workload.spareKeys[i], positions, StoreWorkload.SEGMENT_BYTES);
            }
            for (int op = 0; op < OPS.length; op++) {
                if (!only.contains(OPS[op])) {
                    continue;
                }
                double[] oursNs = new double[pairs];
                double[] seedNs = new double[pairs];
                double[] ratios = new double[pairs];
                double[] lockedNs = new double[pairs];
                double[] lockedRatios = new double[pairs];
                double[] concurrentNs = new double[pairs];
                double[] concurrentRatios = new double[pairs];
                for (int round = -5; round < pairs; round++) { // 5 warm-up rounds
                    double s = slice(op, null, seed, FloorKind.NONE, workload, spares, sliceNanos);
                    double o = slice(op, ours, null, FloorKind.NONE, workload, spares, sliceNanos);
                    double l = slice(op, null, null, FloorKind.LOCKED_MAP, workload, spares, sliceNanos);
                    double c = hasConcurrentFloor(op)
                            ? slice(op, null, null, FloorKind.CONCURRENT_MAP, workload, spares, sliceNanos) : Double.NaN;
                    if (round >= 0) {
                        seedNs[round] = s;
                        oursNs[round] = o;
                        ratios[round] = s / o;
                        lockedNs[round] = l;
                        lockedRatios[round] = s / l;
                        concurrentNs[round] = c;
                        concurrentRatios[round] = s / c;
                    }
                }
                System.out.printf(Locale.ROOT, "| %s | %d | %.1f | %.1f | %.2f | %.1f | %.2f | %.1f | %.2f |%n", OPS[op], n,
                        median(oursNs), median(seedNs), median(ratios), median(lockedNs), median(lockedRatios),
                        median(concurrentNs), median(concurrentRatios));
            }
        }
        System.out.println("(checksum " + sink + ")");
    }

    /**
     * The floors of LockedMapFloorBenchmark and ConcurrentMapFloorBenchmark (see there), measured in the same
     * slices: what thread safety by the store's lock alone, or by a concurrent map alone, costs the seed port.
     */
    private enum FloorKind { NONE, LOCKED_MAP, CONCURRENT_MAP }

    private static LockedSeedPort lockedMap;
    private static SeedPortStore.Meta[] lockedRecords;
    private static ConcurrentHashMap<String, SeedPortStore.Meta> concurrentMap;
    private static SeedPortStore.Meta[] concurrentRecords;

    /** A concurrent map alone cannot book a move (see ConcurrentMapFloorBenchmark): no floor for demote+promote. */
    private static boolean hasConcurrentFloor(int op) {
        return op != 2 && op != 6;
    }

    /**
     * Runs one operation on one store (or floor) for about {@code nanos} of wall time; returns ns per operation, of
     * this thread's CPU time (see {@link #CPU_TIME}) or of wall time.
     */
    private static double slice(int op, TieredStore ours, SeedPortStore seed, FloorKind floor, StoreWorkload w,
                                SegmentMeta[] spares, long nanos) {
        long ops = 0;
        long sum = 0;
        long start = System.nanoTime();
        long cpuStart = CPU_TIME ? THREADS.getCurrentThreadCpuTime() : 0;
        long deadline = start + nanos;
        long now;
        do {
            for (int i = 0; i < 256; i++) {
                sum += switch (floor) {
                    case LOCKED_MAP -> lockedOp(op, w);
                    case CONCURRENT_MAP -> concurrentOp(op, w);
                    case NONE -> ours != null ? oursOp(op, ours, w, spares) : seedOp(op, seed, w);
                };
            }
            ops += 256;
            now = System.nanoTime();
        } while (now < deadline);
        sink += sum;
        return (double) (CPU_TIME ? THREADS.getCurrentThreadCpuTime() - cpuStart : now - start) / ops;
    }

    private static int oursOp(int op, TieredStore store, StoreWorkload w, SegmentMeta[] spares) {
        switch (op) {
            case 0:
                return store.touch(w.nextKey()) ? 1 : 0;
            case 1:
                return escape(store.get(w.nextKey()));
            case 2: {
                String key = w.nextKey();
                return escape(store.demote(key, Tier.CPU)) + escape(store.promote(key, Tier.GPU));
            }
            case 3: {
                SegmentMeta meta = spares[w.nextSpare()];
                store.register(meta, Tier.GPU);
                return escape(store.remove(meta.key()));
            }
            case 4:
                return store.touch(handles[w.nextIndex()]) ? 1 : 0;
            case 5:
                return escape(store.get(handles[w.nextIndex()]));
            case 6: {
                SegmentHandle handle = handles[w.nextIndex()];
                return escape(store.demote(handle, Tier.CPU)) + escape(store.promote(handle, Tier.GPU));
            }
            case 7: { // registerThenDiscard: against the seed port's register then remove
                SegmentMeta meta = spares[w.nextSpare()];
                store.register(meta, Tier.GPU);
                return store.discard(meta.key()) ? 1 : 0;
            }
            default: { // touchThenGet
                String key = w.nextKey();
                return (store.touch(key) ? 1 : 0) + escape(store.get(key));
            }
        }
    }

    private static int seedOp(int op, SeedPortStore store, StoreWorkload w) {
        switch (op) {
            case 0, 4:
                return store.touch(w.nextKey()) ? 1 : 0;
            case 1, 5:
                return escape(store.get(w.nextKey()));
            case 2, 6: {
                String key = w.nextKey();
                return escape(store.demote(key, Tier.CPU)) + escape(store.promote(key, Tier.GPU));
            }
            case 8: {
                String key = w.nextKey();
                return (store.touch(key) ? 1 : 0) + escape(store.get(key));
            }
            default: {
                String key = w.spareKeys[w.nextSpare()];
                store.register(StoreWorkload.seedRecord(key), Tier.GPU);
                return escape(store.remove(key));
            }
        }
    }

    /** The seed port's operation under the store's lock protocol: one acquisition per operation, two per pair. */
    private static int lockedOp(int op, StoreWorkload w) {
        switch (op) {
            case 4: // by handle: the record's increment under the lock
                return lockedMap.touch(lockedRecords[w.nextIndex()]) ? 1 : 0;
            case 2, 6: {
                String key = w.nextKey();
                return escape(lockedMap.demote(key, Tier.CPU)) + escape(lockedMap.promote(key, Tier.GPU));
            }
            case 3, 7: {
                String key = w.spareKeys[w.nextSpare()];
                lockedMap.register(StoreWorkload.seedRecord(key), Tier.GPU);
                return escape(lockedMap.remove(key));
            }
            case 8: {
                String key = w.nextKey();
                return (lockedMap.touch(key) ? 1 : 0) + escape(lockedMap.get(key));
            }
            default: { // touch, get and get by handle (the port has no handles: the lookup)
                String key = w.nextKey();
                return op == 0 ? (lockedMap.touch(key) ? 1 : 0) : escape(lockedMap.get(key));
            }
        }
    }

    /** A ConcurrentHashMap of the port's records: lookup and plain increment, putIfAbsent then remove. */
    private static int concurrentOp(int op, StoreWorkload w) {
        switch (op) {
            case 0: {
                SeedPortStore.Meta record = concurrentMap.get(w.nextKey());
                if (record == null) {
                    return 0;
                }
                record.accessCount++;
                return 1;
            }
            case 4:
                concurrentRecords[w.nextIndex()].accessCount++;
                return 1;
            case 3, 7: {
                String key = w.spareKeys[w.nextSpare()];
                concurrentMap.putIfAbsent(key, StoreWorkload.seedRecord(key));
                return escape(concurrentMap.remove(key));
            }
            case 8: {
                SeedPortStore.Meta record = concurrentMap.get(w.nextKey());
                if (record != null) {
                    record.accessCount++;
                }
                return escape(concurrentMap.get(record == null ? "" : record.key));
            }
            default: // get and get by handle (a lookup)
                return escape(concurrentMap.get(w.nextKey()));
        }
    }

    /** A policy whose tracker does nothing: the store's own cost. */
    private static final class NoPolicy implements DemotionPolicy, DemotionPolicy.Tracker {
        @Override
        public String name() {
            return NO_POLICY;
        }

        @Override
        public Tracker newTracker(long gpuBudget, long cpuBudget) {
            return this;
        }

        @Override
        public void registered(Segment segment, Tier tier) {
        }

        @Override
        public void used(Segment segment, Tier tier) {
        }

        @Override
        public void demoted(Segment segment, Tier from, Tier to) {
        }

        @Override
        public void promoted(Segment segment, Tier from, Tier to) {
        }

        @Override
        public void rolledBack(Segment segment, Tier from, Tier to) {
        }

        @Override
        public void removed(Segment segment, Tier tier) {
        }

        @Override
        public void collectCandidates(Tier tier, long needed, java.util.List<String> keys) {
        }
    }

    /** Lets {@code result} escape; 1 if it is a present answer (non-null, or a non-empty Optional). */
    private static int escape(Object result) {
        escaped = result;
        return result == null || result == java.util.Optional.empty() ? 0 : 1;
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
