package dev.kvtier.bench.sim;

import java.lang.foreign.Arena;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import dev.kvtier.RemoteStoreStats;
import dev.kvtier.bench.trace.Belady;
import dev.kvtier.store.Tier;

/**
 * Plays one {@link BlockTrace} against one cache, request by request in trace order on the calling thread
 * (so that the order of block references, and with it every hit rate, is the trace's and can be set against
 * the offline optimum), through a {@link BlockRequestPlayer}. Then verifies and removes every block, checks
 * the tiers are empty, and computes the offline optimum for the GPU capacity. One instance runs once.
 */
final class TraceRun {
    private final SimOptions options;
    private final BlockTrace trace;
    private final CacheUnderTest cache;
    private final CacheUnderTest.Settings settings;
    private final Progress.Sink progressSink;
    private final Optimum optimum;
    private final TraceCounters counters = new TraceCounters();
    /** The quarter being played (0-3), where it started, the references before it and what was spent before it. */
    private int quarter;
    private int quarterStart;
    private long quarterReferences;
    private JvmActivity quarterActivity;

    private TraceRun(SimOptions options, BlockTrace trace, CacheUnderTest cache, CacheUnderTest.Settings settings,
                     Progress.Sink progressSink, Optimum optimum) {
        this.options = options;
        this.trace = trace;
        this.cache = cache;
        this.settings = settings;
        this.progressSink = progressSink;
        this.optimum = optimum;
    }

    /**
     * Plays the trace on a cache opened from {@code factory} with {@code settings}, and closes it.
     *
     * @param optimum where the offline optimum is computed (and remembered across the points of a sweep)
     * @throws RuntimeException when the cache cannot be opened (nothing was played)
     */
    static TraceResult run(SimOptions options, BlockTrace trace, CacheUnderTest.Factory factory,
                           CacheUnderTest.Settings settings, Progress.Sink progressSink, Optimum optimum) {
        try (CacheUnderTest cache = factory.open(settings)) {
            return new TraceRun(options, trace, cache, settings, progressSink, optimum).play();
        }
    }

    /**
     * Blocks one block takes in a tier: its bytes rounded up to whole pages. The GPU capacity in blocks is the
     * GPU budget divided by this.
     */
    static long blockFootprintBytes(int blockBytes, int pageSizeBytes) {
        return Math.ceilDiv((long) blockBytes, pageSizeBytes) * pageSizeBytes;
    }

    private TraceResult play() {
        CacheUnderTest.Counters before = cache.counters();
        // The first snapshot of the quarters is taken before the clocks start: its first call loads the management
        // beans, which is no part of the play.
        quarterActivity = JvmActivity.now();
        int nextQuarterEdge = 0;
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long cpuStart = threads.isCurrentThreadCpuTimeSupported() ? threads.getCurrentThreadCpuTime() : -1;
        long start = System.nanoTime();
        long deadline = options.maxSeconds() > 0 ? start + TimeUnit.SECONDS.toNanos(options.maxSeconds()) : Long.MAX_VALUE;
        int requestsDone = 0;
        String leftover = null;
        long playedNanos;
        CacheUnderTest.Counters afterPlay;
        RemoteStoreStats remote;
        // Where the steady-state figure starts: after the first quarter of the trace (measured: ~25% of
        // the whole-run figure as JIT warm-up inside the timed window).
        int steadyFrom = quarterEnd(0); // the steady state is the last three quarters
        long steadyStart = 0;
        long steadyCpuStart = -1;
        long steadyReferencesStart = 0;
        try (Arena arena = Arena.ofConfined()) {
            BlockRequestPlayer player = player(arena);
            Progress progress = Progress.start(progressSink, this::progressLine);
            try {
                while (requestsDone < trace.requests() && System.nanoTime() < deadline) {
                    if (requestsDone == nextQuarterEdge) {
                        // One compare per request: the bookkeeping is its own method, so the loop (which the JIT
                        // compiles on stack with the player inlined) stays as small as it was without quarters.
                        nextQuarterEdge = quarterEdge(requestsDone);
                    }
                    if (requestsDone == steadyFrom) {
                        counters.steadyFromRequest = steadyFrom;
                        steadyReferencesStart = counters.references;
                        steadyCpuStart = cpuStart >= 0 ? threads.getCurrentThreadCpuTime() : -1;
                        steadyStart = System.nanoTime();
                    }
                    boolean ok;
                    try {
                        ok = player.play(requestsDone);
                    } catch (RuntimeException | Error e) {
                        counters.fail("unexpected " + SimulationRun.describe(e) + " in the simulator");
                        ok = false;
                    }
                    if (!ok) {
                        break;
                    }
                    requestsDone++;
                    counters.publish(requestsDone);
                }
            } finally {
                progress.stop();
            }
            long playEnd = System.nanoTime();
            long cpuEnd = cpuStart >= 0 ? threads.getCurrentThreadCpuTime() : -1;
            closeQuarter(requestsDone);
            playedNanos = playEnd - start;
            if (cpuStart >= 0) {
                counters.playCpuNanos = cpuEnd - cpuStart;
            }
            if (counters.steadyFromRequest >= 0) {
                counters.steadyReferences = counters.references - steadyReferencesStart;
                counters.steadyNanos = playEnd - steadyStart;
                counters.steadyCpuNanos = steadyCpuStart >= 0 ? cpuEnd - steadyCpuStart : -1;
            }
            afterPlay = cache.counters().since(before);
            if (counters.failure() == null) {
                player.verifyAndRemoveEverything();
                CacheUnderTest.Counters end = cache.counters();
                if (counters.failure() == null && (end.used(Tier.GPU) != 0 || end.used(Tier.CPU) != 0 || end.used(Tier.DISK) != 0)) {
                    leftover = "tiers not empty after removing every block: GPU " + end.used(Tier.GPU) + " B, CPU "
                            + end.used(Tier.CPU) + " B, disk " + end.used(Tier.DISK) + " B";
                }
            }
            remote = cache.remoteStats();
        }
        long footprint = blockFootprintBytes(options.blockBytes(), settings.pageSizeBytes());
        int capacity = (int) Math.min(Integer.MAX_VALUE, settings.gpuBudgetBytes() / footprint);
        int played = trace.referencesOfFirst(requestsDone);
        long optimumHits = optimum.hits(trace, played, capacity);
        return new TraceResult(options, settings, cache.backendDescription(), trace, playedNanos, requestsDone,
                counters, afterPlay, Optional.ofNullable(counters.failure()), Optional.ofNullable(leftover),
                requestsDone < trace.requests() && counters.failure() == null, capacity, optimumHits, Optional.empty(), remote);
    }

