package dev.kvtier.bench.soak;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * A soak run's figures, merged epoch by epoch, and their Markdown: faults injected by kind, operations by kind,
 * failures by exception type (expected or not), wrong bytes, hangs and leaks. Called from the soak's driver thread only.
 */
final class SoakReport {
    /** Per fault kind. */
    private static final class KindRow {
        long epochs;
        long ops;
        long failed;
        long wrongBytes;
        long wrongMetadata;
        long hangs;
        long leaks;
    }

    /** Per failure label. */
    private static final class FailureRow {
        long count;
        boolean expected;
        String example;
        final Map<Fault, Long> byKind = new EnumMap<>(Fault.class);
    }

    private final SoakOptions options;
    private final Map<Fault, KindRow> kinds = new EnumMap<>(Fault.class);
    private final Map<Fault, String> skipped = new EnumMap<>(Fault.class);
    private final Map<String, long[]> injected = new TreeMap<>(); // label -> armed, fired
    private final Map<String, Fault> injectedKind = new LinkedHashMap<>();
    private final long[][] ops = new long[Op.values().length][3]; // count, absent, failed
    private final Map<String, FailureRow> failures = new TreeMap<>();
    private final Map<String, long[]> leaks = new TreeMap<>(); // kind -> count, epochs
    private final Map<String, long[]> deadContextResidue = new TreeMap<>(); // kind -> count, epochs
    private final List<String> leakExamples = new ArrayList<>();
    private final List<String> wrongExamples = new ArrayList<>();
    private final List<String> hangExamples = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private boolean nativeChecked;
    private long lateCleanUps;
    private long maxSettledMillis;
    private long verifiedReads;
    private long verifiedBytes;
    private long lostSegments;
    private long closes;
    private long maxCloseMillis;
    private long elapsedMillis;
    private String backendDescription = "(no cache opened)";

    SoakReport(SoakOptions options) {
        this.options = options;
    }

    void skipped(Fault fault, String reason) {
        skipped.put(fault, reason);
    }

    void note(String note) {
        notes.add(note);
    }

    void backend(String description) {
        backendDescription = description;
    }

    void elapsed(long millis) {
        elapsedMillis = millis;
    }

    /** Adds one finished epoch: its counters, what its close left behind, and how long the close took. */
    void merge(EpochCounters epoch, Map<String, LeakCheck.Leak> left, long closeMillis, long settledMillis) {
        if (left.isEmpty() && settledMillis > 50) {
            lateCleanUps++;
            maxSettledMillis = Math.max(maxSettledMillis, settledMillis);
        }
        KindRow row = kinds.computeIfAbsent(epoch.fault, k -> new KindRow());
        row.epochs++;
        for (Op op : Op.values()) {
            long count = epoch.ops[op.ordinal()].sum();
            ops[op.ordinal()][0] += count;
            ops[op.ordinal()][1] += epoch.absent[op.ordinal()].sum();
            ops[op.ordinal()][2] += epoch.failedOps[op.ordinal()].sum();
            row.ops += count;
            row.failed += epoch.failedOps[op.ordinal()].sum();
        }
        epoch.faultsArmed.forEach((label, n) -> {
            injected.computeIfAbsent(label, l -> new long[2])[0] += n.sum();
            injectedKind.putIfAbsent(label, epoch.fault);
        });
        epoch.faultsFired.forEach((label, n) -> injected.computeIfAbsent(label, l -> new long[2])[1] += n.sum());
        epoch.failures.forEach((label, failure) -> {
            FailureRow f = failures.computeIfAbsent(label, l -> new FailureRow());
            long n = failure.count.sum();
            f.count += n;
            f.expected = f.count == n ? failure.expected : f.expected && failure.expected;
            if (f.example == null || (!failure.expected && f.expected)) {
                f.example = failure.example;
            }
            f.byKind.merge(epoch.fault, n, Long::sum);
        });
        row.wrongBytes += epoch.wrongBytes.sum();
        row.wrongMetadata += epoch.wrongMetadata.sum();
        row.hangs += epoch.hangs.sum();
        addExamples(wrongExamples, epoch.wrongExamples);
        addExamples(hangExamples, epoch.hangExamples);
        verifiedReads += epoch.verifiedReads.sum();
        verifiedBytes += epoch.verifiedBytes.sum();
        lostSegments += epoch.lostSegments.sum();
        closes++;
        maxCloseMillis = Math.max(maxCloseMillis, closeMillis);
        left.forEach((kind, leak) -> {
            // A dead (sticky) context cannot free what the device holds: on real CUDA only process exit or
            // cudaDeviceReset reclaims it. So the fake's objects left by a close in a dead context are reported
            // apart; threads, descriptors and files are the cache's own and count as leaks there too.
            boolean residue = epoch.fault == Fault.STICKY && kind.startsWith("fake ");
            long[] into = (residue ? deadContextResidue : leaks).computeIfAbsent(kind, k -> new long[2]);
            into[0] += leak.count();
            into[1]++;
            if (!residue) {
                row.leaks += objects(kind, leak.count());
                if (leakExamples.size() < EpochCounters.EXAMPLES) {
                    leakExamples.add("epoch " + epoch.epoch + " (" + epoch.fault + "): " + kind + ": " + leak.details());
                }
            }
        });
    }

