package dev.kvtier.bench.store;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;
import dev.kvtier.store.TierTransfer;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/**
 * Replays a {@link StoreOpTrace} file through one store in one process, as {@code bench/seed-replay} replays it
 * through the Rust seed, and prints the same figures: ns per operation overall and per kind, and a checksum of
 * the point answers, which must be the same for every correct store (the candidate answers are left out: they
 * depend on the policy, and the seed breaks ties in its hash map's random order).
 *
 * <p>Usage: {@code java -Xmx4g -cp benchmarks.jar dev.kvtier.bench.store.StoreTraceReplay TRACE STORE [warmups]},
 * {@code STORE} one of {@value #SEED_PORT} ({@link SeedPortStore}), {@value #DEFAULT} ({@code TieredStore} with
 * the default policy) or a built-in policy's name (e.g. {@code least-accessed-first}, the seed's); {@code warmups}
 * (default 1) passes of each loop on throwaway stores before the timed ones, for the JIT. One store per JVM.
 *
 * <p>Each pass gets the trace read afresh, so that no pass finds a key's hash already computed by an earlier one.
 * The setup registrations are not timed. Two timed passes, each on a fresh store: the <b>clean pass</b> times the
 * whole loop (wall and this thread's CPU time: the overall figures), the <b>per-op pass</b> reads the clock
 * around every operation and subtracts the clock's own cost, calibrated before (the per-kind figures; about as
 * exact as the clock's cost is steady). Both must give the same checksum. A collection is asked for before each
 * timed pass, so the garbage of loading and setup is not charged to it (the pass's own garbage is).
 *
 * <p>The checksum folds, per point operation, its kind and its answer: register and touch true / false; get and
 * remove absent, or the tier and access count of the segment; demote and promote absent, or the tier moved from
 * (FNV-1a style over 64-bit words, {@link #fold}); {@code bench/seed-replay} computes the same.
 * Not thread-safe (a command-line tool).
 */
public final class StoreTraceReplay {
    static final String SEED_PORT = "seed-port";
    static final String DEFAULT = "default";
    static final long CHECKSUM_START = 0xcbf29ce484222325L;
    private static final long CHECKSUM_PRIME = 0x100000001b3L;
    /** By ordinal; {@code Tier.values()} would copy the array on every operation. */
    private static final Tier[] TIERS = Tier.values();

    /** One store under replay, answering each operation with its code for the checksum. */
    interface Target {
        boolean register(String key, int start, int end, long bytes, Tier tier);

        boolean touch(String key);

        /** 0 if absent, else {@link #segmentCode}. */
        long get(String key);

        /** 0 if refused, else {@link #transferCode}. */
        long demote(String key, Tier to);

        long promote(String key, Tier to);

        /** 0 if absent, else {@link #segmentCode} of the removed segment. */
        long remove(String key);

        /** How many keys are named. */
        int candidates(Tier tier, long needed);
    }

    /** The code of a present segment: distinct for every tier and access count, never 0. */
    static long segmentCode(Tier tier, long accessCount) {
        return 1 + tier.ordinal() + 3 * accessCount;
    }

    /** The code of a booked transfer: its source tier, never 0. */
    static long transferCode(Tier from) {
        return 1 + from.ordinal();
    }

    /** Folds operation {@code kind}'s answer {@code code} into {@code checksum}. */
    static long fold(long checksum, byte kind, long code) {
        return (checksum ^ (code << 3 | kind)) * CHECKSUM_PRIME;
    }

    /** {@code TieredStore}, by key (the seed's calls). */
    static final class Ours implements Target {
        private final TieredStore store;

        Ours(TieredStore store) {
            this.store = store;
        }

        @Override
        public boolean register(String key, int start, int end, long bytes, Tier tier) {
            return store.register(SegmentMeta.of(key, PositionRange.of(start, end), bytes), tier);
        }

        @Override
        public boolean touch(String key) {
            return store.touch(key);
        }

        @Override
        public long get(String key) {
            Optional<SegmentMeta> meta = store.get(key);
            return meta.isEmpty() ? 0 : segmentCode(meta.get().tier(), meta.get().accessCount());
        }

        @Override
        public long demote(String key, Tier to) {
            Optional<TierTransfer> t = store.demote(key, to);
            return t.isEmpty() ? 0 : transferCode(t.get().from());
        }

        @Override
        public long promote(String key, Tier to) {
            Optional<TierTransfer> t = store.promote(key, to);
            return t.isEmpty() ? 0 : transferCode(t.get().from());
        }

        @Override
        public long remove(String key) {
            Optional<SegmentMeta> meta = store.remove(key);
            return meta.isEmpty() ? 0 : segmentCode(meta.get().tier(), meta.get().accessCount());
        }

