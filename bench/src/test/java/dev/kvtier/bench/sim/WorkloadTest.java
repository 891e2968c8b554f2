package dev.kvtier.bench.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

class WorkloadTest {

    @Test
    void theSameSeedPlaysTheSameRequests() throws Exception {
        Workload a = Workload.generate(SimOptions.parse("--seed", "7"));
        Workload b = Workload.generate(SimOptions.parse("--seed", "7"));
        Workload c = Workload.generate(SimOptions.parse("--seed", "8"));
        assertEquals(a.requests(), b.requests());
        assertEquals(a.peakLiveBytes(), b.peakLiveBytes());
        assertNotEquals(a.requests(), c.requests());
        assertEquals(a.contentSeed(3, 1, 2), b.contentSeed(3, 1, 2));
        assertNotEquals(a.contentSeed(3, 1, 2), c.contentSeed(3, 1, 2));
    }

    @Test
    void sessionsGrowTurnByTurnAndStartOverAfterMaxTurns() throws Exception {
        SimOptions options = SimOptions.parse("--sessions", "5", "--requests", "2000", "--max-turns", "4",
                "--turn-tokens", "1..100");
        Workload w = Workload.generate(options);
        Map<Integer, Workload.Request> previous = new HashMap<>();
        Set<String> keys = new HashSet<>();
        long live = 0;
        long peak = 0;
        Map<Integer, Long> liveOfSession = new HashMap<>();
        for (Workload.Request r : w.requests()) {
            assertTrue(keys.add(r.key()), "keys are unique: " + r.key());
            assertTrue(r.turn() < 4);
            Workload.Request p = previous.put(r.session(), r);
            if (p == null) {
                assertEquals(0, r.ordinalInSession());
                assertEquals(0, r.turn());
                assertEquals(0, r.startPosition());
                assertEquals(false, r.endsConversation());
            } else {
                assertEquals(p.ordinalInSession() + 1, r.ordinalInSession());
                if (p.turn() == 3) {
                    assertTrue(r.endsConversation());
                    assertEquals(p.conversation() + 1, r.conversation());
                    assertEquals(0, r.turn());
                    assertEquals(0, r.startPosition());
                    live -= liveOfSession.put(r.session(), 0L);
                } else {
                    assertEquals(p.conversation(), r.conversation());
                    assertEquals(p.turn() + 1, r.turn());
                    assertEquals(p.startPosition() + p.tokens(), r.startPosition());
                }
            }
            long bytes = r.tokens() * w.bytesPerToken();
            liveOfSession.merge(r.session(), bytes, Long::sum);
            live += bytes;
            peak = Math.max(peak, live);
        }
        assertEquals(peak, w.peakLiveBytes());
        assertTrue(w.largestSegmentBytes() <= 100 * 1024);
    }

    @Test
    void segmentContentIsAFunctionOfItsSeed() {
        try (Arena arena = Arena.ofConfined()) {
            for (int size : new int[] {0, 1, 7, 8, 9, 4095, 65536 + 3}) {
                MemorySegment a = arena.allocate(Math.max(size, 1)).asSlice(0, size);
                MemorySegment b = arena.allocate(Math.max(size, 1)).asSlice(0, size);
                MemorySegment c = arena.allocate(Math.max(size, 1)).asSlice(0, size);
                SegmentContent.fill(a, 42);
                SegmentContent.fill(b, 42);
                SegmentContent.fill(c, 43);
                assertEquals(-1, a.mismatch(b), "size " + size);
                assertEquals(SegmentContent.checksum(a), SegmentContent.checksum(b));
                if (size >= 8) {
                    assertNotEquals(-1, a.mismatch(c), "size " + size);
                    assertNotEquals(SegmentContent.checksum(a), SegmentContent.checksum(c));
                }
            }
        }
    }

    @Test
    void contentSeedsDifferAcrossSegments() {
        Set<Long> seeds = new HashSet<>();
        for (int s = 0; s < 50; s++) {
            for (int c = 0; c < 5; c++) {
                for (int t = 0; t < 20; t++) {
                    seeds.add(SegmentContent.mix(42, s, c, t));
                }
            }
        }
        assertEquals(50 * 5 * 20, seeds.size());
    }
}