    /**
     * At request {@code requestsDone}, an edge of the quarters: closes the quarter that ends here (if it has requests;
     * a trace of fewer than 4 requests has empty ones) and returns the next edge, or -1 after the third (the last
     * quarter is closed when the play ends).
     */
    private int quarterEdge(int requestsDone) {
        closeQuarter(requestsDone);
        while (quarter < 3 && quarterEnd(quarter) <= requestsDone) {
            quarter++;
        }
        return quarter < 3 ? quarterEnd(quarter) : -1;
    }

    /** Records the quarter from {@link #quarterStart} to {@code requestsDone}, if it has any request, and starts the next. */
    private void closeQuarter(int requestsDone) {
        if (requestsDone > quarterStart) {
            JvmActivity now = JvmActivity.now();
            counters.quarters.add(new TraceCounters.Quarter(quarterStart, requestsDone,
                    counters.references - quarterReferences, now.since(quarterActivity)));
            quarterStart = requestsDone;
            quarterReferences = counters.references;
            quarterActivity = now;
        }
    }

    /** One past the last request of quarter {@code q} (0-3) of the trace. */
    private int quarterEnd(int q) {
        return (int) ((long) trace.requests() * (q + 1) / 4);
    }

    /** The player of {@code --trace-api}. */
    private BlockRequestPlayer player(Arena arena) {
        if (options.traceApi() == SimOptions.TraceApi.SEGMENTS) {
            return new SegmentBlockPlayer(cache, trace, counters, options.seed(), options.blockBytes(), options.verify(), arena);
        }
        CacheUnderTest.PrefixBlocks blocks = cache.prefixBlocks(BlockTrace.tokensPerBlock(), options.blockBytes())
                .orElseThrow(() -> new IllegalArgumentException("--trace-api prefix needs a cache with a prefix-block view, and "
                        + cache.backendDescription() + " has none: use --trace-api segments"));
        return new PrefixBlockPlayer(blocks, trace, counters, options.seed(), options.blockBytes(), options.verify(), arena);
    }

    private String progressLine(double seconds) {
        long done = counters.publishedRequests;
        long refs = counters.publishedReferences;
        long onGpu = counters.publishedOnGpu;
        return String.format(Locale.ROOT, "%,d/%,d requests  %,.0f block refs/s  %.1f%% of %,d references on GPU  failures %d",
                done, trace.requests(), seconds > 0 ? refs / seconds : 0.0, refs == 0 ? 0.0 : 100.0 * onGpu / refs, refs,
                counters.failure() == null ? 0 : 1);
    }

    /**
     * The offline optimum's GPU hits, remembered per (references played, capacity): the points of a sweep
     * that differ only in policy share one computation. Not thread-safe.
     */
    static final class Optimum {
        private final Map<Long, Long> hits = new HashMap<>();

        long hits(BlockTrace trace, int references, int capacity) {
            long key = (long) references << 32 | capacity;
            return hits.computeIfAbsent(key, k -> Belady.hits(trace.referenceSequence(references), capacity));
        }
    }
}
