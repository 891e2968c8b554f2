package dev.kvtier.store.policy;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TierTransfer;
import dev.kvtier.store.TieredStore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The tracker SPI as the store drives it, and the behaviour that sets each built-in tracker apart. */
class TrackerPolicyTest {

    private static SegmentMeta seg(String key, long size) {
        return SegmentMeta.of(key, PositionRange.of(0, 16), size);
    }

    @Nested
    class Spi {
        /** Records every event it is told; names its tier's keys in arrival order. */
        final class LoggingPolicy implements DemotionPolicy {
            final List<String> log = new ArrayList<>();
            RuntimeException failNextWith;

            @Override
            public String name() {
                return "logging";
            }

            @Override
            public Tracker newTracker(long gpuBudget, long cpuBudget) {
                log.add("new " + gpuBudget + " " + cpuBudget);
                return new Tracker() {
                    final List<Segment> onTier = new ArrayList<>();

                    private void record(String event) {
                        log.add(event);
                        RuntimeException failure = failNextWith;
                        failNextWith = null;
                        if (failure != null) {
                            throw failure;
                        }
                    }

                    @Override
                    public void registered(Segment s, Tier tier) {
                        record("registered " + s.key() + " " + tier + " size=" + s.sizeBytes() + " count=" + s.accessCount());
                        onTier.add(s);
                    }

                    @Override
                    public void used(Segment s, Tier tier) {
                        record("used " + s.key() + " " + tier + " count=" + s.accessCount());
                    }

                    @Override
                    public void demoted(Segment s, Tier from, Tier to) {
                        record("demoted " + s.key() + " " + from + "->" + to + " count=" + s.accessCount());
                    }

                    @Override
                    public void promoted(Segment s, Tier from, Tier to) {
                        record("promoted " + s.key() + " " + from + "->" + to + " count=" + s.accessCount());
                    }

                    @Override
                    public void rolledBack(Segment s, Tier from, Tier to) {
                        record("rolledBack " + s.key() + " " + from + "->" + to + " count=" + s.accessCount());
                    }

                    @Override
                    public void removed(Segment s, Tier tier) {
                        record("removed " + s.key() + " " + tier);
                        onTier.remove(s);
                    }

                    @Override
                    public void collectCandidates(Tier tier, long needed, List<String> keys) {
                        log.add("candidates " + tier + " " + needed);
                        for (Segment s : onTier) {
                            keys.add(s.key());
                        }
                    }
                };
            }
        }

        @Test
        void theTrackerIsToldEveryEventAfterTheChangeWithTiersAndUsage() {
            LoggingPolicy policy = new LoggingPolicy();
            TieredStore store = new TieredStore(100, 200, policy);
            store.register(seg("a", 10), Tier.GPU);
            store.touch("a");
            TierTransfer down = store.demote("a", Tier.CPU).orElseThrow();
            store.promote("a", Tier.GPU).orElseThrow();
            assertTrue(store.promote("a", Tier.GPU).isEmpty()); // refused: the tracker hears nothing
            TierTransfer toDisk = store.demote("a", Tier.DISK).orElseThrow();
            assertTrue(store.rollback(toDisk));
            assertTrue(!store.rollback(down)); // not the latest move: nothing to tell
            assertEquals(List.of("a"), store.candidatesForDemotion(Tier.GPU, 5));
            store.remove("a");
            assertEquals(List.of("new 100 200",
                    "registered a GPU size=10 count=0",
                    "used a GPU count=1",
                    "demoted a GPU->CPU count=1",
                    "promoted a CPU->GPU count=2",
                    "demoted a GPU->DISK count=2",
                    "rolledBack a DISK->GPU count=2",
                    "candidates GPU 5",
                    "removed a GPU"), policy.log);
        }

        @Test
        void aFailingTrackerIsReportedByNameAndTheStoreChangesNothing() {
            LoggingPolicy policy = new LoggingPolicy();
            TieredStore store = new TieredStore(100, 200, policy);
            store.register(seg("a", 10), Tier.GPU);
            List<SegmentMeta> before = store.segments();
            for (Runnable op : List.<Runnable>of(
                    () -> store.touch("a"), () -> store.demote("a", Tier.CPU), () -> store.remove("a"),
                    () -> store.register(seg("b", 10), Tier.GPU))) {
                policy.failNextWith = new UnsupportedOperationException("boom");
                IllegalStateException e = assertThrows(IllegalStateException.class, op::run);
                assertTrue(e.getMessage().contains("logging") && e.getMessage().contains("boom"), e.getMessage());
                assertEquals(before, store.segments());
                assertEquals(10, store.gpuUsed());
                assertEquals(0, store.cpuUsed());
            }
            // The clock did not move either: a later use still orders after the earlier ones.
            assertTrue(store.touch("a"));
            assertEquals(1, store.get("a").orElseThrow().accessCount());
        }