        @Override
        public int candidates(Tier tier, long needed) {
            return store.candidatesForDemotion(tier, needed).size();
        }
    }

    /** {@link SeedPortStore}, the line-by-line Java port of the seed. */
    static final class SeedPort implements Target {
        private final SeedPortStore store;

        SeedPort(SeedPortStore store) {
            this.store = store;
        }

        @Override
        public boolean register(String key, int start, int end, long bytes, Tier tier) {
            return store.register(new SeedPortStore.Meta(key, start, end, bytes), tier);
        }

        @Override
        public boolean touch(String key) {
            return store.touch(key);
        }

        @Override
        public long get(String key) {
            SeedPortStore.Meta meta = store.get(key);
            return meta == null ? 0 : segmentCode(meta.tier, meta.accessCount);
        }

        @Override
        public long demote(String key, Tier to) {
            SeedPortStore.Transfer t = store.demote(key, to);
            return t == null ? 0 : transferCode(t.from());
        }

        @Override
        public long promote(String key, Tier to) {
            SeedPortStore.Transfer t = store.promote(key, to);
            return t == null ? 0 : transferCode(t.from());
        }

        @Override
        public long remove(String key) {
            SeedPortStore.Meta meta = store.remove(key);
            return meta == null ? 0 : segmentCode(meta.tier, meta.accessCount);
        }

        @Override
        public int candidates(Tier tier, long needed) {
            return store.candidatesForDemotion(tier, needed).size();
        }
    }

    /**
     * A fresh, empty store named {@code store} (see the class comment) with the trace's budgets.
     *
     * @throws IllegalArgumentException if no store or built-in policy has that name
     */
    static Target newTarget(String store, StoreOpTrace trace) {
        return switch (store) {
            case SEED_PORT -> new SeedPort(new SeedPortStore(trace.gpuBudget, trace.cpuBudget));
            case DEFAULT -> new Ours(new TieredStore(trace.gpuBudget, trace.cpuBudget));
            default -> new Ours(new TieredStore(trace.gpuBudget, trace.cpuBudget, DemotionPolicy.named(store)));
        };
    }

    /**
     * Registers the trace's setup population in {@code target}.
     *
     * @throws IllegalStateException naming the key if a registration is refused (the setup fits by construction)
     */
    static void setUp(Target target, StoreOpTrace trace) {
        for (int i = 0; i < trace.setup; i++) {
            if (!target.register(trace.keys[i], trace.starts[i], trace.ends[i], trace.bytes[i],
                    TIERS[trace.tiers[i]])) {
                throw new IllegalStateException("setup registration " + i + " of " + trace.keys[i] + " was refused");
            }
        }
    }

    /** Keys named by the candidate queries of the last pass (so their work is not dead code). */
    static long candidatesNamed;

    /** Operation {@code i}'s answer code (0 for a candidate query, whose count goes to {@link #candidatesNamed}). */
    static long apply(Target target, StoreOpTrace trace, int i) {
        String key = trace.keys[i];
        return switch (trace.kinds[i]) {
            case StoreOpTrace.REGISTER -> target.register(key, trace.starts[i], trace.ends[i], trace.bytes[i],
                    TIERS[trace.tiers[i]]) ? 1 : 0;
            case StoreOpTrace.TOUCH -> target.touch(key) ? 1 : 0;
            case StoreOpTrace.GET -> target.get(key);
            case StoreOpTrace.DEMOTE -> target.demote(key, TIERS[trace.tiers[i]]);
            case StoreOpTrace.PROMOTE -> target.promote(key, TIERS[trace.tiers[i]]);
            case StoreOpTrace.REMOVE -> target.remove(key);
            case StoreOpTrace.CANDIDATES -> {
                candidatesNamed += target.candidates(TIERS[trace.tiers[i]], trace.bytes[i]);
                yield 0;
            }
            default -> throw new IllegalStateException("operation " + i + " has unknown kind " + trace.kinds[i]);
        };
    }

    /** Replays the operations after the setup; returns the checksum. */
    static long replay(Target target, StoreOpTrace trace) {
        long checksum = CHECKSUM_START;
        candidatesNamed = 0;
        byte[] kinds = trace.kinds;
        for (int i = trace.setup; i < kinds.length; i++) {
            long code = apply(target, trace, i);
            if (kinds[i] != StoreOpTrace.CANDIDATES) {
                checksum = fold(checksum, kinds[i], code);
            }
        }
        return checksum;
    }

