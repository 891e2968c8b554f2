package dev.kvtier.bench.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class TraceGeneratorTest {

    @ParameterizedTest
    @EnumSource(TraceGenerator.Kind.class)
    void deterministicWellFormedAndReusingBlocks(TraceGenerator.Kind kind) {
        List<TraceRequest> trace = TraceGenerator.generate(kind, 400, 11);
        assertEquals(trace, TraceGenerator.generate(kind, 400, 11), "same seed, same trace");
        assertNotEquals(trace, TraceGenerator.generate(kind, 400, 12));
        assertEquals(400, trace.size());
        long previousTimestamp = -1;
        long nextFresh = 0;
        Map<Long, Integer> depthOf = new HashMap<>();
        long references = 0;
        for (TraceRequest r : trace) {
            assertTrue(r.timestampMs() >= previousTimestamp, "arrival order");
            previousTimestamp = r.timestampMs();
            assertEquals(Math.ceilDiv(r.inputLength(), MooncakeTrace.TOKENS_PER_BLOCK), r.blocks(), r.toString());
            for (int i = 0; i < r.blocks(); i++) {
                long id = r.hashId(i);
                if (id >= nextFresh) {
                    assertEquals(nextFresh, id, "fresh ids count up in order of first appearance");
                    nextFresh++;
                }
                // A block's id names its prefix: it always sits at the same depth, behind the same parent.
                Integer depth = depthOf.putIfAbsent(id, i);
                assertEquals(depth == null ? i : depth, i, "block " + id);
                references++;
            }
        }
        double reuse = 1 - (double) depthOf.size() / references;
        assertTrue(reuse > 0.3, kind + ": only " + reuse + " of block references reuse a block");
    }

    @ParameterizedTest
    @EnumSource(TraceGenerator.Kind.class)
    void equalIdsHaveEqualParents(TraceGenerator.Kind kind) {
        Map<Long, Long> parentOf = new HashMap<>();
        for (TraceRequest r : TraceGenerator.generate(kind, 300, 5)) {
            for (int i = 0; i < r.blocks(); i++) {
                long parent = i == 0 ? -1 : r.hashId(i - 1);
                Long known = parentOf.putIfAbsent(r.hashId(i), parent);
                assertEquals(known == null ? parent : known, parent, "block " + r.hashId(i) + " in " + r);
            }
        }
    }

    @org.junit.jupiter.api.Test
    void chatTurnsExtendThePreviousTurnAndPromptsAreShared() {
        List<TraceRequest> trace = TraceGenerator.generate(TraceGenerator.Kind.CHAT, 2000, 1);
        // The first block of every request is a system prompt's: 6 prompts, so at most 6 distinct first blocks.
        Set<Long> firsts = new HashSet<>();
        trace.forEach(r -> firsts.add(r.hashId(0)));
        assertTrue(firsts.size() <= 6, firsts.toString());
        // Some request continues an earlier one: it starts with all of that one's full blocks.
        int continuations = 0;
        for (int i = 1; i < trace.size(); i++) {
            TraceRequest later = trace.get(i);
            for (int j = i - 1; j >= 0; j--) {
                TraceRequest earlier = trace.get(j);
                int full = earlier.inputLength() / MooncakeTrace.TOKENS_PER_BLOCK;
                if (full > firsts.size() && later.blocks() > full && startsWith(later, earlier, full)) {
                    continuations++;
                    break;
                }
            }
        }
        // 256 conversations of 2..16 turns: about 500 start in 2000 requests, the other requests continue one.
        assertTrue(continuations > 1000, "continuations " + continuations);
    }

    @org.junit.jupiter.api.Test
    void theChatTraceIsUnchanged() {
        // The issue-11 speed benchmark plays this trace: new kinds must not change it. The fingerprint was taken
        // from the generator before chat-sessions was added (bench jar of main at 211c285).
        long fingerprint = 0;
        for (TraceRequest r : TraceGenerator.generate(TraceGenerator.Kind.CHAT, 3000, 42)) {
            fingerprint = 31 * fingerprint + r.hashCode();
        }
        assertEquals(6809087138438264780L, fingerprint);
    }

    @org.junit.jupiter.api.Test
    void chatSessionTurnsComeAThinkTimeAfterTheirAnswer() {
        List<TraceRequest> trace = TraceGenerator.generate(TraceGenerator.Kind.CHAT_SESSIONS, 3000, 7);
        // A request extending an earlier one (all its full blocks, beyond the shared prompt) is that
        // conversation's next turn: it cannot come before the earlier answer was generated (25 ms a token).
        Map<Long, TraceRequest> byLastFullBlock = new HashMap<>();
        Set<Long> firsts = new HashSet<>();
        int continuations = 0;
        long minGapMs = Long.MAX_VALUE;
        long maxGapMs = 0;
        for (TraceRequest r : trace) {
            firsts.add(r.hashId(0));
            // Prompts have at most 3000 tokens (5 full blocks): a match at index 5 or later is a conversation's own block.
            for (int b = r.blocks() - 1; b >= 5; b--) {
                TraceRequest earlier = byLastFullBlock.get(r.hashId(b));
                if (earlier != null && startsWith(r, earlier, b + 1) && r.blocks() > earlier.inputLength() / MooncakeTrace.TOKENS_PER_BLOCK) {
                    long gap = r.timestampMs() - earlier.timestampMs();
                    assertTrue(gap >= 25L * earlier.outputLength(), gap + " ms after " + earlier + ": " + r);
                    minGapMs = Math.min(minGapMs, gap);
                    maxGapMs = Math.max(maxGapMs, gap);
                    continuations++;
                    break;
                }
            }
            int full = r.inputLength() / MooncakeTrace.TOKENS_PER_BLOCK;
            if (full > 5) {
                byLastFullBlock.put(r.hashId(full - 1), r);
            }
        }
        assertTrue(firsts.size() <= 6, firsts.toString());
        // About 5 turns per conversation: most requests continue one; think times spread over orders of magnitude.
        assertTrue(continuations > 1000, "continuations " + continuations);
        assertTrue(maxGapMs > 50 * Math.max(1, minGapMs), minGapMs + " .. " + maxGapMs + " ms");
    }

    private static boolean startsWith(TraceRequest later, TraceRequest earlier, int blocks) {
        for (int b = 0; b < blocks; b++) {
            if (later.hashId(b) != earlier.hashId(b)) {
                return false;
            }
        }
        return true;
    }
}
