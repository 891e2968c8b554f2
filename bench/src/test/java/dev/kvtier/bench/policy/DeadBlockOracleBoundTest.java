package dev.kvtier.bench.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.kvtier.bench.sim.BlockTrace;
import dev.kvtier.bench.trace.Belady;
import dev.kvtier.bench.trace.TraceGenerator;
import dev.kvtier.bench.trace.TraceRequest;

class DeadBlockOracleBoundTest {
    private static final int REQUESTS = 600;
    private static final long[] SEEDS = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    private static final List<String> POLICIES = List.of("least-recently-used", "least-accessed-first", "s3-fifo",
            "w-tinylfu", "chain-s3-fifo", "adaptive-s3-fifo", "adaptive-continuation-s3-fifo");

    @Test
    void chatDrawsDescribeTheTraceTheyCameWith() {
        List<TraceRequest> trace = TraceGenerator.generate(TraceGenerator.Kind.CHAT, REQUESTS, 3);
        List<TraceGenerator.ChatDraw> draws = TraceGenerator.chatDraws(REQUESTS, 3);
        Map<Integer, Integer> lastOfSlot = new HashMap<>();
        Map<Integer, long[]> promptIds = new HashMap<>();
        for (int q = 0; q < REQUESTS; q++) {
            TraceGenerator.ChatDraw d = draws.get(q);
            TraceRequest r = trace.get(q);
            assertTrue(d.promptBlocks() <= d.keptBlocks() && d.keptBlocks() <= r.blocks(), d::toString);
            long[] prompt = new long[d.promptBlocks()];
            for (int i = 0; i < prompt.length; i++) {
                prompt[i] = r.hashId(i);
            }
            long[] known = promptIds.putIfAbsent(d.prompt(), prompt);
            assertTrue(known == null || java.util.Arrays.equals(known, prompt), "a prompt's blocks are the same in every request");
            Integer previous = lastOfSlot.put(d.slot(), q);
            if (d.newConversation()) {
                assertEquals(1, d.turn());
                assertTrue(previous == null || draws.get(previous).last(), "a slot is reused only after its conversation ended");
            } else {
                TraceGenerator.ChatDraw before = draws.get(previous);
                assertEquals(before.turn() + 1, d.turn());
                for (int i = 0; i < before.keptBlocks(); i++) {
                    assertEquals(trace.get(previous).hashId(i), r.hashId(i), "a turn names the previous turn's kept blocks");
                }
            }
        }
        assertThrows(IllegalArgumentException.class, () -> TraceGenerator.chatDraws(-1, 3));
    }

    /**
     * The bound is on the expectation over the generator's draws, so its sum over many seeds must hold every
     * online policy's and the slot-aware greedy's summed hits; and summed it stays under the offline optimum's
     * (a sanity check of its size, not a theorem: on one trace where the capacity hardly binds, the bound,
     * about the expected re-references, can exceed that trace's optimum by the trace's luck, e.g. chat 10,000
     * requests seed 5 at 10%: 1.002 of it).
     */
    @Test
    void posteriorBoundHoldsEveryOnlinePolicyAndStaysBelowTheOptimum() {
        for (double share : new double[] {0.02, 0.05, 0.10, 0.25}) {
            double bound = 0;
            double greedy = 0;
            double traceOnly = 0;
            double recencyOnly = 0;
            double turnOnly = 0;
            double optimum = 0;
            Map<String, Double> policies = new HashMap<>();
            for (long seed : SEEDS) {
                BlockTrace trace = BlockTrace.of(TraceGenerator.generate(TraceGenerator.Kind.CHAT, REQUESTS, seed), "chat");
                List<TraceGenerator.ChatDraw> draws = TraceGenerator.chatDraws(REQUESTS, seed);
                int capacity = Math.max(1, (int) (share * trace.uniqueBlocks()));
                int[] sequence = trace.referenceSequence(trace.references());
                double b = DeadBlockOracleBound.chatPosteriorBound(trace, draws, capacity);
                optimum += Belady.hits(sequence, capacity);
                bound += b;
                greedy += DeadBlockOracleBound.chatGreedyHits(trace, draws, capacity, true);
                traceOnly += DeadBlockOracleBound.chatGreedyHits(trace, draws, capacity, false);
                recencyOnly += DeadBlockOracleBound.chatGreedyHits(trace, draws, capacity,
                        DeadBlockOracleBound.Knowledge.RECENCY_ONLY);
                turnOnly += DeadBlockOracleBound.chatGreedyHits(trace, draws, capacity, DeadBlockOracleBound.Knowledge.TURN_ONLY);
                int[] order = PolicyTraceCheck.playOrder(trace, 1);
                for (String p : POLICIES) {
                    double hits = PolicyTraceCheck.play(PolicyTraceCheck.policy(p), trace, order, capacity,
                            (int) (0.10 * trace.uniqueBlocks())) * trace.references();
                    policies.merge(p, hits, Double::sum);
                }
            }
            for (Map.Entry<String, Double> e : policies.entrySet()) {
                assertTrue(e.getValue() <= bound, share + ": " + e.getKey() + " " + e.getValue() + " above the bound " + bound);
            }
            assertTrue(bound <= optimum, share + ": bound " + bound + " above the optimum " + optimum);
            assertTrue(greedy <= bound, share + ": slot-aware greedy " + greedy + " above the bound " + bound);
            assertTrue(traceOnly <= bound, share + ": trace-only greedy " + traceOnly + " above the bound " + bound);
            assertTrue(recencyOnly <= bound, share + ": recency-only greedy " + recencyOnly + " above the bound " + bound);
            assertTrue(turnOnly <= bound, share + ": turn-only greedy " + turnOnly + " above the bound " + bound);
            // Not vacuous: the slot-aware greedy, an online policy with the bound's knowledge, comes close to it.
            assertTrue(greedy >= 0.95 * bound, share + ": slot-aware greedy " + greedy + " far below the bound " + bound);
        }
    }

    /**
     * With room for every block, the bound is the expected number of re-references, so summed over seeds it
     * must match the traces' re-references: a check of the next-request probabilities themselves (a wrong
     * continuation chance or prompt weight shows here: 1.0001 at 12 seeds of 600 requests; a continuation chance
     * of 1 for every conversation gives 1.022).
     */
    @Test
    void withRoomForEverythingTheBoundIsTheExpectedReuse() {
        double bound = 0;
        long reuses = 0;
        for (long seed : SEEDS) {
            BlockTrace trace = BlockTrace.of(TraceGenerator.generate(TraceGenerator.Kind.CHAT, REQUESTS, seed), "chat");
            bound += DeadBlockOracleBound.chatPosteriorBound(trace, TraceGenerator.chatDraws(REQUESTS, seed), trace.uniqueBlocks());
            reuses += trace.references() - trace.uniqueBlocks();
            assertEquals(0, DeadBlockOracleBound.chatPosteriorBound(trace, TraceGenerator.chatDraws(REQUESTS, seed), 0));
        }
        assertEquals(1.0, bound / reuses, 0.01, "bound " + bound + " against " + reuses + " re-references");
    }

    @Test
    void drawsOfAnotherTraceAreRefused() {
        BlockTrace trace = BlockTrace.of(TraceGenerator.generate(TraceGenerator.Kind.CHAT, 50, 1), "chat");
        assertThrows(IllegalArgumentException.class,
                () -> DeadBlockOracleBound.chatPosteriorBound(trace, TraceGenerator.chatDraws(40, 1), 10));
    }
}