        @Test
        void aPolicyWithNeitherOrderNorTrackerIsRefusedByName() {
            DemotionPolicy empty = () -> "empty";
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new TieredStore(1, 1, empty));
            assertTrue(e.getMessage().contains("empty") && e.getMessage().contains("demotionOrder"), e.getMessage());
        }

        @Test
        void builtInPoliciesAreFoundByName() {
            for (DemotionPolicy policy : List.of(DemotionPolicy.leastAccessedFirst(), DemotionPolicy.leastRecentlyUsed(),
                    DemotionPolicy.s3Fifo(), DemotionPolicy.wTinyLfu(), DemotionPolicy.chainAwareS3Fifo(),
                    DemotionPolicy.adaptiveS3Fifo(), DemotionPolicy.adaptiveContinuationS3Fifo(), DemotionPolicy.lru2(),
                    DemotionPolicy.arc())) {
                assertSame(policy, DemotionPolicy.named(policy.name()));
            }
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DemotionPolicy.named("lirs"));
            assertTrue(e.getMessage().contains("\"lirs\"") && e.getMessage().contains("s3-fifo"), e.getMessage());
        }
    }

    @Nested
    class S3Fifo {
        @Test
        void aSegmentUsedOnProbationOutlivesOnesNeverUsed() {
            TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.s3Fifo());
            for (String key : List.of("a", "b", "c")) {
                store.register(seg(key, 10), Tier.GPU);
            }
            store.touch("a");
            // a moves to main instead of being named; b and c leave the small queue first.
            assertEquals(List.of("b"), store.candidatesForDemotion(Tier.GPU, 10));
            assertEquals(List.of("b", "c", "a"), store.candidatesForDemotion(Tier.GPU, 30));
        }

        @Test
        void oneCandidateCostsAtMostTheBoundOfQueueMovesEvenWhenEverySegmentWasUsed() {
            TieredStore store = new TieredStore(100_000, 1_000, DemotionPolicy.s3Fifo());
            for (int i = 0; i < 2_000; i++) {
                store.register(seg("s" + i, 10), Tier.GPU);
            }
            for (int i = 0; i < 2_000; i++) {
                store.touch("s" + i);
            }
            // Unbounded, all 2,000 would move to main and s0 would be named after its second pass;
            // bounded, 256 move and the next one is named although it was used.
            assertEquals(List.of("s256"), store.candidatesForDemotion(Tier.GPU, 10));
        }

        @Test
        void aKeyDemotedOutOfTheSmallQueueComesBackIntoMain() {
            TieredStore ghosted = new TieredStore(1_000, 1_000, DemotionPolicy.s3Fifo());
            ghosted.register(seg("a", 10), Tier.GPU);
            ghosted.demote("a", Tier.CPU).orElseThrow(); // leaves GPU's small queue: a ghost there
            ghosted.promote("a", Tier.GPU).orElseThrow(); // the ghost sends it to main
            ghosted.register(seg("b", 10), Tier.GPU);
            assertEquals(List.of("b"), ghosted.candidatesForDemotion(Tier.GPU, 10));

            TieredStore fresh = new TieredStore(1_000, 1_000, DemotionPolicy.s3Fifo());
            fresh.register(seg("a", 10), Tier.CPU);
            fresh.promote("a", Tier.GPU).orElseThrow(); // never on GPU before: small queue, oldest
            fresh.register(seg("b", 10), Tier.GPU);
            assertEquals(List.of("a"), fresh.candidatesForDemotion(Tier.GPU, 10));
        }
    }

    @Nested
    class ChainAwareS3Fifo {
        /** One more access than the continuation window: every walk still pending is judged. */
        private static final int PAST_THE_WINDOW = 33;

        /** z, used; then the walk a, b, c; then enough touches of z that c counts as having ended it. */
        private TieredStore walkedChain(DemotionPolicy policy) {
            TieredStore store = new TieredStore(1_000, 1_000, policy);
            store.register(chained("z", 0), Tier.GPU);
            store.register(chained("a", 0), Tier.GPU);
            store.register(chained("b", 10), Tier.GPU); // continues a: a is no tail
            store.register(chained("c", 20), Tier.GPU); // continues b; nothing continues c
            touch(store, "z", PAST_THE_WINDOW);
            return store;
        }

        @Test
        void theSegmentThatEndedAWalkIsNamedFirst() {
            assertEquals(List.of("c", "a"), walkedChain(DemotionPolicy.chainAwareS3Fifo()).candidatesForDemotion(Tier.GPU, 20));
            // The paper's S3-FIFO names the oldest unused first.
            assertEquals(List.of("a", "b"), walkedChain(DemotionPolicy.s3Fifo()).candidatesForDemotion(Tier.GPU, 20));
        }

        @Test
        void aWalkIsJudgedOnlyAfterTheContinuationWindow() {
            TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.chainAwareS3Fifo());
            store.register(chained("z", 0), Tier.GPU);
            store.register(chained("a", 0), Tier.GPU);
            store.register(chained("b", 10), Tier.GPU);
            touch(store, "z", PAST_THE_WINDOW - 3); // b registered 30 accesses ago: may still be continued
            assertEquals(List.of("a", "b"), store.candidatesForDemotion(Tier.GPU, 20));
        }

        @Test
        void aTailUsedAfterAllIsKeptInMain() {
            TieredStore store = walkedChain(DemotionPolicy.chainAwareS3Fifo());
            store.touch("c");
            assertEquals(List.of("a", "b", "c", "z"), store.candidatesForDemotion(Tier.GPU, 40));
        }

        @Test
        void interleavedWalksContinueEachOtherByPositionAndOnlyTheirEndsAreTails() {
            TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.chainAwareS3Fifo());
            store.register(chained("z", 0), Tier.GPU);
            store.register(chained("a", 0), Tier.GPU);  // walk A
            store.register(chained("p", 0), Tier.GPU);  // walk B, interleaved
            store.register(chained("b", 10), Tier.GPU); // A goes on
            store.register(chained("q", 10), Tier.GPU); // B goes on; both walks end here
            touch(store, "z", PAST_THE_WINDOW);
            assertEquals(List.of("b", "q", "a", "p"), store.candidatesForDemotion(Tier.GPU, 40));
        }

        @Test
        void aWholeTierQueryNamesEverySegmentEvenPastTheBoundOfMovesForUsedTails() {
            TieredStore store = new TieredStore(100_000, 1_000, DemotionPolicy.chainAwareS3Fifo());
            int segments = 340; // all but the last few are judged tails while unused, more than the bound of moves
            for (int i = 0; i < segments; i++) {
                store.register(chained("s" + i, 0), Tier.GPU);
            }
            for (int i = 0; i < segments; i++) {
                store.touch("s" + i); // every tail used after all
            }
            List<String> all = store.candidatesForDemotion(Tier.GPU, Long.MAX_VALUE);
            assertEquals(segments, all.size());
            assertEquals(segments, new java.util.HashSet<>(all).size());
        }

        private static void touch(TieredStore store, String key, int times) {
            for (int i = 0; i < times; i++) {
                store.touch(key);
            }
        }

        private static SegmentMeta chained(String key, long start) {
            return SegmentMeta.of(key, PositionRange.of(start, start + 10), 10);
        }
    }

    @Nested
    class WTinyLfu {
        @Test
        void aBurstOfOneTimeSegmentsDoesNotDisplaceAPopularOne() {
            TieredStore store = new TieredStore(10_000, 10_000, DemotionPolicy.wTinyLfu());
            store.register(seg("p", 10), Tier.GPU);
            for (int i = 0; i < 5; i++) {
                store.touch("p");
            }
            for (int i = 0; i < 100; i++) {
                store.register(seg("x" + i, 10), Tier.GPU);
            }
            // p is the least recently used (LRU would name it) and the window has long pushed it on;
            // the newest candidates lose the admission duel against it, so they are named instead.
            assertEquals(List.of("x98", "x97", "x96"), store.candidatesForDemotion(Tier.GPU, 30));
            assertEquals(store.candidatesForDemotion(Tier.GPU, 30), store.candidatesForDemotion(Tier.GPU, 30));
        }

        @Test
        void aCandidateMorePopularThanTheVictimIsAdmitted() {
            TieredStore store = new TieredStore(10_000, 10_000, DemotionPolicy.wTinyLfu());
            store.register(seg("v", 10), Tier.GPU);
            store.register(seg("c", 10), Tier.GPU);
            for (int i = 0; i < 3; i++) {
                store.touch("c");
            }
            store.register(seg("y", 10), Tier.GPU); // pushes c out of the window as a candidate
            assertEquals(List.of("v"), store.candidatesForDemotion(Tier.GPU, 10));
            assertEquals(List.of("v", "c", "y"), store.candidatesForDemotion(Tier.GPU, 30));
        }

        @Test
        void theSketchCountsAndForgets() {
            FrequencySketch sketch = new FrequencySketch();
            int hot = 0x1234_5678;
            int cold = 0x7654_3210;
            for (int i = 0; i < 20; i++) {
                sketch.increment(hot);
            }
            assertEquals(15, sketch.frequency(hot)); // 4-bit counters saturate
            assertEquals(0, sketch.frequency(cold));
            // 10 x width additions halve every counter.
            for (int i = 0; i < 10 * sketch.width(); i++) {
                sketch.increment(i * 0x9E3779B9);
            }
            assertTrue(sketch.frequency(hot) <= 8, "halved: " + sketch.frequency(hot));
            sketch.ensureCapacity(10_000);
            assertTrue(sketch.width() >= 10_000, "grown to " + sketch.width());
            assertEquals(0, sketch.frequency(hot));
        }
    }
}
