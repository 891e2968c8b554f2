package dev.kvtier.bench.sim;

import dev.kvtier.bench.trace.ReferenceLru;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

import dev.kvtier.bench.trace.MooncakeTrace;
import dev.kvtier.bench.trace.TraceGenerator;
import dev.kvtier.bench.trace.TraceRequest;
import dev.kvtier.store.Tier;

/**
 * The trace mode end to end over {@link FakeCache} (segment API: the fake has no prefix-block view; the prefix
 * path runs over the real cache in {@link KvTierCacheSimulationTest}): generation, playing, hit rates against
 * the optimum, sweep.
 */
class SimulateTraceTest {
    /** Small: a few hundred requests; GPU 5% and CPU 10% of the unique blocks force spills to disk. */
    private static final String[] SMALL = {"--workload", "trace", "--trace-api", "segments", "--requests", "300",
            "--gpu-budget", "5%", "--cpu-budget", "10%", "--progress", "off"};

    @TempDir
    Path temp;

    private record Outcome(int status, String out, String err) {
    }

    /** Plays the 203-request chat trace of seed 5 (written to a file) through the segment API of a fake cache. */
    private Outcome playChat203OnSegments() throws Exception {
        Path file = temp.resolve("chat.jsonl");
        MooncakeTrace.writeAll(file, TraceGenerator.generate(TraceGenerator.Kind.CHAT, 203, 5));
        Outcome o = simulate(FakeCache::new, "--workload", "trace", "--trace-api", "segments", "--trace", file.toString(),
                "--gpu-budget", "5%", "--cpu-budget", "10%", "--progress", "off");
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        return o;
    }

