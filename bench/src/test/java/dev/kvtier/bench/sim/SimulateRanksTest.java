package dev.kvtier.bench.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code Simulate --ranks 2} end to end: a nats-server, two rank JVMs with real caches and one router, on a small
 * generated chat trace. Needs nats-server (CI installs it, as for the cluster module's JetStream tests). Routing is
 * deterministic (one request at a time, the router caught up before the next), so the comparisons are exact.
 */
class SimulateRanksTest {
    private static final String[] TRACE = {"--workload", "trace", "--generate-trace", "chat", "--requests", "120",
            "--progress", "off"};

    private record Outcome(int status, String out, String err) {
        long field(String pattern) {
            Matcher m = Pattern.compile(pattern).matcher(out);
            assertTrue(m.find(), "no '" + pattern + "' in:\n" + out + "\n" + err);
            return Long.parseLong(m.group(1).replace(",", ""));
        }

        double hitRate() {
            Matcher m = Pattern.compile("(?:cluster prefix hit rate|prefix hit rate)\\s+([0-9.]+)%").matcher(out);
            assertTrue(m.find(), "no hit rate in:\n" + out);
            return Double.parseDouble(m.group(1));
        }
    }

    private static Outcome simulate(String... more) {
        String[] args = Arrays.copyOf(TRACE, TRACE.length + more.length);
        System.arraycopy(more, 0, args, TRACE.length, more.length);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = new Simulate(new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), KvTierCacheAdapter::open).run(args);
        return new Outcome(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    @Timeout(180)
    void theRouterSendsEveryRequestWhosePrefixIsHeldToAHolderAndBeatsRoundRobin() {
        Outcome routed = simulate("--ranks", "2", "--routing", "router");
        assertEquals(0, routed.status(), routed.out() + routed.err());
        assertEquals(0, routed.field("failures\\s+(\\d+)"));
        long toHolder = routed.field("routed to a prefix holder\\s+([\\d,]+) of");
        long heldSomewhere = routed.field("routed to a prefix holder\\s+[\\d,]+ of ([\\d,]+)");
        assertTrue(toHolder > 0 && toHolder <= 120, routed.out());
        assertEquals(heldSomewhere, toHolder, "with a hint the router's choice is always a holder:\n" + routed.out());
        assertEquals(0, routed.field("rank found less than the hint: (\\d+)"), "a hint named more than the rank held");
        Matcher perRank = Pattern.compile("requests per rank\\s+(\\d+) / (\\d+)").matcher(routed.out());
        assertTrue(perRank.find(), routed.out());
        assertEquals(120, Long.parseLong(perRank.group(1)) + Long.parseLong(perRank.group(2)));
        assertTrue(routed.field("([\\d,]+) messages published") > 0, routed.out());
        assertTrue(routed.field("router index ([\\d,]+) blocks after the play") > 0, routed.out());

        Outcome roundRobin = simulate("--ranks", "2", "--routing", "round-robin");
        assertEquals(0, roundRobin.status(), roundRobin.out() + roundRobin.err());
        assertTrue(roundRobin.field("routed to a prefix holder\\s+([\\d,]+) of")
                < roundRobin.field("routed to a prefix holder\\s+[\\d,]+ of ([\\d,]+)"), roundRobin.out());
        assertTrue(routed.hitRate() > roundRobin.hitRate(),
                "router " + routed.hitRate() + " vs round-robin " + roundRobin.hitRate());

        // One rank holds every block the trace has shown (the disk tier is unbounded): no split cluster finds more.
        Outcome single = simulate("--ranks", "1");
        assertEquals(0, single.status(), single.out() + single.err());
        assertTrue(routed.hitRate() <= single.hitRate() + 0.05, // the single run prints one decimal
                "ranks 2 " + routed.hitRate() + " vs 1 " + single.hitRate());
    }

    @Test
    void ranksNeedTheTraceWorkloadOnThePrefixApi() {
        for (String[] args : new String[][] {{"--ranks", "2"}, {"--workload", "trace", "--generate-trace", "chat", "--ranks", "2",
                "--trace-api", "segments"}, {"--workload", "trace", "--generate-trace", "chat", "--ranks", "2", "--sweep"},
                {"--workload", "trace", "--generate-trace", "chat", "--ranks", "0"},
                {"--workload", "trace", "--generate-trace", "chat", "--routing", "nearest"}}) {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int status = new Simulate(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8), KvTierCacheAdapter::open).run(args);
            assertEquals(Simulate.USAGE, status, String.join(" ", args));
            String message = err.toString(StandardCharsets.UTF_8);
            assertTrue(message.contains("--ranks") || message.contains("--routing"), message);
        }
    }
}
