package dev.kvtier.bench.sim;

import dev.kvtier.ByteSizes;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import dev.kvtier.RemoteStoreStats;

import dev.kvtier.store.Tier;

/**
 * The figures of one trace run and the summary printed from them. Immutable once built: the counters are
 * handed over by the run that filled them and not modified after.
 *
 * @param options           the options of the run
 * @param settings          what the cache was opened with (resolved budgets, page size)
 * @param backend           the cache's description of its backend
 * @param trace             the trace played
 * @param playedNanos       wall time of the requests (without the final verification pass)
 * @param requestsDone      requests played
 * @param counters          what the player counted
 * @param cacheCounters     the cache's counters over the requests
 * @param failure           the failure that stopped the run, if any
 * @param leftover          what was left on the tiers after removing everything, if anything
 * @param stoppedEarly      {@code --max-seconds} ran out before every request was played
 * @param gpuCapacityBlocks blocks the GPU budget holds (budget / block footprint): the optimum's capacity
 * @param optimumHits       GPU hits of the offline optimum (Belady) over the references played
 * @param warmUp            the warm-up played in this JVM before this run ({@code --warmup-requests}), if any
 * @param remote            the cache's traffic with the remote block store ({@code --remote}; {@code NONE} without)
 */
record TraceResult(SimOptions options, CacheUnderTest.Settings settings, String backend, BlockTrace trace,
                          long playedNanos, int requestsDone, TraceCounters counters, CacheUnderTest.Counters cacheCounters,
                          Optional<String> failure, Optional<String> leftover, boolean stoppedEarly,
                          int gpuCapacityBlocks, long optimumHits, Optional<WarmUp> warmUp,
                          RemoteStoreStats remote) {

    /**
     * What warmed the JVM before the run: another trace played to the end through a throwaway cache that was
     * closed before the run's own cache was opened.
     *
     * @param source     how the warm-up trace was made (kind, requests, seed)
     * @param references its block references
     * @param seconds    wall time of its play
     * @param cpuMicrosPerReference the playing thread's CPU per reference in it (NaN when not measured)
     * @param failures   its failures (a warm-up with any is reported as the run's failure, not as a warm-up)
     */
    record WarmUp(String source, long references, double seconds, double cpuMicrosPerReference, long failures) {
    }

    /** This result, saying that {@code warm} warmed the JVM before it. */
    TraceResult withWarmUp(WarmUp warm) {
        return new TraceResult(options, settings, backend, trace, playedNanos, requestsDone, counters, cacheCounters, failure,
                leftover, stoppedEarly, gpuCapacityBlocks, optimumHits, Optional.of(warm), remote);
    }

    /** The playing thread's CPU time per block reference over the whole play, microseconds; NaN when not measured. */
    public double cpuMicrosPerReference() {
        return counters.playCpuNanos <= 0 || counters.references == 0 ? Double.NaN
                : counters.playCpuNanos / 1e3 / counters.references;
    }

    /** Failures of every kind: the one that stopped the run, transfers the cache reports failed, bytes left behind. Must be 0. */
    public long failures() {
        return (failure.isPresent() ? 1 : 0) + (leftover.isPresent() ? 1 : 0) + cacheCounters.failures();
    }

    /** Block references played. */
    public long references() {
        return counters.references;
    }

    /** Share of block references that found their block on {@code tier}, in [0, 1]. */
    public double foundOnShare(Tier tier) {
        return share(counters.foundOn[tier.ordinal()]);
    }

    /** Share of block references whose block was cached nowhere (first uses). */
    public double missingShare() {
        return share(counters.missing);
    }

    /** Share of block references that were in their request's cached prefix (any tier). */
    public double prefixHitShare() {
        return share(counters.prefixCached);
    }

    /** Share of block references that were in their request's prefix found on the GPU. */
    public double prefixOnGpuShare() {
        return share(counters.prefixOnGpu);
    }

    /** The offline optimum's share of references found on the GPU, for the same GPU capacity. */
    public double optimumGpuShare() {
        return share(optimumHits);
    }

    /** The policy's GPU hits over the optimum's, in [0, 1] (1 when the optimum has none either). */
    public double ratioToOptimum() {
        long policyHits = counters.foundOn[Tier.GPU.ordinal()];
        return optimumHits == 0 ? (policyHits == 0 ? 1 : Double.NaN) : (double) policyHits / optimumHits;
    }

    /** Block references per second of wall time. */
    public double referencesPerSecond() {
        return counters.references / seconds();
    }

    /**
     * Block references per second of wall time over the steady state: the requests after the first quarter of
     * the trace ({@link TraceCounters#steadyFromRequest}); NaN when the play did not get there.
     */
    public double steadyReferencesPerSecond() {
        return counters.steadyNanos <= 0 || counters.steadyReferences == 0 ? Double.NaN
                : counters.steadyReferences / (counters.steadyNanos / 1e9);
    }

    /** CPU time of the playing thread per block reference over the steady state, microseconds; NaN when not measured. */
    public double steadyCpuMicrosPerReference() {
        return counters.steadyCpuNanos <= 0 || counters.steadyReferences == 0 ? Double.NaN
                : counters.steadyCpuNanos / 1e3 / counters.steadyReferences;
    }

    /** Time-to-resident percentile in microseconds (0 when nothing was made resident). */
    public double timeToResidentMicros(double percentile) {
        return counters.timeToResident.getTotalCount() == 0 ? 0 : counters.timeToResident.getValueAtPercentile(percentile) / 1e3;
    }

    /** Bytes of all unique blocks: the base of percentage budgets. */
    public long uniqueBytes() {
        return (long) trace.uniqueBlocks() * options.blockBytes();
    }

    private double share(long count) {
        return counters.references == 0 ? 0 : (double) count / counters.references;
    }

    private double seconds() {
        return Math.max(playedNanos, 1) / 1e9;
    }

    /** The summary table, one figure a line. */
    public String summary() {
        List<String[]> rows = new ArrayList<>();
        rows.add(row("backend", backend));
        rows.add(row("jvm", "Java " + Runtime.version() + " at " + System.getProperty("java.home") + ", "
                + Runtime.getRuntime().availableProcessors() + " CPUs" + (warmUp.isPresent() ? "; warmed first (warm-up)" : "")));
        // Never hidden: a warmed JVM's figures are not a cold start's, and the summary must say which it was.
        warmUp.ifPresent(w -> rows.add(row("warm-up", String.format(Locale.ROOT, "%s, %,d block references, played through"
                        + " a throwaway cache (same budget shares, policy, backend, API) closed before this run's fresh cold"
                        + " cache opened; %.2f s, %s us CPU/ref, %d failures", w.source(), w.references(), w.seconds(),
                Double.isNaN(w.cpuMicrosPerReference()) ? "-" : String.format(Locale.ROOT, "%.2f", w.cpuMicrosPerReference()),
                w.failures()))));
        rows.add(row("trace", String.format(Locale.ROOT, "%s: %,d requests, %,d block references, %,d unique blocks; "
                        + "played in order on 1 thread, seed %d", trace.source(), trace.requests(), trace.references(),
                trace.uniqueBlocks(), options.seed())));
        rows.add(row("blocks", String.format(Locale.ROOT, "%s each (%d tokens), %s unique in all; page %s",
                ByteSizes.format(options.blockBytes()), BlockTrace.tokensPerBlock(), ByteSizes.format(uniqueBytes()),
                ByteSizes.format(settings.pageSizeBytes()))));
        rows.add(row("budgets", String.format(Locale.ROOT, "GPU %s = %,d blocks (%s of unique), CPU %s (%s), disk unbounded; policy %s",
                ByteSizes.format(settings.gpuBudgetBytes()), gpuCapacityBlocks, percent(settings.gpuBudgetBytes(), uniqueBytes()),
                ByteSizes.format(settings.cpuBudgetBytes()), percent(settings.cpuBudgetBytes(), uniqueBytes()),
                options.policy().optionValue())));
        rows.add(row("api", options.traceApi() == SimOptions.TraceApi.PREFIX
                ? "prefix blocks: per request ensurePrefixResident (GPU, pinned, one batch per tier pair; says where it found each block), storeBlocks"
                : "segments: one per block, one call per reference (ensureResident, saying where it found the block, or put)"));
        rows.add(row("wall time", String.format(Locale.ROOT, "%.2f s%s", seconds(),
                stoppedEarly ? " (stopped by --max-seconds after " + requestsDone + " requests)" : "")));
        rows.add(row("block refs/s", String.format(Locale.ROOT, "%,.1f  (whole run; %,d references: %,d made resident, %,d new blocks written, %s)",
                referencesPerSecond(), counters.references, counters.references - counters.missing, counters.blocksWritten,
                ByteSizes.format(counters.bytesWritten))));
        if (counters.playCpuNanos > 0 && counters.references > 0) {
            rows.add(row("cpu per ref", String.format(Locale.ROOT, "%.2f us of the playing thread's CPU time (%,.0f block refs"
                    + " per CPU-second; steadier than wall time on a busy machine)", counters.playCpuNanos / 1e3
                    / counters.references, counters.references / (counters.playCpuNanos / 1e9))));
        }
        if (!Double.isNaN(steadyReferencesPerSecond())) {
            // Worded so that neither "block refs/s" nor "cpu per ref" appears: scripts grep those for the whole run.
            String cpu = Double.isNaN(steadyCpuMicrosPerReference()) ? ""
                    : String.format(Locale.ROOT, ", %.2f us CPU/ref", steadyCpuMicrosPerReference());
            rows.add(row("steady state", String.format(Locale.ROOT, "%,.1f refs/s%s  (requests %,d-%,d: the first quarter,"
                            + " JIT warm-up included, left out; %,d references)", steadyReferencesPerSecond(), cpu,
                    counters.steadyFromRequest + 1, requestsDone, counters.steadyReferences)));
        }
        quarterRows(rows);
        rows.add(row("requests/s", String.format(Locale.ROOT, "%,.1f  (%,d requests)", requestsDone / seconds(), requestsDone)));
        StringBuilder hits = new StringBuilder();
        for (Tier tier : Tier.values()) {
            hits.append(hits.isEmpty() ? "" : ", ").append(String.format(Locale.ROOT, "%s %.1f%%", TierLabels.hitLabel(tier),
                    100 * foundOnShare(tier)));
        }
        rows.add(row("block hit rate", hits + String.format(Locale.ROOT, ", missing %.1f%%  (of %,d block references)",
                100 * missingShare(), counters.references)));
        rows.addAll(RemoteSummary.rows(options.describeRemote(), remote, counters.foundRemote,
                counters.references, options.blockBytes()));
        rows.add(row("prefix hit rate", String.format(Locale.ROOT,
                "%.1f%% of block references in their request's cached prefix (any tier), %.1f%% in its prefix on GPU",
                100 * prefixHitShare(), 100 * prefixOnGpuShare())));
        if (options.traceApi() == SimOptions.TraceApi.PREFIX) {
            rows.add(row("prefix restores", String.format(Locale.ROOT, "%,d cached prefixes pinned on GPU whole, %,d refused"
                    + " (no room for all of it: used where they were)", counters.prefixesPinned, counters.prefixesNotPinned)));
        }
        rows.add(row("GPU hit rate", String.format(Locale.ROOT, "policy %.1f%% / optimum %.1f%% = %.2f  (Belady, %,d blocks)",
                100 * foundOnShare(Tier.GPU), 100 * optimumGpuShare(), ratioToOptimum(), gpuCapacityBlocks)));
        rows.add(row("time-to-resident", String.format(Locale.ROOT, (options.traceApi() == SimOptions.TraceApi.PREFIX
                ? "per cached prefix: " : "per block: ") + "p50 %s  p99 %s  p999 %s  max %s",
                RunResult.micros(timeToResidentMicros(50)), RunResult.micros(timeToResidentMicros(99)),
                RunResult.micros(timeToResidentMicros(99.9)), RunResult.micros(counters.timeToResident.getTotalCount() == 0
                        ? 0 : counters.timeToResident.getMaxValue() / 1e3))));
        boolean anyMoved = false;
        for (Tier from : Tier.values()) {
            for (Tier to : Tier.values()) {
                long bytes = cacheCounters.bytesMoved(from, to);
                if (from != to && bytes > 0) {
                    rows.add(row(anyMoved ? "" : "bytes moved", String.format(Locale.ROOT, "%-4s -> %-4s %10s",
                            TierLabels.label(from), TierLabels.label(to), ByteSizes.format(bytes))));
                    anyMoved = true;
                }
            }
        }
        if (!anyMoved) {
            rows.add(row("bytes moved", "none between tiers (the GPU budget held everything)"));
        }
        rows.add(row("transfers", String.format(Locale.ROOT, "%,d", cacheCounters.transfers())));
        rows.add(row("bytes verified", String.format(Locale.ROOT, "%s in %,d read-backs (every %dth reference and a final pass; %s)",
                ByteSizes.format(counters.bytesVerified), counters.readBacks, SegmentBlockPlayer.VERIFY_EVERY,
                options.verify() == SimOptions.VerifyMode.FULL ? "every byte compared" : "CRC32C compared")));
        rows.add(row("failures", failures() + (failures() == 0 ? "" : "  <-- must be 0")));
        failure.ifPresent(f -> rows.add(row("first failure", f)));
        leftover.ifPresent(l -> rows.add(row("leak", l)));
        if (cacheCounters.failures() > 0) {
            rows.add(row("cache failures", cacheCounters.failures() + " transfers failed inside the cache (rolled back)"));
        }
        options.jfr().ifPresent(file -> rows.add(row("jfr recording", file + "  (kvtier events" + (warmUp.isPresent()
                ? ", the warm-up's included" : "") + "; jfr summary " + file + ")")));
        return SummaryTable.render("kvtier simulator summary (trace)", rows);
    }

    /**
     * One row per quarter of the play: its wall refs/s and the playing thread's CPU per reference beside what the
     * process spent meanwhile (page faults of the playing thread and of the process, CPU of the JIT compiler and GC
     * threads, collections): where a cold first quarter's extra time goes. Worded without "block refs/s" and "cpu per
     * ref", which scripts grep for the whole run.
     */
    private void quarterRows(List<String[]> rows) {
        boolean first = true;
        for (TraceCounters.Quarter q : counters.quarters) {
            JvmActivity a = q.spent();
            String cpu = a.threadCpuNanos() < 0 || q.references() == 0 ? "-"
                    : String.format(Locale.ROOT, "%.2f", a.threadCpuNanos() / 1e3 / q.references());
            rows.add(row(first ? "by quarter" : "", String.format(Locale.ROOT,
                    "requests %,d-%,d (%,d refs): %,.0f refs/s, %s us CPU/ref; page faults %s here, %s in all threads;"
                            + " CPU of JIT threads %s, of GC threads %s; %d collections (%,d ms)",
                    q.fromRequest() + 1, q.toRequest(), q.references(), q.references() / (Math.max(a.wallNanos(), 1) / 1e9), cpu,
                    count(a.threadMinorFaults()), count(a.processMinorFaults()), millis(a.compilerCpuNanos()),
                    millis(a.gcCpuNanos()), a.collections(), a.collectionMillis())));
            first = false;
        }
    }

    private static String count(long n) {
        return n < 0 ? "-" : String.format(Locale.ROOT, "%,d", n);
    }

    private static String millis(long nanos) {
        return nanos < 0 ? "-" : String.format(Locale.ROOT, "%,d ms", nanos / 1_000_000);
    }

    private static String[] row(String name, String value) {
        return SummaryTable.row(name, value);
    }

    private static String percent(long part, long whole) {
        return whole == 0 ? "-" : String.format(Locale.ROOT, "%.1f%%", 100.0 * part / whole);
    }
}
