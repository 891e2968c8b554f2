package dev.kvtier.bench.sim;

import dev.kvtier.ByteSizes;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;

import jdk.jfr.Recording;

import dev.kvtier.bench.trace.MooncakeTrace;
import dev.kvtier.bench.trace.TraceFormatException;
import dev.kvtier.bench.trace.TraceGenerator;
import dev.kvtier.bench.trace.TraceRequest;
import dev.kvtier.bench.trace.TraceStatistics;
import dev.kvtier.observe.KvTierFlightRecording;
import dev.kvtier.remote.RemoteBlockStore;
import dev.kvtier.remote.RemoteBlockStores;
import dev.kvtier.store.Tier;

/**
 * The main job: plays a serving workload (the generated multi-turn chat, or a block-level trace) against
 * kvtier's cache and prints a summary, or runs a budget sweep, or writes a generated trace (see
 * {@link SimOptions#usage()}). Exit status 0 when every byte checked out, 1 on any failure, 2 on bad
 * arguments (a trace that does not parse included). An instance holds only its streams and cache factory;
 * {@link #run} may be called again, from one thread at a time.
 */
public final class Simulate {
    /** Exit status: no failure. */
    public static final int OK = 0;
    /** Exit status: a failure (wrong bytes, lost segment, cache error, leak). */
    public static final int FAILED = 1;
    /** Exit status: bad command line. */
    public static final int USAGE = 2;

    private final PrintStream out;
    private final PrintStream err;
    private final CacheUnderTest.Factory factory;

    /**
     * @param out     summary and sweep output
     * @param err     progress, errors and usage
     * @param factory opens the cache under test
     */
    public Simulate(PrintStream out, PrintStream err, CacheUnderTest.Factory factory) {
        this.out = out;
        this.err = err;
        this.factory = factory;
    }

    /** The library's logger: its one line per opened cache is worth seeing once, not once per sweep point. */
    private static final Logger LIBRARY_LOG = Logger.getLogger("dev.kvtier");
    /** How long {@code --remote}'s store has to answer one question before the run. */
    private static final Duration REMOTE_PROBE_TIMEOUT = Duration.ofSeconds(5);

