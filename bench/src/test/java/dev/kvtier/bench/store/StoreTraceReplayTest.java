package dev.kvtier.bench.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvtier.store.Tier;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The serving trace and its Java replayer: every store gives the seed port's point answers on a small generated
 * trace (the Rust seed's are compared by the same checksum in bench/seed-replay, which CI cannot build), the file
 * format round-trips, and the generator is deterministic.
 */
class StoreTraceReplayTest {
    private static final int SEGMENTS = 2_000;
    private static final int OPS = 60_000;

    private static final StoreOpTrace TRACE = StoreOpTrace.generate(SEGMENTS, OPS, 5, true);

    @Test
    void everyStoreGivesTheSeedPortsPointAnswers() {
        long seedPort = checksum(StoreTraceReplay.SEED_PORT, TRACE);
        for (String store : List.of(StoreTraceReplay.DEFAULT, "least-accessed-first", "least-recently-used",
                "w-tinylfu")) {
            assertEquals(seedPort, checksum(store, TRACE), store);
        }
        // Without the candidate queries the point operations, and so the answers, are the same ones.
        StoreOpTrace withoutCandidates = StoreOpTrace.generate(SEGMENTS, OPS, 5, false);
        assertEquals(0, withoutCandidates.countsByKind()[StoreOpTrace.CANDIDATES]);
        assertEquals(seedPort, checksum(StoreTraceReplay.SEED_PORT, withoutCandidates));
        assertEquals(seedPort, checksum(StoreTraceReplay.DEFAULT, withoutCandidates));
    }

    @Test
    void theTraceHoldsEveryKindAndAnswersOfBothSigns() {
        long[] counts = TRACE.countsByKind();
        assertEquals(OPS, TRACE.size() - TRACE.setup);
        for (int k = 0; k < counts.length; k++) {
            assertTrue(counts[k] > 0, StoreOpTrace.KIND_NAMES[k] + " is missing: " + Arrays.toString(counts));
        }
        // About 0.1% candidate queries (the trace), within the noise of 60,000 draws.
        assertTrue(counts[StoreOpTrace.CANDIDATES] > OPS * 0.0005 && counts[StoreOpTrace.CANDIDATES] < OPS * 0.002,
                Arrays.toString(counts));
        // The point answers include refusals (gets of blocks never cached, touches of expired ones) and successes.
        long[] refused = new long[counts.length];
        long[] answered = new long[counts.length];
        StoreTraceReplay.Target target = StoreTraceReplay.newTarget(StoreTraceReplay.SEED_PORT, TRACE);
        StoreTraceReplay.setUp(target, TRACE);
        for (int i = TRACE.setup; i < TRACE.size(); i++) {
            long code = StoreTraceReplay.apply(target, TRACE, i);
            (code == 0 ? refused : answered)[TRACE.kinds[i]]++;
        }
        assertTrue(refused[StoreOpTrace.GET] > 0 && refused[StoreOpTrace.TOUCH] > 0, Arrays.toString(refused));
        for (byte kind : new byte[] {StoreOpTrace.REGISTER, StoreOpTrace.TOUCH, StoreOpTrace.GET, StoreOpTrace.DEMOTE,
            StoreOpTrace.PROMOTE, StoreOpTrace.REMOVE}) {
            assertTrue(answered[kind] > 0, StoreOpTrace.KIND_NAMES[kind] + ": " + Arrays.toString(answered));
        }
        // The generator's model follows the seed's rules, so every move it writes is one the seed books.
        assertEquals(0, refused[StoreOpTrace.DEMOTE] + refused[StoreOpTrace.PROMOTE] + refused[StoreOpTrace.REGISTER]
                + refused[StoreOpTrace.REMOVE], Arrays.toString(refused));
    }

    @Test
    void oneWrongAnswerChangesTheChecksum() {
        long right = checksum(StoreTraceReplay.SEED_PORT, TRACE);
        for (byte kind : new byte[] {StoreOpTrace.TOUCH, StoreOpTrace.GET, StoreOpTrace.DEMOTE}) {
            StoreTraceReplay.Target seedPort = StoreTraceReplay.newTarget(StoreTraceReplay.SEED_PORT, TRACE);
            StoreTraceReplay.setUp(seedPort, TRACE);
            long checksum = StoreTraceReplay.CHECKSUM_START;
            int wrongAt = -1;
            for (int i = TRACE.setup; i < TRACE.size(); i++) {
                long code = StoreTraceReplay.apply(seedPort, TRACE, i);
                if (wrongAt < 0 && TRACE.kinds[i] == kind && i > TRACE.setup + OPS / 2) {
                    wrongAt = i;
                    code = code == 0 ? 1 : code + 1; // a false for a true, another tier or count
                }
                if (TRACE.kinds[i] != StoreOpTrace.CANDIDATES) {
                    checksum = StoreTraceReplay.fold(checksum, TRACE.kinds[i], code);
                }
            }
            assertTrue(wrongAt > 0);
            assertNotEquals(right, checksum, StoreOpTrace.KIND_NAMES[kind] + " answer " + wrongAt + " changed");
        }
        // And the replayer's own loop: a store that miscounts one access is caught.
        assertNotEquals(right, StoreTraceReplay.replay(new MiscountingSeedPort(TRACE), TRACE));
    }

    @Test
    void theFileFormatRoundTrips(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("trace.txt");
        TRACE.write(file);
        StoreOpTrace read = StoreOpTrace.read(file);
        assertSameTrace(TRACE, read);
        assertEquals(checksum(StoreTraceReplay.SEED_PORT, TRACE), checksum(StoreTraceReplay.SEED_PORT, read));

        Path broken = dir.resolve("broken.txt");
        List<String> lines = Files.readAllLines(file);
        lines.set(10, "Z " + lines.get(10).substring(2));
        Files.write(broken, lines);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> StoreOpTrace.read(broken));
        assertTrue(e.getMessage().contains("line 11"), e.getMessage());
    }

    @Test
    void theGeneratorIsDeterministicForASeed() {
        assertSameTrace(TRACE, StoreOpTrace.generate(SEGMENTS, OPS, 5, true));
        StoreOpTrace other = StoreOpTrace.generate(SEGMENTS, OPS, 6, true);
        assertFalse(Arrays.equals(TRACE.keys, other.keys) && Arrays.equals(TRACE.kinds, other.kinds));
        assertThrows(IllegalArgumentException.class, () -> StoreOpTrace.generate(99, OPS, 5, true));
    }

    private static long checksum(String store, StoreOpTrace trace) {
        StoreTraceReplay.Target target = StoreTraceReplay.newTarget(store, trace);
        StoreTraceReplay.setUp(target, trace);
        return StoreTraceReplay.replay(target, trace);
    }

    private static void assertSameTrace(StoreOpTrace expected, StoreOpTrace actual) {
        assertEquals(expected.gpuBudget, actual.gpuBudget);
        assertEquals(expected.cpuBudget, actual.cpuBudget);
        assertEquals(expected.setup, actual.setup);
        assertArrayEquals(expected.kinds, actual.kinds);
        assertArrayEquals(expected.keys, actual.keys);
        assertArrayEquals(expected.tiers, actual.tiers);
        assertArrayEquals(expected.starts, actual.starts);
        assertArrayEquals(expected.ends, actual.ends);
        assertArrayEquals(expected.bytes, actual.bytes);
    }

    /** The seed port, but one touch of a registered segment, after a while, counts no access (the answer stays true). */
    private static final class MiscountingSeedPort implements StoreTraceReplay.Target {
        private final SeedPortStore store;
        private final StoreTraceReplay.SeedPort answers;
        private int touches;
        private boolean miscounted;

        MiscountingSeedPort(StoreOpTrace trace) {
            store = new SeedPortStore(trace.gpuBudget, trace.cpuBudget);
            answers = new StoreTraceReplay.SeedPort(store);
            StoreTraceReplay.setUp(answers, trace);
        }

        @Override
        public boolean register(String key, int start, int end, long bytes, Tier tier) {
            return answers.register(key, start, end, bytes, tier);
        }

        @Override
        public boolean touch(String key) {
            if (++touches >= 1_000 && !miscounted && store.get(key) != null) {
                miscounted = true;
                return true;
            }
            return answers.touch(key);
        }

        @Override
        public long get(String key) {
            return answers.get(key);
        }

        @Override
        public long demote(String key, Tier to) {
            return answers.demote(key, to);
        }

        @Override
        public long promote(String key, Tier to) {
            return answers.promote(key, to);
        }

        @Override
        public long remove(String key) {
            return answers.remove(key);
        }

        @Override
        public int candidates(Tier tier, long needed) {
            return answers.candidates(tier, needed);
        }
    }
}
