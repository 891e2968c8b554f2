package dev.kvtier.bench.sim;

import dev.kvtier.ByteSizes;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import org.HdrHistogram.Histogram;

import dev.kvtier.store.Tier;

/**
 * The figures of one simulator run and the summary table printed from them. Immutable once built
 * (the histogram is owned by this result and not modified after).
 *
 * @param options            the options of the run
 * @param settings           what the cache was opened with (resolved budgets)
 * @param backend            the cache's description of its backend and why it was chosen
 * @param workload           the requests played
 * @param playedNanos        wall time of the requests (without the final verification pass)
 * @param requestsDone       requests served
 * @param residentCalls      ensureResident calls for earlier turns
 * @param foundOn            per tier ({@link Tier#ordinal()}): where those segments were before the call
 * @param segmentsWritten    new turns put
 * @param bytesWritten       their bytes
 * @param segmentsVerified   read-backs that matched
 * @param bytesVerified      their bytes
 * @param segmentsRemoved    segments removed (ended conversations and the final clean-up)
 * @param timeToResident     ensureResident latency in nanoseconds
 * @param counters           the cache's counters over the requests
 * @param failure            the failure that stopped the run, if any
 * @param leftover           what was left on the tiers after removing everything, if anything
 * @param stoppedEarly       {@code --max-seconds} ran out before every request was served
 */