    private static Outcome simulate(CacheUnderTest.Factory factory, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = new Simulate(new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), factory).run(args);
        return new Outcome(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static String[] with(String[] base, String... more) {
        String[] all = java.util.Arrays.copyOf(base, base.length + more.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return all;
    }

    private static final CacheUnderTest.Factory NO_CACHE = s -> {
        throw new AssertionError("no cache should be opened");
    };

    @Test
    void generateWritesATraceAndOpensNoCache() throws Exception {
        Path file = temp.resolve("chat.jsonl");
        Outcome o = simulate(NO_CACHE, "--generate-trace", "chat", "--trace", file.toString(), "--requests", "120",
                "--seed", "9");
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        assertEquals(TraceGenerator.generate(TraceGenerator.Kind.CHAT, 120, 9), MooncakeTrace.readAll(file));
        assertTrue(o.out().startsWith("simulate: wrote " + file + ": 120 requests, "), o.out());
    }

    /**
     * The fake's GPU tier is an exact LRU over whole blocks (every reference touches its block, in trace order),
     * so the simulator's count of references found on the GPU must be what a reference LRU over the same
     * sequence counts: this pins down the player's bookkeeping. The optimum is never below it.
     */
    @Test
    void aPlayedFileCountsHitsExactlyAndSetsThemAgainstTheOptimum() throws Exception {
        Path file = temp.resolve("doc.jsonl");
        List<TraceRequest> requests = TraceGenerator.generate(TraceGenerator.Kind.DOC_QA, 300, 4);
        MooncakeTrace.writeAll(file, requests);
        Outcome o = simulate(FakeCache::new, "--workload", "trace", "--trace-api", "segments", "--trace", file.toString(), "--gpu-budget", "5%",
                "--cpu-budget", "10%", "--progress", "off", "--verify", "full");
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        assertTrue(o.out().contains("failures          0"), o.out());

        BlockTrace trace = BlockTrace.of(requests, "t");
        int capacity = (int) (Math.max(1, (long) Math.ceil(0.05 * trace.uniqueBlocks() * 4096)) / 4096);
        long references = trace.references();
        long lru = ReferenceLru.hits(trace.referenceSequence(trace.references()), capacity);
        Matcher hits = Pattern.compile("on GPU ([0-9.]+)%, from CPU ([0-9.]+)%, from disk ([0-9.]+)%, missing ([0-9.]+)%")
                .matcher(o.out());
        assertTrue(hits.find(), o.out());
        assertEquals(String.format(Locale.ROOT, "%.1f", 100.0 * lru / references), hits.group(1), o.out());
        assertEquals(String.format(Locale.ROOT, "%.1f", 100.0 * trace.uniqueBlocks() / references), hits.group(4),
                "only first uses miss: " + o.out());
        assertTrue(Double.parseDouble(hits.group(3)) > 0, "something came back from disk: " + o.out());
        Matcher gpu = Pattern.compile("GPU hit rate\\s+policy ([0-9.]+)% / optimum ([0-9.]+)% = ([0-9.]+)  \\(Belady, ([0-9,]+) blocks\\)")
                .matcher(o.out());
        assertTrue(gpu.find(), o.out());
        assertEquals(String.format(Locale.ROOT, "%,d", capacity), gpu.group(4));
        assertTrue(Double.parseDouble(gpu.group(2)) >= Double.parseDouble(gpu.group(1)), o.out());
        assertTrue(Double.parseDouble(gpu.group(3)) <= 1.0, o.out());
        assertTrue(o.out().contains("every byte compared"), o.out());
        assertTrue(o.out().matches("(?s).*prefix hit rate\\s+[0-9.]+% of block references.*"), o.out());
    }

    /**
     * The steady-state line covers exactly the requests after the first quarter of the trace and their
     * references, beside the whole-run figures (which keep their labels: scripts read them).
     */
    @Test
    void theSteadyStateLineCoversTheRequestsAfterTheFirstQuarter() throws Exception {
        BlockTrace trace = BlockTrace.of(TraceGenerator.generate(TraceGenerator.Kind.CHAT, 203, 5), "t");
        Outcome o = playChat203OnSegments();
        Matcher whole = Pattern.compile("block refs/s\\s+([0-9,.]+)  \\(whole run; ([0-9,]+) references").matcher(o.out());
        assertTrue(whole.find(), o.out());
        assertEquals(String.format(Locale.ROOT, "%,d", trace.references()), whole.group(2), o.out());
        Matcher steady = Pattern.compile("steady state\\s+([0-9,.]+) refs/s(, ([0-9.]+) us CPU/ref)?  \\(requests ([0-9,]+)-([0-9,]+):"
                + " the first quarter, JIT warm-up included, left out; ([0-9,]+) references\\)").matcher(o.out());
        assertTrue(steady.find(), o.out());
        assertEquals(String.format(Locale.ROOT, "%,d", 203 / 4 + 1), steady.group(4), o.out());
        assertEquals(String.format(Locale.ROOT, "%,d", 203), steady.group(5), o.out());
        assertEquals(String.format(Locale.ROOT, "%,d", trace.references() - trace.referencesOfFirst(203 / 4)), steady.group(6),
                o.out());
        assertTrue(Double.parseDouble(steady.group(1).replace(",", "")) > 0, o.out());
        assertEquals(1, o.out().split("block refs/s", -1).length - 1, "one whole-run refs/s line: " + o.out());
        assertEquals(1, o.out().split("cpu per ref", -1).length - 1, "one whole-run CPU line: " + o.out());
    }

    /**
     * The quarters' rows cover the play in four runs of requests (a quarter of the trace each, rounded down at the
     * edges as the steady state's start is) whose references add up to the whole run's.
     */
    @Test
    void theQuarterRowsCoverThePlayAndAddUpToTheWholeRun() throws Exception {
        BlockTrace trace = BlockTrace.of(TraceGenerator.generate(TraceGenerator.Kind.CHAT, 203, 5), "t");
        Outcome o = playChat203OnSegments();
        Matcher q = Pattern.compile("(by quarter|          )\\s+requests ([0-9,]+)-([0-9,]+) \\(([0-9,]+) refs\\): ([0-9,]+) refs/s,"
                + " ([0-9.]+|-) us CPU/ref; page faults ([0-9,]+|-) here, ([0-9,]+|-) in all threads; CPU of JIT threads"
                + " ([0-9,]+ ms|-), of GC threads ([0-9,]+ ms|-); ([0-9]+) collections \\(([0-9,]+) ms\\)").matcher(o.out());
        int[][] expected = {{1, 50}, {51, 101}, {102, 152}, {153, 203}};
        for (int[] quarter : expected) {
            assertTrue(q.find(), "quarter " + quarter[0] + "-" + quarter[1] + " in " + o.out());
            assertEquals(quarter[0], number(q.group(2)), q.group());
            assertEquals(quarter[1], number(q.group(3)), q.group());
            assertEquals(trace.referencesOfFirst(quarter[1]) - trace.referencesOfFirst(quarter[0] - 1), number(q.group(4)),
                    q.group());
        }
        assertFalse(q.find(), "four quarters, no more: " + o.out());
        assertEquals(1, o.out().split("by quarter", -1).length - 1, o.out());
        assertEquals(1, o.out().split("block refs/s", -1).length - 1, "scripts' whole-run line stays unique: " + o.out());
        assertEquals(1, o.out().split("cpu per ref", -1).length - 1, "scripts' whole-run line stays unique: " + o.out());
        assertEquals(1, o.out().split("steady state", -1).length - 1, "scripts' steady line stays unique: " + o.out());
    }

    /** A trace of fewer than four requests has empty quarters: they are left out, the requests each have one. */
    @Test
    void aTraceOfThreeRequestsHasThreeQuarterRows() throws Exception {
        Path file = temp.resolve("three.jsonl");
        MooncakeTrace.writeAll(file, List.of(new TraceRequest(0, 1024, 1, new long[] {0, 1}),
                new TraceRequest(1, 1024, 1, new long[] {2, 1}), new TraceRequest(2, 1024, 1, new long[] {0, 1})));
        Outcome o = simulate(FakeCache::new, "--workload", "trace", "--trace-api", "segments", "--trace", file.toString(),
                "--gpu-budget", "8KiB", "--cpu-budget", "8KiB", "--progress", "off");
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        Matcher q = Pattern.compile("requests ([0-9]+)-([0-9]+) \\(2 refs\\)").matcher(o.out());
        for (int r = 1; r <= 3; r++) {
            assertTrue(q.find(), "request " + r + ": " + o.out());
            assertEquals(r + "-" + r, q.group(1) + "-" + q.group(2), o.out());
        }
        assertFalse(q.find(), o.out());
    }

    private static long number(String text) {
        return Long.parseLong(text.replace(",", ""));
    }

    /** The rows of the summary that a warm-up must leave exactly as they are: what the measured run did. */
    private static final Pattern MEASURED = Pattern.compile("(?m)^  (trace|blocks|budgets|api|block hit rate|prefix hit rate"
            + "|prefix restores|GPU hit rate|bytes moved|transfers|bytes verified|failures) .*$|^ {20}\\S.* -> .*$");

    private static List<String> measuredRows(String summary) {
        return MEASURED.matcher(summary).results().map(java.util.regex.MatchResult::group).toList();
    }

    /**
     * {@code --warmup-requests}: a throwaway cache plays another generated trace of the same kind (seed + 1) and is
     * closed before the measured run's own cache opens; the measured run's hits, moves and transfers are exactly
     * those of the cold run, and the summary says the JVM was warmed and by what.
     */
    @Test
    void aWarmUpPlaysAnotherTraceOnAThrowawayCacheAndLeavesTheMeasuredRunAsItWas() {
        List<String> events = new java.util.ArrayList<>();
        List<CacheUnderTest.Settings> opened = new java.util.ArrayList<>();
        CacheUnderTest.Factory recording = settings -> {
            int n = opened.size();
            opened.add(settings);
            events.add("open " + n);
            return new FakeCache(settings) {
                @Override
                public synchronized void close() {
                    events.add("close " + n);
                    super.close();
                }
            };
        };
        Outcome cold = simulate(FakeCache::new, with(SMALL, "--generate-trace", "tool-agent"));
        Outcome warm = simulate(recording, with(SMALL, "--generate-trace", "tool-agent", "--warmup-requests", "150"));
        assertEquals(Simulate.OK, cold.status(), cold.err() + cold.out());
        assertEquals(Simulate.OK, warm.status(), warm.err() + warm.out());
        assertEquals(List.of("open 0", "close 0", "open 1", "close 1"), events, "the warm-up's cache is closed first");

        List<TraceRequest> warmRequests = TraceGenerator.generate(TraceGenerator.Kind.TOOL_AGENT, 150, 43);
        BlockTrace warmTrace = BlockTrace.of(warmRequests, "w");
        assertTrue(warm.out().contains(String.format(Locale.ROOT, "warm-up           generated tool-agent trace"
                + " (150 requests, seed 43), %,d block references, played through a throwaway cache", warmTrace.references())),
                warm.out());
        assertTrue(warm.out().matches("(?s).*\\n  jvm .* CPUs; warmed first \\(warm-up\\)\\n.*"), warm.out());
        assertTrue(warm.out().matches("(?s).*warm-up .*; [0-9.]+ s, ([0-9.]+|-) us CPU/ref, 0 failures\\n.*"), warm.out());
        assertTrue(warm.err().contains("simulate: warming the JVM first: generated tool-agent trace (150 requests, seed 43)"),
                warm.err());
        assertFalse(cold.out().contains("  warm-up ") || cold.out().contains("warmed"), "a cold run's summary is today's: "
                + cold.out());
        // The warm-up's budgets are the same shares of its own trace's unique blocks.
        long footprint = 4096;
        assertEquals(Math.max(footprint, new Budget.ShareOfWorkingSet(0.05).resolve(4096L * warmTrace.uniqueBlocks())),
                opened.get(0).gpuBudgetBytes());
        assertEquals(Math.max(footprint, new Budget.ShareOfWorkingSet(0.10).resolve(4096L * warmTrace.uniqueBlocks())),
                opened.get(0).cpuBudgetBytes());
        assertFalse(opened.get(0).diskDirectory().equals(opened.get(1).diskDirectory()), "a disk directory of its own");

        List<String> coldRows = measuredRows(cold.out());
        assertTrue(coldRows.size() >= 12, coldRows.toString());
        assertEquals(coldRows, measuredRows(warm.out()), "the measured run does not depend on the warm-up");
    }

    /** A trace read from a file has no kind: the warm-up generates chat. */
    @Test
    void aFileTraceIsWarmedByAGeneratedChatTrace() throws Exception {
        Path file = temp.resolve("doc.jsonl");
        MooncakeTrace.writeAll(file, TraceGenerator.generate(TraceGenerator.Kind.DOC_QA, 120, 4));
        Outcome o = simulate(FakeCache::new, "--workload", "trace", "--trace-api", "segments", "--trace", file.toString(),
                "--gpu-budget", "5%", "--cpu-budget", "10%", "--progress", "off", "--seed", "9", "--warmup-requests", "40");
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        assertTrue(o.out().contains("warm-up           generated chat trace (40 requests, seed 10), "), o.out());
        assertTrue(o.out().contains("trace             " + file + ": 120 requests"), o.out());
    }

    /** A warm-up that fails is the run's failure: the measured run is not started on a JVM that just lost bytes. */
    @Test
    void aFailedWarmUpFailsTheRunAndStartsNoMeasuredRun() {
        int[] opens = {0};
        CacheUnderTest.Factory damagedFirst = settings -> opens[0]++ == 0
                ? new FakeCache(settings, Tier.DISK, FakeCache.Damage.FLIP_BYTE) : new FakeCache(settings);
        Outcome o = simulate(damagedFirst, with(SMALL, "--generate-trace", "chat", "--warmup-requests", "300"));
        assertEquals(Simulate.FAILED, o.status(), o.out());
        assertEquals(1, opens[0], "no measured run after a failed warm-up");
        assertTrue(o.err().contains("simulate: FAILED in the warm-up: block b"), o.err());
        assertTrue(o.err().contains("the warm-up failed; the measured run was not started"), o.err());
        assertTrue(o.out().contains("generated chat trace (300 requests, seed 43)"), "the warm-up's own summary: " + o.out());
    }

    /**
     * Prefix counting on a hand-checked trace over the fake's LRU with room for 2 blocks. Request 1 [0, 1]:
     * both new. Request 2 [2, 1]: 2 is new and pushes 0 to CPU; 1 is on GPU. Request 3 [0, 1]: 0 comes from
     * CPU (pushing 2 out, the least recently used), 1 is still on GPU. So 2 of 6 references hit the GPU, but
     * none lies in a prefix found on the GPU; request 3's two blocks are its cached prefix.
     */
    @Test
    void prefixHitsCountOnlyLeadingBlocks() throws Exception {
        Path file = temp.resolve("hand.jsonl");
        MooncakeTrace.writeAll(file, List.of(new TraceRequest(0, 1024, 1, new long[] {0, 1}),
                new TraceRequest(1, 1024, 1, new long[] {2, 1}), new TraceRequest(2, 1024, 1, new long[] {0, 1})));
        Outcome o = simulate(FakeCache::new, "--workload", "trace", "--trace-api", "segments", "--trace", file.toString(), "--gpu-budget", "8KiB",
                "--cpu-budget", "8KiB", "--progress", "off");
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        assertTrue(o.out().contains("on GPU 33.3%, from CPU 16.7%, from disk 0.0%, missing 50.0%"), o.out());
        assertTrue(o.out().contains("33.3% of block references in their request's cached prefix (any tier), 0.0% in its prefix on GPU"), o.out());
        // The optimum keeps 1 through request 2 and has 0 back for request 3 by evicting 2 (never used again): 2 hits too.
        assertTrue(o.out().contains("policy 33.3% / optimum 33.3% = 1.00  (Belady, 2 blocks)"), o.out());
    }

    @Test
    void everyGeneratorKindPlaysCleanInMemory() {
        for (TraceGenerator.Kind kind : TraceGenerator.Kind.values()) {
            Outcome o = simulate(FakeCache::new, with(SMALL, "--generate-trace", kind.optionValue()));
            assertEquals(Simulate.OK, o.status(), kind + ": " + o.err() + o.out());
            assertTrue(o.out().contains("generated " + kind.optionValue() + " trace (300 requests, seed 42)"), o.out());
        }
    }

    @Test
    void aCorruptedBlockFromDiskIsCaughtAndNamed() {
        Outcome o = simulate(s -> new FakeCache(s, Tier.DISK, FakeCache.Damage.FLIP_BYTE), with(SMALL, "--generate-trace", "chat"));
        assertEquals(Simulate.FAILED, o.status(), o.out());
        assertTrue(o.err().matches("(?s).*FAILED: block b[0-9]+ \\(hash id [0-9]+, depth [0-9]+\\) after .*checksum mismatch.*"), o.err());
        assertTrue(o.out().contains("failures          1"), o.out());
    }

    @Test
    void aLostBlockIsAFailure() {
        Outcome o = simulate(s -> new FakeCache(s, Tier.CPU, FakeCache.Damage.LOSE_SEGMENT), with(SMALL, "--generate-trace", "tool-agent"));
        assertEquals(Simulate.FAILED, o.status(), o.out());
        assertTrue(o.err().contains("was lost"), o.err());
    }

    @Test
    void aBadTraceNamesTheLineAndField() throws Exception {
        Path file = temp.resolve("bad.jsonl");
        Files.writeString(file, "{\"timestamp\": 0, \"input_length\": 512, \"output_length\": 1, \"hash_ids\": [0]}\n"
                + "{\"timestamp\": 1, \"input_length\": 512, \"output_length\": 1, \"hash_ids\": [0, \"x\"]}\n");
        Outcome o = simulate(NO_CACHE, "--workload", "trace", "--trace", file.toString());
        assertEquals(Simulate.USAGE, o.status());
        assertTrue(o.err().startsWith("simulate: bad trace: " + file + ":2: field \"hash_ids[1]\""), o.err());
        Outcome missing = simulate(NO_CACHE, "--workload", "trace", "--trace", temp.resolve("none.jsonl").toString());
        assertEquals(Simulate.USAGE, missing.status());
        assertTrue(missing.err().contains("cannot read --trace"), missing.err());
    }

    @Test
    void aBudgetBelowOneBlockIsABadArgument() {
        Outcome o = simulate(NO_CACHE, with(SMALL, "--generate-trace", "chat", "--gpu-budget", "1KiB"));
        assertEquals(Simulate.USAGE, o.status());
        assertTrue(o.err().startsWith("simulate: bad value for --gpu-budget: '1 KiB' (1 KiB is smaller than one block"), o.err());
    }

    @Test
    void theTraceSweepWritesTheOptimumBesideEachPolicy() throws Exception {
        Path out = temp.resolve("results");
        Outcome o = simulate(FakeCache::new, with(SMALL, "--generate-trace", "chat", "--sweep", "--sweep-budgets",
                "2%,5%,100%", "--out", out.toString()));
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        List<String> csv = Files.readAllLines(out.resolve("sim-trace-sweep.csv"));
        assertEquals(1 + 2 * 3, csv.size(), String.join("\n", csv));
        List<String> header = List.of(csv.get(0).split(","));
        int onGpu = header.indexOf("on_gpu_share");
        int optimum = header.indexOf("optimum_gpu_share");
        int ratio = header.indexOf("ratio_to_optimum");
        int missing = header.indexOf("missing_share");
        assertTrue(onGpu > 0 && optimum > 0 && ratio > 0, csv.get(0));
        for (String row : csv.subList(1, csv.size())) {
            String[] cells = row.split(",", -1);
            assertEquals(header.size(), cells.length, row);
            assertTrue(Double.parseDouble(cells[optimum]) >= Double.parseDouble(cells[onGpu]), row);
            assertTrue(Double.parseDouble(cells[ratio]) <= 1.0, row);
        }
        // With every unique block fitting on the GPU, every policy and the optimum miss only first uses.
        for (String row : csv.stream().filter(r -> r.contains(",1.0000,")).toList()) {
            String[] cells = row.split(",", -1);
            assertEquals(1.0, Double.parseDouble(cells[onGpu]) + Double.parseDouble(cells[missing]), 1e-5, row);
            assertEquals(cells[onGpu], cells[optimum], row);
        }
        Document svg = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(out.resolve("sim-trace-sweep.svg").toFile());
        assertEquals("svg", svg.getDocumentElement().getTagName());
        assertEquals(2 + 1 + 2, svg.getElementsByTagName("polyline").getLength(), "two policies and the optimum, then two ratios");
        assertFalse(Files.exists(out.resolve("sim-sweep.csv")), "the chat sweep's files are not touched");
    }
}