    /** A leak seen once for the whole run (native memory growth), not after one close. */
    void runLeak(String kind, LeakCheck.Leak leak) {
        long[] into = leaks.computeIfAbsent(kind, k -> new long[2]);
        into[0] += leak.count();
        into[1]++;
        leakExamples.add("whole run: " + kind + ": " + leak.details());
    }

    private static void addExamples(List<String> into, List<String> from) {
        synchronized (from) {
            for (String example : from) {
                if (into.size() < EpochCounters.EXAMPLES) {
                    into.add(example);
                }
            }
        }
    }

    long wrongBytes() {
        return kinds.values().stream().mapToLong(r -> r.wrongBytes).sum();
    }

    long wrongMetadata() {
        return kinds.values().stream().mapToLong(r -> r.wrongMetadata).sum();
    }

    long hangs() {
        return kinds.values().stream().mapToLong(r -> r.hangs).sum();
    }

    /** Things left behind: objects, and for a kind measured in bytes one per epoch that left some. */
    long leakCount() {
        return leaks.entrySet().stream().mapToLong(e -> e.getKey().endsWith("bytes") ? Math.max(1, e.getValue()[1])
                : e.getValue()[0]).sum();
    }

    /** A leak's count as objects: a kind measured in bytes counts once (its bytes are shown in the leak table). */
    private static long objects(String kind, long count) {
        return kind.endsWith("bytes") ? 1 : count;
    }

    long unexpectedFailures() {
        return failures.values().stream().filter(f -> !f.expected).mapToLong(f -> f.count).sum();
    }

    long verifiedReads() {
        return verifiedReads;
    }

    /** Armed and fired counts per injected fault label. */
    Map<String, long[]> injected() {
        return injected;
    }

    /** Whether nothing went wrong: no wrong byte or metadata, no hang, no leak, no unexpected failure. */
    boolean clean() {
        return wrongBytes() == 0 && wrongMetadata() == 0 && hangs() == 0 && leakCount() == 0 && unexpectedFailures() == 0;
    }

