package dev.kvtier.bench.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.kvtier.redis.LocalRedisServer;
import dev.kvtier.remote.RemoteBlockStore;
import dev.kvtier.remote.RemoteBlockStores;

/**
 * {@code Simulate --remote}: prefix blocks written through to a remote block store and fetched from it by a cache that
 * misses them locally, every fetched block's bytes checked by the simulator's read-backs (a wrong byte is a failure),
 * and a store that cannot be used refused with one line and status 2. The Redis case starts its own
 * {@code redis-server} (by PID) and nats-server, as the module's other Redis and cluster tests do.
 */
class SimulateRemoteTest {
    private static final String[] TRACE = {"--workload", "trace", "--generate-trace", "chat", "--requests", "60",
            "--progress", "off", "--verify", "full"};

    private record Outcome(int status, String out, String err) {
        long field(String pattern) {
            Matcher m = Pattern.compile(pattern).matcher(out);
            assertTrue(m.find(), "no '" + pattern + "' in:\n" + out + "\n" + err);
            return Long.parseLong(m.group(1).replace(",", ""));
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

    /** A run whose cache was filled from the store: remote hits, nothing rejected, every read-back right. */
    private static void assertServedFromTheStore(Outcome run) {
        assertEquals(0, run.status(), run.out() + run.err());
        assertEquals(0, run.field("failures\\s+(\\d+)"), run.out());
        assertTrue(run.field("remote hits\\s+([\\d,]+) blocks") > 0, run.out());
        assertEquals(0, run.field("remote rejections\\s+([\\d,]+) values not served"), run.out());
        assertEquals(0, run.field("remote failures\\s+([\\d,]+)"), run.out());
    }

    @Test
    @Timeout(60)
    void aSecondCacheFetchesTheBlocksTheFirstWroteToAnInProcessStore() {
        // The store's contents live while one store of its name is open: this one keeps them between the two runs.
        try (RemoteBlockStore keepOpen = RemoteBlockStores.open(URI.create("inprocess:sim-test"), Map.of())) {
            Outcome first = simulate("--remote", "inprocess:sim-test");
            assertEquals(0, first.status(), first.out() + first.err());
            assertEquals(0, first.field("failures\\s+(\\d+)"), first.out());
            assertEquals(0, first.field("remote hits\\s+([\\d,]+) blocks"), "nothing to fetch in an empty store:\n" + first.out());
            assertTrue(first.field("written ([\\d,]+) blocks") > 0, first.out());

            Outcome second = simulate("--remote", "inprocess:sim-test");
            assertServedFromTheStore(second);
        }
    }

    @Test
    @Timeout(120)
    void ranksShareBlocksThroughRedis(@TempDir Path directory) throws Exception {
        try (LocalRedisServer redis = LocalRedisServer.start(directory.resolve("redis"), "")) {
            // Round robin sends a chat's next turn to the rank that did not store its prefix: it fetches it.
            Outcome run = simulate("--ranks", "2", "--routing", "round-robin", "--remote", redis.uri());
            assertServedFromTheStore(run);
            assertTrue(run.out().contains("remote store"), run.out());
        }
    }

    @Test
    void aStoreThatCannotBeUsedIsOneLineAndStatus2() {
        for (String[] args : new String[][] {{"--remote", "nosuch://127.0.0.1:1"}, {"--remote", "redis://127.0.0.1:1"},
                {"--remote", "inprocess:sim-test", "--ranks", "2"}, {"--remote", "no scheme"},
                {"--remote", "inprocess:sim-test", "--remote-key", "short"}}) {
            Outcome run = simulate(args);
            assertEquals(Simulate.USAGE, run.status(), String.join(" ", args) + "\n" + run.err());
            String firstLine = run.err().lines().findFirst().orElse("");
            assertTrue(firstLine.startsWith("simulate: ") && firstLine.contains("--remote"), run.err());
            assertFalse(run.err().contains("\tat ") || run.err().contains("Exception"), "a stack trace:\n" + run.err());
            assertEquals("", run.out(), "nothing played");
        }
    }

    @Test
    @Timeout(60)
    void theWriteThroughModeAndTheCostGateAreOptions() {
        try (RemoteBlockStore keepOpen = RemoteBlockStores.open(URI.create("inprocess:sim-gate"), Map.of())) {
            Outcome reader = simulate("--remote", "inprocess:sim-gate", "--remote-write-through", "never");
            assertEquals(0, reader.status(), reader.out() + reader.err());
            assertEquals(0, reader.field("written ([\\d,]+) blocks"), "never writes:\n" + reader.out());
            assertTrue(reader.out().contains("write-through never, cost gate off"), reader.out());

            Outcome writer = simulate("--remote", "inprocess:sim-gate", "--remote-write-through", "store");
            assertTrue(writer.field("written ([\\d,]+) blocks") > 0, writer.out());

            // A prefill far faster than any store: once the store's round trip and bandwidth are measured (the first
            // fetch), the gate leaves every remote block out.
            Outcome gated = simulate("--remote", "inprocess:sim-gate", "--remote-write-through", "never",
                    "--remote-prefill-rate", "1e15");
            assertEquals(0, gated.status(), gated.out() + gated.err());
            assertTrue(gated.field("([\\d,]+) left out by the cost gate") > 0, gated.out());
            assertTrue(gated.out().contains("cost gate 1,000,000,000,000,000 tokens/s"), gated.out());
            Outcome open = simulate("--remote", "inprocess:sim-gate", "--remote-write-through", "never");
            assertEquals(0, open.field("([\\d,]+) left out by the cost gate"), open.out());
            assertServedFromTheStore(open);
        }
    }

    @Test
    void aBadWriteThroughModeOrPrefillRateIsOneLineNamingItAndStatus2() {
        for (String[] args : new String[][] {{"--remote", "inprocess:sim-test", "--remote-write-through", "sometimes"},
                {"--remote", "inprocess:sim-test", "--remote-prefill-rate", "-5"},
                {"--remote", "inprocess:sim-test", "--remote-prefill-rate", "fast"},
                {"--remote", "inprocess:sim-test", "--remote-prefill-rate", "Infinity"},
                {"--remote-write-through", "never"}, {"--remote-prefill-rate", "1000"}}) {
            Outcome run = simulate(args);
            String option = args[args.length - 2];
            String value = args[args.length - 1];
            assertEquals(Simulate.USAGE, run.status(), String.join(" ", args) + "\n" + run.err());
            List<String> lines = run.err().lines().filter(line -> !line.isBlank()).toList();
            String firstLine = lines.isEmpty() ? "" : lines.get(0);
            assertTrue(firstLine.startsWith("simulate: ") && firstLine.contains(option) && firstLine.contains(value),
                    "names " + option + " and " + value + ": " + run.err());
            assertFalse(run.err().contains("\tat ") || run.err().contains("Exception"), "a stack trace:\n" + run.err());
            assertEquals("", run.out(), "nothing played");
        }
    }

    @Test
    void remoteNeedsThePrefixApiOnATrace() {
        Outcome chat = new Outcome(new Simulate(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), KvTierCacheAdapter::open)
                .run("--remote", "inprocess:sim-test"), "", "");
        assertEquals(Simulate.USAGE, chat.status());
        assertEquals(Simulate.USAGE, simulate("--remote", "inprocess:sim-test", "--trace-api", "segments").status());
    }
}