    public static void main(String[] args) {
        if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
            // One line per record instead of java.util.logging's default two.
            System.setProperty("java.util.logging.SimpleFormatter.format", "%4$s %3$s: %5$s%6$s%n");
        }
        System.exit(new Simulate(System.out, System.err, KvTierCacheAdapter::open).run(args));
    }

    /** Runs the command line and returns the exit status; prints to the streams given at construction. */
    public int run(String... args) {
        SimOptions options;
        Workload workload = null;
        try {
            options = SimOptions.parse(args);
            if (options.help()) {
                out.print(SimOptions.usage());
                return OK;
            }
            if (options.workload() == SimOptions.WorkloadKind.CHAT && options.generateTrace().isEmpty()) {
                workload = Workload.generate(options);
                if (!options.sweep()) {
                    checkBudget("--gpu-budget", options.gpuBudget(), workload);
                }
                checkBudget("--cpu-budget", options.cpuBudget(), workload);
            }
        } catch (UsageException e) {
            return usageError(e);
        }
        // The whole run, so that the recording holds every transfer the summary counts.
        try (Recording recording = options.jfr().isPresent() ? KvTierFlightRecording.start(options.jfr().get()) : null) {
            int status = workload != null
                    ? options.sweep() ? sweep(options, workload) : simulateOnce(options, workload)
                    : traceMode(options, args);
            if (recording != null) {
                recording.stop(); // writes the file
                if (options.sweep() || options.workload() == SimOptions.WorkloadKind.CHAT && workload == null) {
                    out.println("simulate: JFR recording of kvtier's events written to " + options.jfr().get());
                }
            }
            return status;
        } catch (IOException | UncheckedIOException e) {
            err.println("simulate: I/O error: " + e);
            return FAILED;
        }
    }

    private int usageError(UsageException e) {
        err.println("simulate: " + e.getMessage());
        err.println();
        err.print(SimOptions.usage());
        return USAGE;
    }

    /** {@code --generate-trace} and {@code --workload trace}: write a generated trace, play a trace, or both. */
    private int traceMode(SimOptions options, String[] args) throws IOException {
        List<TraceRequest> requests = null;
        String source = null;
        if (options.generateTrace().isPresent()) {
            TraceGenerator.Kind kind = options.generateTrace().get();
            requests = TraceGenerator.generate(kind, options.requests(), options.seed());
            source = String.format(Locale.ROOT, "generated %s trace (%,d requests, seed %d)", kind.optionValue(),
                    options.requests(), options.seed());
            if (options.trace().isPresent()) {
                Path file = options.trace().get();
                MooncakeTrace.writeAll(file, requests);
                // The statistics production traces are compared by (TraceStatistics), so anyone can check a family.
                out.printf(Locale.ROOT, "simulate: wrote %s: %s%n", file, TraceStatistics.of(requests).summary());
                out.flush();
            }
            if (options.workload() == SimOptions.WorkloadKind.CHAT) {
                return OK;
            }
        }
        if (requests == null) {
            Path file = options.trace().orElseThrow();
            try {
                requests = MooncakeTrace.readAll(file);
            } catch (TraceFormatException e) {
                err.println("simulate: bad trace: " + e.getMessage());
                return USAGE;
            } catch (IOException e) {
                err.println("simulate: cannot read --trace " + file + ": " + e);
                return USAGE;
            }
            source = file.toString();
        }
        BlockTrace trace = BlockTrace.of(requests, source);
        try {
            if (trace.references() == 0) {
                throw new UsageException("--trace " + source + " has no block references: nothing to play");
            }
            if (!options.sweep()) {
                checkTraceBudget("--gpu-budget", options.gpuBudget(), options, trace);
            }
            checkTraceBudget("--cpu-budget", options.cpuBudget(), options, trace);
        } catch (UsageException e) {
            return usageError(e);
        }
        if (options.remote().isPresent()) {
            String unusable = unusableRemote(options.remote().get());
            if (unusable != null) {
                err.println("simulate: --remote " + options.remote().get() + ": " + unusable);
                return USAGE;
            }
        }
        if (options.ranks() > 1) {
            long unique = uniqueBytes(options, trace);
            long footprint = TraceRun.blockFootprintBytes(options.blockBytes(), options.effectivePageSizeBytes());
            if (options.gpuBudget().resolve(unique) / options.ranks() < footprint) {
                return usageError(new UsageException("--gpu-budget " + ByteSizes.format(options.gpuBudget().resolve(unique))
                        + " divided among --ranks " + options.ranks() + " is smaller than one block of this trace, "
                        + ByteSizes.format(footprint) + ": raise the budget or lower --ranks"));
            }
            err.printf(Locale.ROOT, "simulate (Java %s): trace %s, %,d requests across %d rank processes; cluster GPU budget %s, CPU budget %s%n",
                    Runtime.version().feature(), trace.source(), trace.requests(), options.ranks(),
                    ByteSizes.format(options.gpuBudget().resolve(unique)), ByteSizes.format(options.cpuBudget().resolve(unique)));
            return ClusterTraceRun.run(options, args, requests, trace, options.gpuBudget().resolve(unique),
                    options.cpuBudget().resolve(unique), out, err) ? OK : FAILED;
        }
        return options.sweep() ? traceSweep(options, trace) : traceOnce(options, trace);
    }

    /**
     * Why the remote store at {@code uri} cannot be used, or null when it answers: opened, asked about one key, closed.
     * A store that does not answer within {@link #REMOTE_PROBE_TIMEOUT} is unusable, though the cache would only miss:
     * a run against it would measure nothing the option asks for. The library's own warnings about it are held back:
     * the one line printed says it.
     */
    private static String unusableRemote(URI uri) {
        Level level = LIBRARY_LOG.getLevel();
        LIBRARY_LOG.setLevel(Level.OFF);
        try (RemoteBlockStore store = RemoteBlockStores.open(uri, Map.of())) {
            store.containsAll(List.of(RemoteBlockStores.blockKeyPrefix("sim-probe") + "0"))
                    .get(REMOTE_PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            return null;
        } catch (IllegalArgumentException | IllegalStateException e) {
            return e.getMessage();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            return describe(uri) + " does not answer: " + cause.getMessage();
        } catch (TimeoutException e) {
            return describe(uri) + " did not answer within " + REMOTE_PROBE_TIMEOUT.toSeconds() + " s";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while reaching it";
        } finally {
            LIBRARY_LOG.setLevel(level);
        }
    }

    private static String describe(URI uri) {
        return uri.getScheme() + "://" + (uri.getHost() == null ? uri.getSchemeSpecificPart()
                : uri.getHost() + (uri.getPort() < 0 ? "" : ":" + uri.getPort()));
    }

    private static long uniqueBytes(SimOptions options, BlockTrace trace) {
        return (long) trace.uniqueBlocks() * options.blockBytes();
    }

    /** A budget below one block could never make a block resident: say so before starting. */
    private static void checkTraceBudget(String option, Budget budget, SimOptions options, BlockTrace trace)
            throws UsageException {
        long bytes = budget.resolve(uniqueBytes(options, trace));
        long footprint = TraceRun.blockFootprintBytes(options.blockBytes(), options.effectivePageSizeBytes());
        if (bytes < footprint) {
            throw new UsageException("bad value for " + option + ": '" + budget.spec() + "' (" + ByteSizes.format(bytes)
                    + " is smaller than one block of this trace, " + ByteSizes.format(footprint) + " with "
                    + ByteSizes.format(options.effectivePageSizeBytes()) + " pages; give at least that)");
        }
    }

    private int traceOnce(SimOptions options, BlockTrace trace) throws IOException {
        TraceResult.WarmUp warmUp = null;
        if (options.warmupRequests() > 0) {
            TraceResult warm = warmUp(options);
            if (warm == null) {
                return FAILED;
            }
            if (warm.failures() != 0) {
                out.print(warm.summary());
                warm.failure().ifPresent(f -> err.println("simulate: FAILED in the warm-up: " + f));
                err.println("simulate: the warm-up failed; the measured run was not started");
                return FAILED;
            }
            warmUp = new TraceResult.WarmUp(warm.trace().source(), warm.references(), warm.playedNanos() / 1e9,
                    warm.cpuMicrosPerReference(), warm.failures());
        }
        long unique = uniqueBytes(options, trace);
        err.printf(Locale.ROOT, "simulate (Java %s): trace %s, %,d requests, %,d block references, %,d unique blocks of %s; GPU budget %s, CPU budget %s%n",
                Runtime.version().feature(), trace.source(), trace.requests(), trace.references(), trace.uniqueBlocks(),
                ByteSizes.format(options.blockBytes()), ByteSizes.format(options.gpuBudget().resolve(unique)),
                ByteSizes.format(options.cpuBudget().resolve(unique)));
        TraceResult result = runTraceOnce(options, trace, options.gpuBudget().resolve(unique),
                Progress.Sink.of(options.progress(), err), new TraceRun.Optimum());
        if (result == null) {
            return FAILED;
        }
        if (warmUp != null) {
            result = result.withWarmUp(warmUp);
        }
        out.print(result.summary());
        out.flush();
        result.failure().ifPresent(f -> err.println("simulate: FAILED: " + f));
        return result.failures() == 0 ? OK : FAILED;
    }

    /**
     * {@code --warmup-requests N}: warms the JVM as JMH's warm-up iterations do, so that the measured run shows the
     * library's steady cost rather than the JIT compiling it. Generates another trace of the measured one's kind
     * ({@code chat} for a trace read from a file) from {@link SimOptions#warmupSeed()}, and plays it to the end
     * through a cache of its own in a temporary disk directory, with the measured run's budget shares (resolved
     * against the warm-up trace's unique blocks, at least one block each), page size, policy, backend and API. That
     * cache is closed, and its directory deleted, before the measured run opens its own fresh cold cache: nothing
     * but the JVM's state (compiled code, heap size, loaded classes) carries over. Returns its result; null when its
     * cache could not be opened (reported).
     */
    private TraceResult warmUp(SimOptions options) throws IOException {
        SimOptions warm = options.forWarmUp();
        TraceGenerator.Kind kind = options.generateTrace().orElse(TraceGenerator.Kind.CHAT);
        String source = String.format(Locale.ROOT, "generated %s trace (%,d requests, seed %d)", kind.optionValue(),
                warm.requests(), warm.seed());
        BlockTrace trace = BlockTrace.of(TraceGenerator.generate(kind, warm.requests(), warm.seed()), source);
        long unique = uniqueBytes(warm, trace);
        long footprint = TraceRun.blockFootprintBytes(warm.blockBytes(), warm.effectivePageSizeBytes());
        // A short warm-up trace can make a share of its unique blocks less than one block: give it one.
        warm = warm.withGpuBudgetAndPolicy(new Budget.Bytes(Math.max(footprint, warm.gpuBudget().resolve(unique))),
                warm.policy()).withCpuBudget(new Budget.Bytes(Math.max(footprint, warm.cpuBudget().resolve(unique))));
        err.printf(Locale.ROOT, "simulate: warming the JVM first: %s, %,d block references, on a throwaway cache%n", source,
                trace.references());
        TraceResult result = runTraceOnce(warm, trace, warm.gpuBudget().resolve(unique), Progress.Sink.off(),
                new TraceRun.Optimum());
        if (result != null) {
            err.printf(Locale.ROOT, "simulate: warm-up done in %.2f s (%d failures), its cache closed; the measured run"
                    + " starts on a fresh cache%n", result.playedNanos() / 1e9, result.failures());
        }
        return result;
    }

    private TraceResult runTraceOnce(SimOptions options, BlockTrace trace, long gpuBudgetBytes, Progress.Sink progress,
                                     TraceRun.Optimum optimum) throws IOException {
        return inDiskDirectory(options, diskDirectory -> TraceRun.run(options, trace, factory,
                new CacheUnderTest.Settings(gpuBudgetBytes, options.cpuBudget().resolve(uniqueBytes(options, trace)),
                        diskDirectory, options.effectivePageSizeBytes(), options.policy(), options.backend(),
                        options.remoteStoreConfig()),
                progress, optimum));
    }

    private int traceSweep(SimOptions options, BlockTrace trace) throws IOException {
        long unique = uniqueBytes(options, trace);
        long footprint = TraceRun.blockFootprintBytes(options.blockBytes(), options.effectivePageSizeBytes());
        List<Budget> budgets = sweepBudgets(options);
        err.printf(Locale.ROOT, "simulate --sweep: trace %s, %d GPU budgets x %d policies, %,d unique blocks (%s)%n",
                trace.source(), budgets.size(), options.sweepPolicies().size(), trace.uniqueBlocks(), ByteSizes.format(unique));
        Level libraryLevel = LIBRARY_LOG.getLevel();
        TraceRun.Optimum optimum = new TraceRun.Optimum();
        List<TraceSweep.Point> points = new ArrayList<>();
        String backend = "";
        try {
            for (PolicyChoice policy : options.sweepPolicies()) {
                for (Budget budget : budgets) {
                    long bytes = Math.max(footprint, budget.resolve(unique));
                    SimOptions pointOptions = options.withGpuBudgetAndPolicy(new Budget.Bytes(bytes), policy);
                    TraceResult result = runTraceOnce(pointOptions, trace, bytes, Progress.Sink.off(), optimum);
                    if (result == null) {
                        return FAILED;
                    }
                    backend = result.backend();
                    LIBRARY_LOG.setLevel(Level.WARNING);
                    TraceSweep.Point point = new TraceSweep.Point(policy, result);
                    points.add(point);
                    err.printf(Locale.ROOT, "  %-4s GPU %5.1f%% (%,7d blocks): on GPU %5.1f%%, optimum %5.1f%%, ratio %.2f, "
                                    + "prefix hit %5.1f%%, %,.0f refs/s, failures %d%n", policy.optionValue(),
                            100 * point.gpuShare(), result.gpuCapacityBlocks(), 100 * result.foundOnShare(Tier.GPU),
                            100 * result.optimumGpuShare(), result.ratioToOptimum(), 100 * result.prefixHitShare(),
                            result.referencesPerSecond(), result.failures());
                    if (result.failures() != 0) {
                        out.print(result.summary());
                        err.println("simulate --sweep: stopped at the first failure; nothing written");
                        return FAILED;
                    }
                }
            }
        } finally {
            LIBRARY_LOG.setLevel(libraryLevel);
        }
        List<String> subtitle = List.of(
                String.format(Locale.ROOT, "trace %s: %,d requests, %,d block references, %,d unique blocks of %s",
                        trace.source(), trace.requests(), trace.references(), trace.uniqueBlocks(),
                        ByteSizes.format(options.blockBytes())),
                String.format(Locale.ROOT, "CPU budget %s of unique; backend %s; optimum = Belady at the GPU capacity; %s",
                        options.cpuBudget().spec(), backend.split(" ")[0], Instant.now().truncatedTo(ChronoUnit.SECONDS)));
        Path csv = options.outDirectory().resolve("sim-trace-sweep.csv");
        Path svg = options.outDirectory().resolve("sim-trace-sweep.svg");
        AtomicFiles.write(csv, TraceSweep.csv(points));
        AtomicFiles.write(svg, TraceSweep.chart(points, trace.source(), subtitle));
        out.println("simulate --sweep: backend " + backend);
        out.println("simulate --sweep: wrote " + csv + " and " + svg + " (" + points.size() + " runs, 0 failures)");
        return OK;
    }

    /** The sweep's GPU budgets: {@code --sweep-budgets}, or 1/steps .. steps/steps of the working set. */
    private static List<Budget> sweepBudgets(SimOptions options) {
        if (!options.sweepBudgets().isEmpty()) {
            return options.sweepBudgets();
        }
        List<Budget> budgets = new ArrayList<>();
        for (int step = 1; step <= options.sweepSteps(); step++) {
            budgets.add(new Budget.ShareOfWorkingSet((double) step / options.sweepSteps()));
        }
        return budgets;
    }

    /** Something run with a disk directory: the given one (created), or a temporary one deleted after. */
    @FunctionalInterface
    private interface InDiskDirectory<R> {
        R run(Path diskDirectory) throws IOException;
    }

    /** Runs {@code body} in the run's disk directory; null (reported) when the cache could not be opened or closed. */
    private <R> R inDiskDirectory(SimOptions options, InDiskDirectory<R> body) throws IOException {
        Path diskDirectory = options.diskDirectory().orElse(null);
        boolean temporary = diskDirectory == null;
        if (temporary) {
            diskDirectory = Files.createTempDirectory("kvtier-sim-");
        } else {
            Files.createDirectories(diskDirectory);
        }
        try {
            try {
                return body.run(diskDirectory);
            } catch (RuntimeException e) {
                err.println("simulate: could not open or close the cache (backend "
                        + SimOptions.optionValue(options.backend()) + "): " + e);
                for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
                    err.println("  caused by " + cause);
                }
                return null;
            }
        } finally {
            if (temporary) {
                deleteRecursively(diskDirectory);
            }
        }
    }

    /** A budget below the largest segment could never make that segment resident: say so before starting. */
    private static void checkBudget(String option, Budget budget, Workload workload) throws UsageException {
        long bytes = budget.resolve(workload.peakLiveBytes());
        if (bytes < workload.largestSegmentBytes()) {
            throw new UsageException("bad value for " + option + ": '" + budget.spec() + "' (" + ByteSizes.format(bytes)
                    + " is smaller than this workload's largest segment, " + ByteSizes.format(workload.largestSegmentBytes())
                    + "; give at least that)");
        }
    }

    private int simulateOnce(SimOptions options, Workload workload) throws IOException {
        err.printf(Locale.ROOT, "simulate (Java %s): %,d requests over %,d sessions, peak working set %s, GPU budget %s, CPU budget %s%n",
                Runtime.version().feature(), workload.requests().size(), options.sessions(), ByteSizes.format(workload.peakLiveBytes()),
                ByteSizes.format(options.gpuBudget().resolve(workload.peakLiveBytes())),
                ByteSizes.format(options.cpuBudget().resolve(workload.peakLiveBytes())));
        RunResult result = runOnce(options, workload, options.gpuBudget().resolve(workload.peakLiveBytes()),
                Progress.Sink.of(options.progress(), err));
        if (result == null) {
            return FAILED;
        }
        out.print(result.summary());
        out.flush();
        result.failure().ifPresent(f -> err.println("simulate: FAILED: " + f));
        return result.failures() == 0 ? OK : FAILED;
    }

    /** One run on a fresh cache in its own disk directory; null when the cache could not be opened. */
    private RunResult runOnce(SimOptions options, Workload workload, long gpuBudgetBytes, Progress.Sink progress)
            throws IOException {
        return inDiskDirectory(options, diskDirectory -> SimulationRun.run(options, workload, factory,
                new CacheUnderTest.Settings(gpuBudgetBytes, options.cpuBudget().resolve(workload.peakLiveBytes()),
                        diskDirectory, options.effectivePageSizeBytes(), options.policy(), options.backend()),
                progress));
    }

    private int sweep(SimOptions options, Workload workload) throws IOException {
        List<SweepPoint> points = new ArrayList<>();
        long peak = workload.peakLiveBytes();
        err.printf(Locale.ROOT, "simulate --sweep: %d GPU budgets x %d policies, peak working set %s%n",
                sweepBudgets(options).size(), options.sweepPolicies().size(), ByteSizes.format(peak));
        Level libraryLevel = LIBRARY_LOG.getLevel();
        try {
            return sweepPoints(options, workload, points);
        } finally {
            LIBRARY_LOG.setLevel(libraryLevel);
        }
    }

    private int sweepPoints(SimOptions options, Workload workload, List<SweepPoint> points) throws IOException {
        long peak = workload.peakLiveBytes();
        String backend = "";
        for (PolicyChoice policy : options.sweepPolicies()) {
            for (Budget requested : sweepBudgets(options)) {
                long budget = Math.max(workload.largestSegmentBytes(), requested.resolve(peak));
                double share = (double) requested.resolve(peak) / peak;
                SimOptions pointOptions = options.withGpuBudgetAndPolicy(new Budget.Bytes(budget), policy);
                RunResult result = runOnce(pointOptions, workload, budget, Progress.Sink.off());
                if (result == null) {
                    return FAILED;
                }
                backend = result.backend();
                LIBRARY_LOG.setLevel(Level.WARNING);
                SweepPoint point = new SweepPoint(policy, share, result);
                points.add(point);
                err.printf(Locale.ROOT, "  %-4s GPU %5.1f%% (%9s): already on GPU %5.1f%%, from CPU %5.1f%%, from disk %5.1f%%, "
                                + "p99 %s, %.2f s, failures %d%n", policy.optionValue(), 100 * point.gpuShare(),
                        ByteSizes.format(budget), 100 * result.foundOnShare(Tier.GPU),
                        100 * result.foundOnShare(Tier.CPU), 100 * result.foundOnShare(Tier.DISK),
                        RunResult.micros(result.timeToResidentMicros(99)), result.playedNanos() / 1e9, result.failures());
                if (result.failures() != 0) {
                    out.print(result.summary());
                    err.println("simulate --sweep: stopped at the first failure; nothing written");
                    return FAILED;
                }
            }
        }
        List<String> subtitle = List.of(
                String.format(Locale.ROOT, "model %s; %,d sessions (zipf %s), %,d requests, turns of %s tokens, seed %d",
                        options.model().describe(), options.sessions(), options.zipfExponent(), options.requests(),
                        options.turnLengths().spec(), options.seed()),
                String.format(Locale.ROOT, "peak working set %s; CPU budget %s; backend %s; %d threads; %s",
                        ByteSizes.format(peak), options.cpuBudget().spec(), backend.split(" ")[0], options.threads(),
                        Instant.now().truncatedTo(ChronoUnit.SECONDS)));
        Path csv = options.outDirectory().resolve("sim-sweep.csv");
        Path svg = options.outDirectory().resolve("sim-sweep.svg");
        AtomicFiles.write(csv, SweepCsv.render(points));
        String workloadName = String.format(Locale.ROOT, "chat workload (%,d sessions, %,d requests)", options.sessions(),
                options.requests());
        AtomicFiles.write(svg, SweepChart.render(points, workloadName, subtitle));
        out.println("simulate --sweep: backend " + backend);
        out.println("simulate --sweep: wrote " + csv + " and " + svg + " (" + points.size() + " runs, 0 failures)");
        return OK;
    }

    static void deleteRecursively(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