public record RunResult(SimOptions options, CacheUnderTest.Settings settings, String backend, Workload workload,
                        long playedNanos, int requestsDone, long residentCalls, long[] foundOn, long segmentsWritten,
                        long bytesWritten, long segmentsVerified, long bytesVerified, long segmentsRemoved,
                        Histogram timeToResident, CacheUnderTest.Counters counters, Optional<String> failure,
                        Optional<String> leftover, boolean stoppedEarly) {

    public RunResult {
        foundOn = foundOn.clone();
    }

    /** Failures of every kind: the one that stopped the run, transfers the cache reports failed, bytes left behind. Must be 0. */
    public long failures() {
        return (failure.isPresent() ? 1 : 0) + (leftover.isPresent() ? 1 : 0) + counters.failures();
    }

    /** Share of ensureResident calls that found the segment on {@code tier}, in [0, 1]. */
    public double foundOnShare(Tier tier) {
        return residentCalls == 0 ? 0 : (double) foundOn[tier.ordinal()] / residentCalls;
    }

    /** Requests served per second of wall time. */
    public double requestsPerSecond() {
        return requestsDone / seconds();
    }

    /** Segments made resident (earlier turns made resident plus new turns written) per second. */
    public double segmentsPerSecond() {
        return (residentCalls + segmentsWritten) / seconds();
    }

    /** Time-to-resident percentile in microseconds (0 when nothing was made resident). */
    public double timeToResidentMicros(double percentile) {
        return timeToResident.getTotalCount() == 0 ? 0 : timeToResident.getValueAtPercentile(percentile) / 1e3;
    }

    private double seconds() {
        return Math.max(playedNanos, 1) / 1e9;
    }

    /** The summary table, one figure a line. */
    public String summary() {
        List<String[]> rows = new ArrayList<>();
        rows.add(row("backend", backend));
        rows.add(row("jvm", "Java " + Runtime.version() + " at " + System.getProperty("java.home") + ", "
                + Runtime.getRuntime().availableProcessors() + " CPUs"));
        rows.add(row("model", options.model().describe()));
        rows.add(row("workload", String.format(Locale.ROOT,
                "%,d sessions (zipf %s), %,d requests, turns of %s tokens, %d turns per conversation, seed %d, %d threads",
                options.sessions(), trim(options.zipfExponent()), workload.requests().size(),
                options.turnLengths().spec(), options.maxTurns(), options.seed(), options.threads())));
        rows.add(row("working set", String.format(Locale.ROOT, "peak %s live, %s written in all, largest segment %s",
                ByteSizes.format(workload.peakLiveBytes()), ByteSizes.format(workload.totalSegmentBytes()),
                ByteSizes.format(workload.largestSegmentBytes()))));
        rows.add(row("budgets", String.format(Locale.ROOT, "GPU %s (%s of peak), CPU %s (%s), disk unbounded; page %s; policy %s",
                ByteSizes.format(settings.gpuBudgetBytes()), percent(settings.gpuBudgetBytes(), workload.peakLiveBytes()),
                ByteSizes.format(settings.cpuBudgetBytes()), percent(settings.cpuBudgetBytes(), workload.peakLiveBytes()),
                ByteSizes.format(settings.pageSizeBytes()), options.policy().optionValue())));
        rows.add(row("wall time", String.format(Locale.ROOT, "%.2f s%s", seconds(),
                stoppedEarly ? " (stopped by --max-seconds after " + requestsDone + " requests)" : "")));
        rows.add(row("requests/s", String.format(Locale.ROOT, "%,.1f  (%,d requests)", requestsPerSecond(), requestsDone)));
        rows.add(row("segments/s", String.format(Locale.ROOT, "%,.1f  (%,d made resident + %,d new turns written, %s)",
                segmentsPerSecond(), residentCalls, segmentsWritten, ByteSizes.format(bytesWritten))));
        StringBuilder hits = new StringBuilder();
        for (Tier tier : Tier.values()) {
            hits.append(hits.isEmpty() ? "" : ", ").append(String.format(Locale.ROOT, "%s %.1f%%", TierLabels.hitLabel(tier),
                    100 * foundOnShare(tier)));
        }
        rows.add(row("hit rate", hits + String.format(Locale.ROOT, "  (of %,d ensureResident calls)", residentCalls)));
        rows.add(row("time-to-resident", String.format(Locale.ROOT, "p50 %s  p99 %s  p999 %s  max %s",
                micros(timeToResidentMicros(50)), micros(timeToResidentMicros(99)), micros(timeToResidentMicros(99.9)),
                micros(timeToResident.getTotalCount() == 0 ? 0 : timeToResident.getMaxValue() / 1e3))));
        boolean anyMoved = false;
        for (Tier from : Tier.values()) {
            for (Tier to : Tier.values()) {
                long bytes = counters.bytesMoved(from, to);
                if (from != to && bytes > 0) {
                    rows.add(row(anyMoved ? "" : "bytes moved", String.format(Locale.ROOT, "%-4s -> %-4s %10s  %8.3f GB/s over the run",
                            TierLabels.label(from), TierLabels.label(to), ByteSizes.format(bytes), bytes / seconds() / 1e9)));
                    anyMoved = true;
                }
            }
        }
        if (!anyMoved) {
            rows.add(row("bytes moved", "none between tiers (the GPU budget held everything)"));
        }
        rows.add(row("transfers", String.format(Locale.ROOT, "%,d", counters.transfers())));
        rows.add(row("bytes verified", String.format(Locale.ROOT, "%s in %,d read-backs (%s)", ByteSizes.format(bytesVerified),
                segmentsVerified, options.verify() == SimOptions.VerifyMode.FULL ? "every byte compared" : "CRC32C compared")));
        rows.add(row("failures", failures() + (failures() == 0 ? "" : "  <-- must be 0")));
        failure.ifPresent(f -> rows.add(row("first failure", f)));
        leftover.ifPresent(l -> rows.add(row("leak", l)));
        if (counters.failures() > 0) {
            rows.add(row("cache failures", counters.failures() + " transfers failed inside the cache (rolled back)"));
        }
        options.jfr().ifPresent(file -> rows.add(row("jfr recording", file + "  (kvtier events; jfr summary " + file + ")")));
        return SummaryTable.render("kvtier simulator summary", rows);
    }

    private static String[] row(String name, String value) {
        return SummaryTable.row(name, value);
    }

    private static String percent(long part, long whole) {
        return whole == 0 ? "-" : String.format(Locale.ROOT, "%.0f%%", 100.0 * part / whole);
    }

    private static String trim(double d) {
        return d == Math.rint(d) ? String.format(Locale.ROOT, "%.1f", d) : Double.toString(d);
    }

    /** Microseconds with a unit that keeps three significant digits readable. */
    static String micros(double us) {
        if (us >= 10_000) {
            return String.format(Locale.ROOT, "%.1f ms", us / 1e3);
        }
        if (us >= 1_000) {
            return String.format(Locale.ROOT, "%.2f ms", us / 1e3);
        }
        return String.format(Locale.ROOT, "%.1f us", us);
    }
}
