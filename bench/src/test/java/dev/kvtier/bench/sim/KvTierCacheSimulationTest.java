package dev.kvtier.bench.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.kvtier.Backend;
import dev.kvtier.CacheOpenException;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

/** The simulator over the real {@code KvTierCache}: small end-to-end runs that must finish with 0 failures. */
class KvTierCacheSimulationTest {
    @TempDir
    Path temp;

    private record Outcome(int status, String out, String err) {
    }

    private static Outcome simulate(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = new Simulate(new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), KvTierCacheAdapter::open).run(args);
        return new Outcome(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aSmallRunOnTheHostBackendMovesBytesThroughEveryTierWithoutAFailure() throws Exception {
        Path disk = temp.resolve("disk");
        Outcome o = simulate("--backend", "host", "--sessions", "10", "--requests", "200", "--turn-tokens", "8..96",
                "--max-turns", "8", "--gpu-budget", "15%", "--cpu-budget", "25%", "--threads", "3",
                "--progress", "off", "--disk-dir", disk.toString());
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        assertTrue(o.out().contains("backend           host"), o.out());
        assertTrue(o.out().contains("failures          0"), o.out());
        Matcher hits = Pattern.compile("on GPU ([0-9.]+)%, from CPU ([0-9.]+)%, from disk ([0-9.]+)%").matcher(o.out());
        assertTrue(hits.find(), o.out());
        assertTrue(Double.parseDouble(hits.group(2)) > 0, "came back from CPU: " + o.out());
        assertTrue(Double.parseDouble(hits.group(3)) > 0, "came back from disk: " + o.out());
        assertTrue(o.out().contains("disk -> GPU"), o.out());
        assertTrue(Files.isDirectory(disk), "a given disk directory is kept");
    }

    @Test
    void jfrRecordsTheRunsTransfersAndTheSummarySaysWhere() throws Exception {
        Path recording = temp.resolve("run.jfr");
        Outcome o = simulate("--backend", "host", "--sessions", "4", "--requests", "40", "--turn-tokens", "8..64",
                "--gpu-budget", "20%", "--cpu-budget", "20%", "--progress", "off", "--page-size", "4KiB",
                "--jfr", recording.toString());
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        assertTrue(o.out().contains("jfr recording     " + recording), o.out());
        assertTrue(Files.isRegularFile(recording), "the recording was written: " + recording);
        List<RecordedEvent> events = RecordingFile.readAllEvents(recording);
        long transfers = events.stream().filter(e -> e.getEventType().getName().equals("dev.kvtier.Transfer")).count();
        assertTrue(transfers > 0, "transfer events in " + events.size() + " events");
        assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals("dev.kvtier.Transfer")
                && "DISK".equals(e.getString("to"))), "a demotion to disk among the transfers");
    }

    @Test
    void fullVerificationWithTheLeastRecentlyUsedPolicy() {
        Outcome o = simulate("--backend", "host", "--sessions", "6", "--requests", "120", "--turn-tokens", "1..40",
                "--gpu-budget", "20%", "--cpu-budget", "20%", "--policy", "lru", "--verify", "full",
                "--progress", "off", "--page-size", "4KiB");
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        assertTrue(o.out().contains("every byte compared"), o.out());
    }

    @Test
    void aGeneratedTraceOnTheHostBackendPlaysCleanAgainstTheOptimum() {
        Outcome o = simulate("--backend", "host", "--workload", "trace", "--generate-trace", "chat", "--requests", "250",
                "--gpu-budget", "5%", "--cpu-budget", "10%", "--progress", "off");
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        assertTrue(o.out().contains("failures          0"), o.out());
        assertTrue(o.out().contains("page 4 KiB"), "a trace's pages are its blocks: " + o.out());
        Matcher gpu = Pattern.compile("GPU hit rate\\s+policy ([0-9.]+)% / optimum ([0-9.]+)%").matcher(o.out());
        assertTrue(gpu.find(), o.out());
        assertTrue(Double.parseDouble(gpu.group(2)) >= Double.parseDouble(gpu.group(1)), o.out());
        assertTrue(o.out().contains("disk -> GPU"), o.out());
    }

    @Test
    void aGeneratedTraceThroughThePrefixApiAndThroughSegmentsFindsTheSameBlocks() {
        String[] args = {"--backend", "host", "--workload", "trace", "--generate-trace", "tool-agent", "--requests", "200",
                "--gpu-budget", "5%", "--cpu-budget", "10%", "--progress", "off", "--trace-api"};
        Outcome prefix = simulate(with(args, "prefix"));
        Outcome segments = simulate(with(args, "segments"));
        for (Outcome o : List.of(prefix, segments)) {
            assertEquals(Simulate.OK, o.status(), o.err() + o.out());
            assertTrue(o.out().contains("failures          0"), o.out());
        }
        assertTrue(prefix.out().contains("api               prefix blocks"), prefix.out());
        // Both APIs see every block the trace references, cached or new: the same references, the same misses.
        Pattern hits = Pattern.compile("missing ([0-9.]+)%  \\(of ([0-9,]+) block references\\)");
        Matcher p = hits.matcher(prefix.out());
        Matcher s = hits.matcher(segments.out());
        assertTrue(p.find() && s.find(), prefix.out() + segments.out());
        assertEquals(s.group(2), p.group(2));
        assertEquals(s.group(1), p.group(1), "first uses of blocks do not depend on the API");
        assertTrue(prefix.out().contains("disk -> GPU"), prefix.out());
    }

    /**
     * The real cache through the prefix API: a JVM warmed by another trace plays the measured trace on a fresh cold
     * cache with exactly the cold run's hits, moves, transfers and verified bytes.
     */
    @Test
    void aWarmUpLeavesTheMeasuredPrefixRunExactlyAsItWas() {
        String[] args = {"--backend", "host", "--workload", "trace", "--generate-trace", "chat", "--requests", "200",
                "--gpu-budget", "5%", "--cpu-budget", "10%", "--progress", "off"};
        Outcome cold = simulate(args);
        Outcome warm = simulate(with(args, "--warmup-requests", "120"));
        for (Outcome o : List.of(cold, warm)) {
            assertEquals(Simulate.OK, o.status(), o.err() + o.out());
            assertTrue(o.out().contains("failures          0"), o.out());
        }
        assertTrue(warm.out().contains("warm-up           generated chat trace (120 requests, seed 43)"), warm.out());
        Pattern measured = Pattern.compile("(?m)^  (block hit rate|prefix hit rate|prefix restores|GPU hit rate|bytes moved"
                + "|transfers|bytes verified) .*$|^ {20}\\S.* -> .*$");
        List<String> coldRows = measured.matcher(cold.out()).results().map(java.util.regex.MatchResult::group).toList();
        assertTrue(coldRows.size() >= 8, coldRows.toString());
        assertEquals(coldRows, measured.matcher(warm.out()).results().map(java.util.regex.MatchResult::group).toList());
    }

    private static String[] with(String[] args, String... more) {
        String[] all = java.util.Arrays.copyOf(args, args.length + more.length);
        System.arraycopy(more, 0, all, args.length, more.length);
        return all;
    }

    @Test
    @Tag("gpu")
    void aGeneratedTraceOnTheCudaBackend() {
        CacheUnderTest.Settings probe = new CacheUnderTest.Settings(1 << 20, 1 << 20, temp, 64 << 10, PolicyChoice.LFU,
                Backend.CUDA);
        try (CacheUnderTest cache = KvTierCacheAdapter.open(probe)) {
            cache.backendDescription();
        } catch (CacheOpenException e) {
            Assumptions.abort("no usable CUDA device: " + e.getMessage());
        }
        Outcome o = simulate("--backend", "cuda", "--workload", "trace", "--generate-trace", "tool-agent",
                "--requests", "200", "--gpu-budget", "5%", "--cpu-budget", "10%", "--progress", "off");
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        assertTrue(o.out().contains("backend           cuda"), o.out());
    }

    @Test
    @Tag("gpu")
    void theLlamaShapeOnTheCudaBackend() {
        CacheUnderTest.Settings probe = new CacheUnderTest.Settings(1 << 20, 1 << 20, temp, 64 << 10, PolicyChoice.LFU,
                Backend.CUDA);
        try (CacheUnderTest cache = KvTierCacheAdapter.open(probe)) {
            cache.backendDescription();
        } catch (CacheOpenException e) {
            Assumptions.abort("no usable CUDA device: " + e.getMessage());
        }
        Outcome o = simulate("--backend", "cuda", "--model", "llama-3.1-8b", "--sessions", "8", "--requests", "80",
                "--turn-tokens", "16..128", "--threads", "2", "--progress", "off");
        assertEquals(Simulate.OK, o.status(), o.err() + o.out());
        assertTrue(o.out().contains("backend           cuda"), o.out());
    }
}