    /** The summary as Markdown (also what the console shows). */
    String markdown(String command) {
        StringBuilder md = new StringBuilder();
        md.append("### Soak: ").append(options.backend().name().toLowerCase(Locale.ROOT)).append(" backend, ")
                .append(options.threads()).append(" threads, ").append(seconds(elapsedMillis)).append(", seed ")
                .append(options.seed()).append("\n\n");
        md.append("`").append(command).append("`  \n");
        md.append("Backend: ").append(backendDescription).append("  \n");
        md.append(String.format(Locale.ROOT, "Result: **%s** -- %,d reads verified (%s), %d wrong bytes, %d wrong metadata, "
                        + "%d hangs, %d leaks, %d unexpected failures; %d epochs (one cache each, closed and checked), "
                        + "slowest close %d ms, transfer timeout %d ms, hang bound %d s.%n%n",
                clean() ? "clean" : "FAILED", verifiedReads, mib(verifiedBytes), wrongBytes(), wrongMetadata(), hangs(),
                leakCount(), unexpectedFailures(), closes, maxCloseMillis, options.transferTimeout().toMillis(),
                options.hangBound().toSeconds()));

        md.append("| Fault kind | Epochs | Operations | Failed | Wrong bytes | Wrong metadata | Hangs | Leaks |\n");
        md.append("|---|--:|--:|--:|--:|--:|--:|--:|\n");
        for (Fault fault : Fault.values()) {
            KindRow r = kinds.get(fault);
            if (r != null) {
                md.append(String.format(Locale.ROOT, "| %s | %d | %,d | %,d | %d | %d | %d | %d |%n", fault.label, r.epochs,
                        r.ops, r.failed, r.wrongBytes, r.wrongMetadata, r.hangs, r.leaks));
            } else if (skipped.containsKey(fault)) {
                md.append("| ").append(fault.label).append(" | skipped: ").append(skipped.get(fault)).append(" | | | | | | |\n");
            }
        }

        md.append("\n| Fault injected | Kind | Armed | Fired |\n|---|---|--:|--:|\n");
        injected.forEach((label, n) -> md.append(String.format(Locale.ROOT, "| `%s` | %s | %,d | %,d |%n", label,
                injectedKind.getOrDefault(label, null), n[0], n[1])));

        md.append("\n| Operation | Calls | Key absent | Failed |\n|---|--:|--:|--:|\n");
        for (Op op : Op.values()) {
            long[] n = ops[op.ordinal()];
            md.append(String.format(Locale.ROOT, "| %s | %,d | %,d | %,d |%n", op.label, n[0], n[1], n[2]));
        }

        md.append("\n| Failure (exception <- root cause) | Count | Expected | Under fault kinds |\n|---|--:|---|---|\n");
        failures.entrySet().stream().sorted((a, b) -> Long.compare(b.getValue().count, a.getValue().count))
                .forEach(e -> md.append(String.format(Locale.ROOT, "| %s | %,d | %s | %s |%n", e.getKey(), e.getValue().count,
                        e.getValue().expected ? "yes" : "**no**", kindsOf(e.getValue().byKind))));

        md.append("\n| Left after close (a kind in bytes counts as one leak) | Count | Epochs |\n|---|--:|--:|\n");
        if (leaks.isEmpty()) {
            md.append("| nothing: kvtier-* threads, file descriptors, fake device/pinned/registered/streams/events, "
                    + "disk files").append(nativeChecked ? ", native memory (NMT)" : "").append(" | 0 | |\n");
        }
        leaks.forEach((kind, n) -> md.append(String.format(Locale.ROOT, "| %s | %,d | %d |%n", kind, n[0], n[1])));
        deadContextResidue.forEach((kind, n) -> md.append(String.format(Locale.ROOT,
                "| %s held by a dead (sticky) context (expected: only process exit frees it) | %,d | %d |%n", kind, n[0], n[1])));

        if (lateCleanUps > 0) {
            md.append(String.format(Locale.ROOT, "%nCloses whose clean-up finished after close() returned (a reaper "
                    + "draining a timed-out copy's stream, by design): %d, the slowest %d ms after.%n", lateCleanUps,
                    maxSettledMillis));
        }
        md.append(String.format(Locale.ROOT, "%nSegments lost to a failed move's last resort (removed, reported by the "
                + "cache): %,d.%n", lostSegments));
        appendList(md, "Wrong bytes / metadata, examples", wrongExamples);
        appendList(md, "Hangs", hangExamples);
        appendList(md, "Leaks, examples", leakExamples);
        List<String> unexpected = new ArrayList<>();
        failures.forEach((label, f) -> {
            if (!f.expected) {
                unexpected.add(label + ": " + f.example);
            }
        });
        appendList(md, "Unexpected failures, first of each", unexpected);
        appendList(md, "Notes", notes);
        return md.toString();
    }

    /** Whether NMT was on, so native memory was checked too. */
    void nativeChecked(boolean checked) {
        nativeChecked = checked;
    }

    private static String kindsOf(Map<Fault, Long> byKind) {
        StringBuilder text = new StringBuilder();
        byKind.entrySet().stream().sorted((a, b) -> Long.compare(b.getValue(), a.getValue())).forEach(e -> {
            if (!text.isEmpty()) {
                text.append(", ");
            }
            text.append(e.getKey().name().toLowerCase(Locale.ROOT).replace('_', '-')).append(' ').append(e.getValue());
        });
        return text.toString();
    }

    private static void appendList(StringBuilder md, String title, List<String> items) {
        if (items.isEmpty()) {
            return;
        }
        md.append("\n").append(title).append(":\n\n");
        for (String item : items) {
            md.append("- ").append(item.contains("\n") ? "\n```\n" + item.strip() + "\n```" : item).append('\n');
        }
    }

    private static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / (double) (1 << 20));
    }

    private static String seconds(long millis) {
        long s = millis / 1000;
        return s >= 60 ? (s / 60) + " min " + (s % 60) + " s" : s + " s";
    }
}