    /** {@link #replay} reading the clock around each operation: adds each kind's nanoseconds to {@code nanos}. */
    static long replayTimingEach(Target target, StoreOpTrace trace, long[] nanos) {
        long checksum = CHECKSUM_START;
        candidatesNamed = 0;
        byte[] kinds = trace.kinds;
        for (int i = trace.setup; i < kinds.length; i++) {
            long start = System.nanoTime();
            long code = apply(target, trace, i);
            nanos[kinds[i]] += System.nanoTime() - start;
            if (kinds[i] != StoreOpTrace.CANDIDATES) {
                checksum = fold(checksum, kinds[i], code);
            }
        }
        return checksum;
    }

    /** The mean cost in ns of one clock read, as it adds to an operation timed by {@link #replayTimingEach}. */
    private static double clockCost() {
        int reads = 2_000_000;
        long sum = 0;
        for (int i = 0; i < reads; i++) {
            long start = System.nanoTime();
            sum += System.nanoTime() - start;
        }
        return (double) sum / reads;
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 2 || args.length > 3) {
            System.err.println("usage: StoreTraceReplay TRACE seed-port|default|POLICY [warmups]");
            System.exit(2);
        }
        Path file = Path.of(args[0]);
        String store = args[1];
        int warmups = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();

        long loadStart = System.nanoTime();
        StoreOpTrace warm = StoreOpTrace.read(file);
        double loadMs = (System.nanoTime() - loadStart) / 1e6;
        for (int w = 0; w < warmups; w++) {
            Target target = newTarget(store, warm);
            setUp(target, warm);
            replay(target, warm);
            target = newTarget(store, warm);
            setUp(target, warm);
            replayTimingEach(target, warm, new long[StoreOpTrace.KIND_NAMES.length]);
        }
        warm = null;
        double clock = clockCost();

        StoreOpTrace trace = StoreOpTrace.read(file);
        Target target = newTarget(store, trace);
        setUp(target, trace);
        System.gc();
        long cpuStart = threads.getCurrentThreadCpuTime();
        long wallStart = System.nanoTime();
        long checksum = replay(target, trace);
        long wall = System.nanoTime() - wallStart;
        long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
        long named = candidatesNamed;
        target = null;

        StoreOpTrace again = StoreOpTrace.read(file);
        trace = null;
        Target timedEach = newTarget(store, again);
        setUp(timedEach, again);
        System.gc();
        long[] nanos = new long[StoreOpTrace.KIND_NAMES.length];
        long checksumEach = replayTimingEach(timedEach, again, nanos);
        if (checksumEach != checksum) {
            throw new IllegalStateException(String.format(Locale.ROOT,
                    "the per-op pass's checksum %016x differs from the clean pass's %016x", checksumEach, checksum));
        }
        print("java-" + store, file, again, loadMs, warmups, wall, cpu, clock, nanos, checksum, named);
    }

    /** Prints the figures in the shape bench/seed-replay prints them. */
    private static void print(String name, Path file, StoreOpTrace trace, double loadMs, int warmups, long wall,
            long cpu, double clock, long[] nanos, long checksum, long named) {
        long[] counts = trace.countsByKind();
        long ops = trace.size() - trace.setup;
        System.out.printf(Locale.ROOT, "store %s, trace %s: %d setup registrations, %d timed operations%n", name,
                file, trace.setup, ops);
        System.out.printf(Locale.ROOT, "load %.0f ms, %d warm-up pass(es) of each loop%n", loadMs, warmups);
        System.out.printf(Locale.ROOT, "clean pass: wall %.1f ms = %.1f ns/op, thread cpu %.1f ms = %.1f ns/op%n",
                wall / 1e6, (double) wall / ops, cpu / 1e6, (double) cpu / ops);
        System.out.printf(Locale.ROOT, "per-op pass (clock read %.1f ns subtracted per op):%n", clock);
        StringBuilder result = new StringBuilder(String.format(Locale.ROOT,
                "RESULT store=%s ops=%d wall_ns_op=%.1f cpu_ns_op=%.1f", name, ops, (double) wall / ops,
                (double) cpu / ops));
        for (int k = 0; k < counts.length; k++) {
            double perOp = counts[k] == 0 ? 0 : nanos[k] / (double) counts[k] - clock;
            System.out.printf(Locale.ROOT, "  %-10s %9d ops %10.1f ns/op %6.1f%% of the time%n",
                    StoreOpTrace.KIND_NAMES[k], counts[k], perOp, 100.0 * (nanos[k] - clock * counts[k])
                            / (sum(nanos) - clock * ops));
            result.append(String.format(Locale.ROOT, " %s=%.1f", StoreOpTrace.KIND_NAMES[k], perOp));
        }
        System.out.printf(Locale.ROOT, "checksum %016x, candidates named %d%n", checksum, named);
        System.out.println(result.append(String.format(Locale.ROOT, " checksum=%016x", checksum)));
    }

    private static long sum(long[] values) {
        long sum = 0;
        for (long v : values) {
            sum += v;
        }
        return sum;
    }
}
