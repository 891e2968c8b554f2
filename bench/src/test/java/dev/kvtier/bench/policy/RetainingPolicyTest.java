package dev.kvtier.bench.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;

class RetainingPolicyTest {
    private static final long BLOCK = 100;

    private static void register(TieredStore store, String key, long start) {
        assertTrue(store.register(SegmentMeta.of(key, PositionRange.of(start, start + 512), BLOCK), Tier.GPU), key);
    }

    @Test
    void handCheckedOrder() {
        TieredStore store = new TieredStore(10 * BLOCK, 10 * BLOCK, new RetainingPolicy(3));
        register(store, "a", 0); // one chain a, b, c: accesses 1, 2, 3
        register(store, "b", 512);
        register(store, "c", 1024);
        // None is stale (3 segments x 3 = 9 accesses) nor yet a judged tail: the newest arrival leaves first.
        assertEquals(List.of("c"), store.candidatesForDemotion(Tier.GPU, BLOCK));
        store.touch("a"); // access 4: a is protected now
        assertEquals(List.of("c", "b", "a"), store.candidatesForDemotion(Tier.GPU, 3 * BLOCK));
        for (int i = 0; i < 6; i++) {
            store.touch("a"); // accesses 5..10: b (age 8) is not stale yet, c (age 7) neither
        }
        assertEquals(List.of("c", "b", "a"), store.candidatesForDemotion(Tier.GPU, 3 * BLOCK));
        store.touch("a"); // access 11: b is 9 old, still not past 9
        store.touch("a"); // access 12: b is 10 old: stale, named oldest first, before the newest arrival
        assertEquals(List.of("b", "c", "a"), store.candidatesForDemotion(Tier.GPU, 3 * BLOCK));
        // The chain a-b-c was not continued for more than 32 accesses after c: c is a tail, named first of all.
        for (int i = 0; i < 30; i++) {
            store.touch("a");
        }
        assertEquals(List.of("c", "b", "a"), store.candidatesForDemotion(Tier.GPU, 3 * BLOCK));
        // Demoted and back by promotion, b arrives again: on probation, fresh (not stale).
        store.demote("b", Tier.CPU).orElseThrow();
        store.promote("b", Tier.GPU).orElseThrow();
        assertEquals(List.of("c", "b", "a"), store.candidatesForDemotion(Tier.GPU, 3 * BLOCK));
        assertEquals(List.of("c"), store.candidatesForDemotion(Tier.GPU, 1));
    }

    @Test
    void aContinuedSegmentIsNoTail() {
        TieredStore store = new TieredStore(10 * BLOCK, 10 * BLOCK, new RetainingPolicy(100));
        register(store, "a", 0);
        register(store, "x", 2048); // another chain's segment, ending elsewhere
        register(store, "b", 512); // continues a
        for (int i = 0; i < 40; i++) {
            store.touch("x");
        }
        // a was continued (not a tail); b was not (a tail); x is protected. Probation newest first: a.
        assertEquals(List.of("b", "a", "x"), store.candidatesForDemotion(Tier.GPU, 3 * BLOCK));
    }

    /** Random histories: candidates are on the asked tier, each once, stop when enough, cover the tier; one history, one transcript. */
    @Test
    void keepsTheTrackerContractUnderRandomHistories() {
        for (long seed = 0; seed < 200; seed++) {
            List<String> first = randomHistory(seed);
            assertEquals(first, randomHistory(seed), "seed " + seed);
        }
    }

    private static List<String> randomHistory(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        TieredStore store = new TieredStore(random.nextInt(1, 12) * BLOCK, random.nextInt(0, 12) * BLOCK,
                new RetainingPolicy(1 + random.nextInt(6)));
        List<String> transcript = new ArrayList<>();
        int keys = 14;
        for (int step = 0; step < 300; step++) {
            String key = "k" + random.nextInt(keys);
            Tier tier = Tier.values()[random.nextInt(3)];
            long start = 512L * random.nextInt(4);
            switch (random.nextInt(6)) {
                case 0 -> transcript.add("register " + store.register(SegmentMeta.of(key,
                        PositionRange.of(start, start + 512), BLOCK), tier));
                case 1 -> transcript.add("touch " + store.touch(key));
                case 2 -> transcript.add("demote " + store.demote(key, tier));
                case 3 -> transcript.add("promote " + store.promote(key, tier));
                case 4 -> transcript.add("remove " + store.remove(key));
                default -> {
                    long needed = random.nextInt(1, 8) * BLOCK - random.nextInt(2) * 50;
                    List<String> named = store.candidatesForDemotion(tier, needed);
                    checkCandidates(store, tier, needed, named);
                    transcript.add(tier + " " + needed + " " + named);
                }
            }
            for (Tier t : Tier.values()) {
                checkCandidates(store, t, Long.MAX_VALUE, store.candidatesForDemotion(t, Long.MAX_VALUE));
            }
        }
        return transcript;
    }

    private static void checkCandidates(TieredStore store, Tier tier, long needed, List<String> named) {
        Set<String> onTier = new HashSet<>();
        store.segments().forEach(s -> {
            if (store.tierOf(s.key()) == tier) {
                onTier.add(s.key());
            }
        });
        assertEquals(named.size(), new HashSet<>(named).size(), "each once: " + named);
        long sum = 0;
        for (int i = 0; i < named.size(); i++) {
            assertTrue(onTier.contains(named.get(i)), named.get(i) + " is not on " + tier);
            assertTrue(sum < needed, "named past what was needed: " + named);
            sum += BLOCK;
        }
        if (sum < needed) {
            assertEquals(onTier, new HashSet<>(named), "short of " + needed + ": the whole tier");
        }
    }

    @Test
    void namesAndRejectsBadFactors() {
        assertEquals("retain-3", PolicyTraceCheck.policy("retain-3").name());
        assertEquals("retain-2.5", PolicyTraceCheck.policy("retain-2.5").name());
        assertEquals("chain-s3-fifo", PolicyTraceCheck.policy("chain-s3-fifo").name());
        assertThrows(IllegalArgumentException.class, () -> new RetainingPolicy(0));
        assertThrows(IllegalArgumentException.class, () -> PolicyTraceCheck.policy("retain-x"));
        assertTrue(RetainingPolicy.named("lru").isEmpty());
        DemotionPolicy p = new RetainingPolicy(4);
        assertEquals(p.name(), p.toString());
    }
}
