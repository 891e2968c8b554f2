package dev.kvtier.bench.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

import dev.kvtier.store.Tier;

/** The simulator end to end over {@link FakeCache}: exit statuses, summary, verification, sweep output. */
class SimulateTest {
    /** Small and quick; a GPU budget of 15% and CPU 30% of the working set force spills to disk. */
    private static final String[] SMALL = {"--sessions", "12", "--requests", "300", "--turn-tokens", "8..64",
            "--max-turns", "6", "--gpu-budget", "15%", "--cpu-budget", "30%", "--progress", "off"};

    @TempDir
    Path temp;

    private record Outcome(int status, String out, String err) {
    }

    private Outcome simulate(CacheUnderTest.Factory factory, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = new Simulate(new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), factory).run(args);
        return new Outcome(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static String[] with(String[] base, String... more) {
        List<String> all = new ArrayList<>(List.of(base));
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }

    @Test
    void aCleanRunEndsWithZeroFailuresAndVerifiedBytes() {
        Outcome o = simulate(FakeCache::new, with(SMALL, "--disk-dir", temp.resolve("disk").toString()));
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        assertTrue(o.out().contains("failures          0"), o.out());
        assertTrue(o.out().contains("fake (in-memory"), o.out());
        Matcher hits = Pattern.compile("on GPU ([0-9.]+)%, from CPU ([0-9.]+)%, from disk ([0-9.]+)%").matcher(o.out());
        assertTrue(hits.find(), o.out());
        assertTrue(Double.parseDouble(hits.group(2)) > 0, "something came back from CPU: " + o.out());
        assertTrue(Double.parseDouble(hits.group(3)) > 0, "something came back from disk: " + o.out());
        assertTrue(o.out().contains("GPU  -> CPU"), o.out());
        assertTrue(o.out().contains("disk -> GPU"), o.out());
        assertTrue(o.out().matches("(?s).*bytes verified\\s+[0-9.]+ [KM]iB in [0-9,]+ read-backs.*"), o.out());
        assertTrue(o.out().contains("p99"), o.out());
    }

    @Test
    void theSameSeedGivesTheSameHitsOnOneThread() {
        String a = simulate(FakeCache::new, with(SMALL, "--threads", "1")).out();
        String b = simulate(FakeCache::new, with(SMALL, "--threads", "1")).out();
        assertEquals(hitLine(a), hitLine(b));
        assertEquals(movedLines(a), movedLines(b));
    }

    private static String hitLine(String summary) {
        return summary.lines().filter(l -> l.contains("hit rate")).findFirst().orElseThrow();
    }

    private static List<String> movedLines(String summary) {
        return summary.lines().filter(l -> l.contains(" -> ")).map(l -> l.replaceAll("[0-9.]+ GB/s.*", "")).toList();
    }

    @Test
    void manyThreadsServeEverySessionInOrder() {
        Outcome o = simulate(FakeCache::new, with(SMALL, "--threads", "6", "--requests", "600"));
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        assertTrue(o.out().contains("(600 requests)"), o.out());
    }

    @Test
    void aCorruptedByteFromDiskStopsTheRunWithKeyAndTierPath() {
        Outcome o = simulate(s -> new FakeCache(s, Tier.DISK, FakeCache.Damage.FLIP_BYTE), SMALL);
        assertEquals(Simulate.FAILED, o.status(), o.out());
        assertTrue(o.err().contains("FAILED: segment s"), o.err());
        assertTrue(o.err().contains("checksum mismatch"), o.err());
        assertTrue(o.err().matches("(?s).*tier path: (\\.\\.\\. > )?(GPU|CPU|disk)( > (GPU|CPU|disk))* > disk > GPU\\).*"), o.err());
        assertTrue(o.out().contains("failures          1"), o.out());
    }

    @Test
    void fullVerificationNamesTheFirstWrongByte() {
        Outcome o = simulate(s -> new FakeCache(s, Tier.CPU, FakeCache.Damage.FLIP_BYTE),
                with(SMALL, "--verify", "full"));
        assertEquals(Simulate.FAILED, o.status(), o.out());
        assertTrue(o.err().contains("byte 0 of "), o.err());
        assertTrue(o.err().matches("(?s).*tier path: (\\.\\.\\. > )?(GPU|CPU|disk)( > (GPU|CPU|disk))* > CPU > GPU\\).*"), o.err());
    }

    @Test
    void wrongPositionsAndLostSegmentsAreFailures() {
        Outcome moved = simulate(s -> new FakeCache(s, Tier.CPU, FakeCache.Damage.WRONG_POSITIONS), SMALL);
        assertEquals(Simulate.FAILED, moved.status());
        assertTrue(moved.err().contains("came back as"), moved.err());
        Outcome lost = simulate(s -> new FakeCache(s, Tier.CPU, FakeCache.Damage.LOSE_SEGMENT), SMALL);
        assertEquals(Simulate.FAILED, lost.status());
        assertTrue(lost.err().contains("was lost") || lost.err().contains("unknown key"), lost.err());
    }

    @Test
    void maxSecondsStopsIssuingRequestsAndTheRunStillChecksOut() {
        Outcome o = simulate(s -> new FakeCache(s) {
            @Override
            public Resident ensureResidentOnGpu(String key) {
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return super.ensureResidentOnGpu(key);
            }
        }, with(SMALL, "--requests", "1000000", "--max-seconds", "1"));
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        assertTrue(o.out().contains("stopped by --max-seconds"), o.out());
        assertTrue(o.out().contains("failures          0"), o.out());
    }

    @Test
    void badArgumentsPrintOneMessageAndTheUsage() {
        Outcome o = simulate(FakeCache::new, "--gpu-budget", "64XB");
        assertEquals(Simulate.USAGE, o.status());
        assertTrue(o.err().startsWith("simulate: bad value for --gpu-budget: '64XB'"), o.err());
        assertTrue(o.err().contains("Usage: simulate"), o.err());
        assertEquals("", o.out());
    }

    @Test
    void aMistypedOptionNamesTheOptionMeantThenTheUsage() {
        Outcome o = simulate(FakeCache::new, "--polcy", "lru");
        assertEquals(Simulate.USAGE, o.status());
        assertEquals("simulate: unknown option --polcy (did you mean --policy?)", o.err().lines().findFirst().orElseThrow());
        assertTrue(o.err().contains("Usage: simulate"), o.err());
        Outcome unlike = simulate(FakeCache::new, "--colour", "red");
        assertEquals(Simulate.USAGE, unlike.status());
        assertEquals("simulate: unknown option --colour", unlike.err().lines().findFirst().orElseThrow(),
                "no suggestion when no option is close");
    }

    @Test
    void aBudgetSmallerThanTheLargestSegmentIsABadArgument() {
        Outcome o = simulate(FakeCache::new, "--gpu-budget", "4KiB", "--turn-tokens", "64");
        assertEquals(Simulate.USAGE, o.status());
        assertTrue(o.err().contains("--gpu-budget: '4 KiB'") && o.err().contains("largest segment, 64 KiB"), o.err());
    }

    @Test
    void helpPrintsTheUsage() {
        Outcome o = simulate(FakeCache::new, "--help");
        assertEquals(Simulate.OK, o.status());
        assertTrue(o.out().startsWith("Usage: simulate"), o.out());
    }

    @Test
    void aCacheThatCannotOpenIsAFailureWithItsReason() {
        Outcome o = simulate(s -> {
            throw new IllegalStateException("no CUDA device");
        }, SMALL);
        assertEquals(Simulate.FAILED, o.status());
        assertTrue(o.err().contains("no CUDA device"), o.err());
    }

    @Test
    void theTemporaryDiskDirectoryIsDeletedAndAGivenOneKept() throws Exception {
        Path given = temp.resolve("given");
        simulate(s -> {
            assertTrue(Files.isDirectory(s.diskDirectory()));
            return new FakeCache(s);
        }, with(SMALL, "--disk-dir", given.toString()));
        assertTrue(Files.isDirectory(given));
        Path[] seen = new Path[1];
        simulate(s -> {
            seen[0] = s.diskDirectory();
            return new FakeCache(s);
        }, SMALL);
        assertFalse(Files.exists(seen[0]), seen[0] + " should be gone");
    }

    @Test
    void theSweepWritesAWellFormedCsvAndSvg() throws Exception {
        Path out = temp.resolve("results");
        // One request thread: the peak working set is measured in workload order, and only then does a GPU
        // budget of 100% of it provably hold every turn (with more threads a new turn can overtake the
        // removal of another session's finished conversation).
        Outcome o = simulate(FakeCache::new, with(SMALL, "--threads", "1", "--sweep", "--sweep-steps", "4",
                "--out", out.toString()));
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());

        List<String> csv = Files.readAllLines(out.resolve("sim-sweep.csv"));
        assertEquals(1 + 2 * 4, csv.size(), String.join("\n", csv));
        int columns = csv.get(0).split(",", -1).length;
        assertTrue(csv.get(0).startsWith("policy,gpu_budget_share,"));
        for (String row : csv.subList(1, csv.size())) {
            assertEquals(columns, row.split(",", -1).length, row);
            assertTrue(row.startsWith("adaptive-s3-fifo-lfu,") || row.startsWith("lru,"), row);
            assertTrue(row.endsWith(",0," + row.substring(row.lastIndexOf(',') + 1)), "failures column 0: " + row);
        }
        // At 100% of the working set every earlier turn is still on the GPU.
        String full = csv.stream().filter(r -> r.startsWith("adaptive-s3-fifo-lfu,1.0000,")).findFirst().orElseThrow();
        assertEquals("1.000000", full.split(",")[7], full);

        Document svg = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(out.resolve("sim-sweep.svg").toFile());
        assertEquals("svg", svg.getDocumentElement().getTagName());
        assertEquals(4, svg.getElementsByTagName("polyline").getLength(), "two panels x two policies");
        assertEquals(3, svg.getElementsByTagName("g").getLength(), "two panels and the legend");
        String text = Files.readString(out.resolve("sim-sweep.svg"));
        assertTrue(text.contains(">adaptive-s3-fifo-lfu<") && text.contains(">lru<"), "legend");
        assertTrue(text.contains(">Chat workload (12 sessions, 300 requests): "), "the workload is named in the title");
        assertTrue(text.contains("p99 time-to-resident (log scale)"), "latency on a log axis");
        assertFalse(text.contains("http://") && text.replace("http://www.w3.org/2000/svg", "").contains("http://"),
                "self-contained");
        try (Stream<Path> files = Files.list(out)) {
            assertEquals(List.of("sim-sweep.csv", "sim-sweep.svg"),
                    files.map(p -> p.getFileName().toString()).sorted().toList(), "no temporary files left");
        }
    }

    @Test
    void theSweepTakesExplicitBudgets() throws Exception {
        Path out = temp.resolve("budgets");
        Outcome o = simulate(FakeCache::new, with(SMALL, "--threads", "1", "--sweep", "--sweep-budgets", "20%,100%",
                "--sweep-policies", "lru", "--out", out.toString()));
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        List<String> csv = Files.readAllLines(out.resolve("sim-sweep.csv"));
        assertEquals(List.of("lru,0.2000,", "lru,1.0000,"), csv.subList(1, csv.size()).stream()
                .map(r -> r.substring(0, r.indexOf(',', 4) + 1)).toList(), String.join("\n", csv));
    }

    @Test
    void aFailingSweepWritesNothing() {
        Path out = temp.resolve("nothing");
        Outcome o = simulate(s -> new FakeCache(s, Tier.DISK, FakeCache.Damage.FLIP_BYTE),
                with(SMALL, "--sweep", "--sweep-steps", "2", "--out", out.toString()));
        assertEquals(Simulate.FAILED, o.status());
        assertFalse(Files.exists(out.resolve("sim-sweep.csv")));
        assertFalse(Files.exists(out.resolve("sim-sweep.svg")));
    }
}
