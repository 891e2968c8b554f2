package dev.kvtier.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** What the Java store promises beyond the seed: determinism, policies, rollback, errors, overflow. */
class TieredStoreTest {

    private static SegmentMeta seg(String key, long size) {
        return SegmentMeta.of(key, PositionRange.of(0, 10), size);
    }

    @Nested
    class DeterministicCandidates {
        @Test
        void tierOfFollowsEveryMoveAndForgetsRemovedKeys() {
            TieredStore store = new TieredStore(1_000, 1_000);
            assertNull(store.tierOf("a"));
            assertTrue(store.register(seg("a", 100), Tier.GPU));
            assertEquals(Tier.GPU, store.tierOf("a"));
            store.demote("a", Tier.DISK).orElseThrow();
            assertEquals(Tier.DISK, store.tierOf("a"));
            assertEquals(store.get("a").orElseThrow().tier(), store.tierOf("a"));
            store.promote("a", Tier.CPU).orElseThrow();
            assertEquals(Tier.CPU, store.tierOf("a"));
            store.remove("a");
            assertNull(store.tierOf("a"));
            assertThrows(IllegalArgumentException.class, () -> store.tierOf(" "));
        }

        @Test
        void accessCountTiesGoToTheLeastRecentlyRegistered() {
            TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.leastAccessedFirst());
            for (String key : List.of("c", "a", "e", "b", "d")) {
                store.register(seg(key, 10), Tier.GPU);
            }
            assertEquals(List.of("c", "a", "e", "b", "d"), store.candidatesForDemotion(Tier.GPU, 50));
            assertEquals(List.of("c", "a"), store.candidatesForDemotion(Tier.GPU, 11));
        }

        @Test
        void touchAndPromoteMakeASegmentRecentWithinItsCountBucket() {
            TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.leastAccessedFirst());
            store.register(seg("x", 10), Tier.GPU);
            store.register(seg("y", 10), Tier.CPU);
            store.register(seg("z", 10), Tier.GPU);
            store.touch("z");
            store.touch("x");   // x and z both count 1; x touched later
            store.promote("y", Tier.GPU); // y count 1, used last
            assertEquals(List.of("z", "x", "y"), store.candidatesForDemotion(Tier.GPU, Long.MAX_VALUE));
        }

        @Test
        void demotionIsNotAUse() {
            TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.leastAccessedFirst());
            store.register(seg("old", 10), Tier.GPU);
            store.register(seg("new", 10), Tier.GPU);
            store.demote("old", Tier.CPU);
            store.demote("new", Tier.CPU);
            assertEquals(List.of("old", "new"), store.candidatesForDemotion(Tier.CPU, 20));
        }

        @Test
        void sameHistoryGivesSameListAcrossStores() {
            List<List<String>> answers = new ArrayList<>();
            for (int run = 0; run < 3; run++) {
                TieredStore store = new TieredStore(10_000, 10_000, DemotionPolicy.leastAccessedFirst());
                for (int i = 0; i < 200; i++) {
                    store.register(seg("k" + (i * 7919 % 200), 10), Tier.GPU);
                }
                for (int i = 0; i < 200; i += 3) {
                    store.touch("k" + i);
                }
                answers.add(store.candidatesForDemotion(Tier.GPU, 1_000));
            }
            assertEquals(answers.get(0), answers.get(1));
            assertEquals(answers.get(0), answers.get(2));
            assertEquals(100, answers.get(0).size());
        }

        @Test
        void stopsAsSoonAsEnoughIsFreedAndReturnsWholeTierOtherwise() {
            TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.leastAccessedFirst());
            store.register(seg("a", 30), Tier.GPU);
            store.register(seg("b", 30), Tier.GPU);
            store.register(seg("c", 30), Tier.GPU);
            store.register(seg("other-tier", 30), Tier.CPU);
            assertEquals(List.of("a"), store.candidatesForDemotion(Tier.GPU, 30));
            assertEquals(List.of("a", "b"), store.candidatesForDemotion(Tier.GPU, 31));
            assertEquals(List.of("a", "b", "c"), store.candidatesForDemotion(Tier.GPU, 1_000_000));
            assertEquals(List.of(), store.candidatesForDemotion(Tier.DISK, 1));
        }

        @Test
        void nothingNeededGivesEmptyList() {
            TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.leastAccessedFirst());
            store.register(seg("a", 30), Tier.GPU);
            assertEquals(List.of(), store.candidatesForDemotion(Tier.GPU, 0));
            assertEquals(List.of(), store.candidatesForDemotion(Tier.GPU, -5));
        }

        @Test
        void zeroSizedSegmentsAreAllOfferedWhenTheyCannotFreeEnough() {
            TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.leastAccessedFirst());
            store.register(seg("empty1", 0), Tier.GPU);
            store.register(seg("empty2", 0), Tier.GPU);
            assertEquals(List.of("empty1", "empty2"), store.candidatesForDemotion(Tier.GPU, 1));
        }

        @Test
        void hugeNeedOverHugeSizesDoesNotOverflow() {
            TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.leastAccessedFirst());
            store.register(seg("a", Long.MAX_VALUE), Tier.DISK);
            store.remove("a");
            store.register(seg("b", Long.MAX_VALUE - 1), Tier.DISK);
            store.register(seg("c", 1), Tier.DISK);
            assertEquals(List.of("b", "c"), store.candidatesForDemotion(Tier.DISK, Long.MAX_VALUE));
        }
    }

    @Nested
    class Policies {
        @Test
        void leastRecentlyUsedIgnoresAccessCounts() {
            TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.leastRecentlyUsed());
            store.register(seg("a", 10), Tier.GPU);
            store.register(seg("b", 10), Tier.GPU);
            store.register(seg("c", 10), Tier.GPU);
            store.touch("a");
            store.touch("a");
            store.touch("b");
            // a has count 2, b count 1, c count 0; by recency c, a, b
            assertEquals(List.of("c", "a", "b"), store.candidatesForDemotion(Tier.GPU, 30));
        }

        @Test
        void defaultIsTheAdaptiveS3FifoAndTheSeedsPolicyKeepsItsName() {
            TieredStore store = new TieredStore(1_000, 1_000);
            assertEquals(DemotionPolicy.defaultPolicy(), store.policy());
            assertEquals(DemotionPolicy.adaptiveS3Fifo(), store.policy());
            assertEquals("adaptive-s3-fifo", store.policy().name());
            assertEquals("adaptive-s3-fifo-lfu", DemotionPolicy.adaptiveS3FifoLfu().name());
            assertEquals(DemotionPolicy.leastAccessedFirst(), DemotionPolicy.named("least-accessed-first"));
            assertEquals("least-accessed-first", DemotionPolicy.leastAccessedFirst().name());
            assertEquals("least-recently-used", DemotionPolicy.leastRecentlyUsed().name());
        }

        @Test
        void customPolicyOrdersTheIndexAndRecencyBreaksItsTies() {
            DemotionPolicy largestFirst = new DemotionPolicy() {
                @Override
                public String name() {
                    return "largest-first";
                }

                @Override
                public Comparator<Usage> demotionOrder() {
                    return Comparator.comparingLong(Usage::sizeBytes).reversed();
                }
            };
            TieredStore store = new TieredStore(1_000, 1_000, largestFirst);
            store.register(seg("small", 1), Tier.GPU);
            store.register(seg("big-old", 100), Tier.GPU);
            store.register(seg("mid", 50), Tier.GPU);
            store.register(seg("big-new", 100), Tier.GPU);
            assertEquals(List.of("big-old", "big-new", "mid", "small"),
                    store.candidatesForDemotion(Tier.GPU, 1_000));
            store.touch("big-old");
            assertEquals(List.of("big-new", "big-old"), store.candidatesForDemotion(Tier.GPU, 200));
        }
    }

    @Nested
    class Rollback {
        @Test
        void undoesADemotion() {
            TieredStore store = new TieredStore(100, 100, DemotionPolicy.leastAccessedFirst());
            store.register(seg("s", 60), Tier.GPU);
            TierTransfer down = store.demote("s", Tier.DISK).orElseThrow();
            assertTrue(store.rollback(down));
            SegmentMeta back = store.get("s").orElseThrow();
            assertEquals(Tier.GPU, back.tier());
            assertEquals(0, back.accessCount());
            assertEquals(60, store.gpuUsed());
            assertEquals(0, store.diskUsed());
        }

        @Test
        void undoesAPromotionAndItsAccessCountButKeepsLaterTouches() {
            TieredStore store = new TieredStore(100, 100, DemotionPolicy.leastAccessedFirst());
            store.register(seg("s", 60), Tier.CPU);
            TierTransfer up = store.promote("s", Tier.GPU).orElseThrow();
            store.touch("s");
            assertEquals(2, store.get("s").orElseThrow().accessCount());
            assertTrue(store.rollback(up));
            SegmentMeta back = store.get("s").orElseThrow();
            assertEquals(Tier.CPU, back.tier());
            assertEquals(1, back.accessCount());
            assertEquals(0, store.gpuUsed());
            assertEquals(60, store.cpuUsed());
        }

        @Test
        void refusesTwiceAndForAnythingButTheLatestMove() {
            TieredStore store = new TieredStore(100, 100, DemotionPolicy.leastAccessedFirst());
            store.register(seg("s", 60), Tier.GPU);
            TierTransfer first = store.demote("s", Tier.CPU).orElseThrow();
            TierTransfer second = store.demote("s", Tier.DISK).orElseThrow();
            assertFalse(store.rollback(first), "superseded by a later move");
            assertTrue(store.rollback(second));
            assertFalse(store.rollback(second), "already rolled back");
            assertEquals(Tier.CPU, store.get("s").orElseThrow().tier());
            assertEquals(60, store.cpuUsed());
            assertEquals(0, store.diskUsed());
        }

        @Test
        void refusesMismatchedOrForeignTransfersAndChangesNothing() {
            TieredStore store = new TieredStore(100, 100, DemotionPolicy.leastAccessedFirst());
            store.register(seg("s", 60), Tier.GPU);
            TierTransfer real = store.demote("s", Tier.CPU).orElseThrow();
            List<TierTransfer> wrong = List.of(
                    new TierTransfer("s", Tier.GPU, Tier.CPU, 61, real.positions()),
                    new TierTransfer("s", Tier.GPU, Tier.CPU, 60, PositionRange.of(0, 11)),
                    new TierTransfer("s", Tier.GPU, Tier.DISK, 60, real.positions()),
                    new TierTransfer("s", Tier.DISK, Tier.CPU, 60, real.positions()),
                    new TierTransfer("unknown", Tier.GPU, Tier.CPU, 60, real.positions()));
            for (TierTransfer t : wrong) {
                assertFalse(store.rollback(t), t.toString());
            }
            assertEquals(Tier.CPU, store.get("s").orElseThrow().tier());
            assertEquals(0, store.gpuUsed());
            assertEquals(60, store.cpuUsed());
        }

        @Test
        void refusesAfterRemoveAndReRegister() {
            TieredStore store = new TieredStore(100, 100, DemotionPolicy.leastAccessedFirst());
            store.register(seg("s", 60), Tier.GPU);
            TierTransfer down = store.demote("s", Tier.CPU).orElseThrow();
            store.remove("s");
            store.register(seg("s", 60), Tier.CPU);
            assertFalse(store.rollback(down));
            assertEquals(60, store.cpuUsed());
            assertEquals(0, store.gpuUsed());
        }

        @Test
        void refusesWhenTheSourceTierFilledUpMeanwhile() {
            TieredStore store = new TieredStore(100, 100, DemotionPolicy.leastAccessedFirst());
            store.register(seg("s", 60), Tier.GPU);
            TierTransfer down = store.demote("s", Tier.CPU).orElseThrow();
            assertTrue(store.register(seg("squatter", 50), Tier.GPU));
            assertFalse(store.rollback(down));
            assertEquals(Tier.CPU, store.get("s").orElseThrow().tier());
            assertEquals(50, store.gpuUsed());
            store.remove("squatter");
            assertTrue(store.rollback(down), "the latest move is still undoable once there is room");
        }

        @Test
        void keepsThePromotionsRecencySoTheIndexStaysConsistent() {
            TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.leastAccessedFirst());
            store.register(seg("a", 10), Tier.CPU);
            store.register(seg("b", 10), Tier.CPU);
            TierTransfer up = store.promote("a", Tier.GPU).orElseThrow();
            assertTrue(store.rollback(up));
            // both count 0 again; a's promotion was its latest use, so b is older
            assertEquals(List.of("b", "a"), store.candidatesForDemotion(Tier.CPU, 20));
            assertEquals(List.of(), store.candidatesForDemotion(Tier.GPU, 20));
        }
    }

    @Nested
    class Budgets {
        @Test
        void sizesNearLongMaxNeverOverflowIntoAdmission() {
            TieredStore store = new TieredStore(Long.MAX_VALUE, 10, DemotionPolicy.leastAccessedFirst());
            assertTrue(store.register(seg("a", Long.MAX_VALUE - 5), Tier.GPU));
            assertFalse(store.register(seg("b", 6), Tier.GPU));
            assertFalse(store.register(seg("c", Long.MAX_VALUE), Tier.GPU));
            assertTrue(store.register(seg("d", 5), Tier.GPU));
            assertEquals(Long.MAX_VALUE, store.gpuUsed());
            assertEquals(0, store.gpuFree());
            assertFalse(store.register(seg("e", Long.MAX_VALUE), Tier.CPU));
            assertEquals(10, store.cpuFree());
        }

        @Test
        void diskIsCappedAtLongMaxInsteadOfWrapping() {
            TieredStore store = new TieredStore(0, 0, DemotionPolicy.leastAccessedFirst());
            assertTrue(store.register(seg("a", Long.MAX_VALUE), Tier.DISK));
            assertFalse(store.register(seg("b", 1), Tier.DISK));
            assertTrue(store.register(seg("zero", 0), Tier.DISK));
            assertEquals(Long.MAX_VALUE, store.diskUsed());
        }

        @Test
        void zeroBudgetsAdmitOnlyEmptySegments() {
            TieredStore store = new TieredStore(0, 0, DemotionPolicy.leastAccessedFirst());
            assertTrue(store.register(seg("empty", 0), Tier.GPU));
            assertFalse(store.register(seg("one", 1), Tier.CPU));
            assertEquals(0, store.gpuFree());
        }

        @Test
        void exactFitIsAdmitted() {
            TieredStore store = new TieredStore(100, 0, DemotionPolicy.leastAccessedFirst());
            assertTrue(store.register(seg("a", 40), Tier.GPU));
            assertTrue(store.register(seg("b", 60), Tier.GPU));
            assertFalse(store.register(seg("c", 1), Tier.GPU));
            assertEquals(0, store.gpuFree());
        }

        @Test
        void demoteBlockedByBudgetChangesNothing() {
            TieredStore store = new TieredStore(100, 10, DemotionPolicy.leastAccessedFirst());
            store.register(seg("s", 50), Tier.GPU);
            assertTrue(store.demote("s", Tier.CPU).isEmpty());
            assertEquals(Tier.GPU, store.get("s").orElseThrow().tier());
            assertEquals(50, store.gpuUsed());
            assertEquals(0, store.cpuUsed());
        }

        @Test
        void discardRemovesAsRemoveDoesAnsweringOnlyWhetherItWasRegistered() {
            for (DemotionPolicy policy : List.of(DemotionPolicy.leastAccessedFirst(), DemotionPolicy.defaultPolicy())) {
                TieredStore discarding = new TieredStore(100, 100, policy);
                TieredStore removing = new TieredStore(100, 100, policy);
                for (TieredStore store : List.of(discarding, removing)) {
                    store.register(seg("a", 10), Tier.GPU);
                    store.register(seg("b", 20), Tier.GPU);
                    store.register(seg("c", 30), Tier.CPU);
                    store.touch("a");
                }
                SegmentHandle c = discarding.handle("c");
                assertTrue(discarding.discard("a"));
                assertTrue(removing.remove("a").isPresent());
                assertTrue(discarding.discard(c));
                assertTrue(removing.remove(removing.handle("c")).isPresent());
                assertFalse(discarding.discard("a"), "already discarded");
                assertFalse(discarding.discard(c), "stale handle");
                assertFalse(discarding.discard("never"));
                assertEquals(removing.segments(), discarding.segments(), policy.name());
                assertEquals(20, discarding.gpuUsed());
                assertEquals(0, discarding.cpuUsed());
                assertEquals(removing.candidatesForDemotion(Tier.GPU, 100), discarding.candidatesForDemotion(Tier.GPU, 100));
                assertTrue(discarding.register(seg("a", 10), Tier.GPU), "the key is free again");
            }
        }

        @Test
        void candidatesNameEverySmallSegmentAfterMovesAndRemovals() {
            // The candidates list is presized from the tier's segment count and mean size: the count must follow
            // every register, move, rollback and removal, and a list of many more names than the mean suggests
            // (mixed sizes) still holds them all.
            for (DemotionPolicy policy : List.of(DemotionPolicy.leastAccessedFirst(), DemotionPolicy.defaultPolicy())) {
                TieredStore store = new TieredStore(10_000, 10_000, policy);
                for (int i = 0; i < 200; i++) {
                    assertTrue(store.register(seg("s" + i, i % 10 == 0 ? 100 : 1), Tier.GPU));
                }
                for (int i = 0; i < 50; i++) {
                    TierTransfer down = store.demote("s" + i, Tier.CPU).orElseThrow();
                    if (i % 5 == 0) {
                        assertTrue(store.rollback(down));
                    }
                }
                for (int i = 50; i < 80; i++) {
                    assertTrue(store.discard("s" + i));
                }
                assertEquals(120 + 10, store.candidatesForDemotion(Tier.GPU, Long.MAX_VALUE).size(), policy.name());
                assertEquals(40, store.candidatesForDemotion(Tier.CPU, Long.MAX_VALUE).size(), policy.name());
                assertEquals(0, store.candidatesForDemotion(Tier.DISK, 1).size(), policy.name());
                assertEquals(130, store.segmentsOn(Tier.GPU), policy.name());
                assertEquals(40, store.segmentsOn(Tier.CPU), policy.name());
                assertEquals(0, store.segmentsOn(Tier.DISK), policy.name());
                List<String> small = store.candidatesForDemotion(Tier.GPU, 5);
                assertFalse(small.isEmpty(), policy.name());
            }
        }

        @Test
        void reRegisteringASnapshotKeepsItsAccessCount() {
            TieredStore store = new TieredStore(100, 100, DemotionPolicy.leastAccessedFirst());
            store.register(seg("s", 10), Tier.GPU);
            store.touch("s");
            SegmentMeta removed = store.remove("s").orElseThrow();
            TieredStore other = new TieredStore(100, 100, DemotionPolicy.leastAccessedFirst());
            assertTrue(other.register(removed, Tier.CPU));
            assertEquals(1, other.get("s").orElseThrow().accessCount());
            assertEquals(Tier.CPU, other.get("s").orElseThrow().tier());
        }
    }

    @Nested
    class Snapshots {
        @Test
        void snapshotsDoNotChangeWhenTheSegmentMoves() {
            TieredStore store = new TieredStore(100, 100, DemotionPolicy.leastAccessedFirst());
            store.register(seg("s", 10), Tier.GPU);
            SegmentMeta before = store.get("s").orElseThrow();
            store.demote("s", Tier.CPU);
            store.touch("s");
            assertEquals(Tier.GPU, before.tier());
            assertEquals(0, before.accessCount());
            assertNotEquals(before, store.get("s").orElseThrow());
        }

        @Test
        void segmentsIsAnUnmodifiableSnapshotInRegistrationOrder() {
            TieredStore store = new TieredStore(100, 100, DemotionPolicy.leastAccessedFirst());
            store.register(seg("b", 1), Tier.GPU);
            store.register(seg("a", 2), Tier.CPU);
            store.register(seg("c", 3), Tier.DISK);
            Collection<SegmentMeta> all = store.segments();
            assertEquals(List.of("b", "a", "c"), all.stream().map(SegmentMeta::key).toList());
            store.remove("a");
            assertEquals(3, all.size());
            assertThrows(UnsupportedOperationException.class, () -> all.clear());
            assertEquals(2, store.numSegments());
        }

        @Test
        void valueTypesBehave() {
            SegmentMeta meta = SegmentMeta.of("k", PositionRange.of(3, 10), 5);
            assertEquals(7, meta.numPositions());
            assertEquals(Tier.GPU, meta.tier());
            assertEquals(0, meta.accessCount());
            assertEquals(meta, SegmentMeta.of("k", PositionRange.of(3, 10), 5));
            assertEquals(meta.hashCode(), SegmentMeta.of("k", PositionRange.of(3, 10), 5).hashCode());
            assertEquals("[3, 10)", PositionRange.of(3, 10).toString());
            assertEquals(0, PositionRange.of(4, 4).length());
            assertTrue(new TierTransfer("k", Tier.CPU, Tier.GPU, 1, PositionRange.of(0, 1)).isPromotion());
            assertFalse(new TierTransfer("k", Tier.GPU, Tier.DISK, 1, PositionRange.of(0, 1)).isPromotion());
        }
    }

    @Nested
    class BadInput {
        private static void assertRejected(String expectedMessage, Executable call) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
            assertEquals(expectedMessage, e.getMessage());
        }

        @Test
        void valueTypesNameTheArgumentAndValue() {
            assertRejected("start must be >= 0, was -1", () -> PositionRange.of(-1, 5));
            assertRejected("end must be >= start, was end=4 < start=5", () -> PositionRange.of(5, 4));
            assertRejected("key must not be null", () -> SegmentMeta.of(null, PositionRange.of(0, 1), 1));
            assertRejected("key must not be blank, was \" \"", () -> SegmentMeta.of(" ", PositionRange.of(0, 1), 1));
            assertRejected("key must not be blank, was \"\"", () -> SegmentMeta.of("", PositionRange.of(0, 1), 1));
            assertRejected("positions must not be null", () -> SegmentMeta.of("k", null, 1));
            assertRejected("sizeBytes must be >= 0, was -3", () -> SegmentMeta.of("k", PositionRange.of(0, 1), -3));
            assertRejected("other must not be null", () -> Tier.GPU.isFasterThan(null));
            PositionRange p = PositionRange.of(0, 1);
            assertRejected("to must differ from from, both were CPU", () -> new TierTransfer("k", Tier.CPU, Tier.CPU, 1, p));
            assertRejected("from must not be null", () -> new TierTransfer("k", null, Tier.CPU, 1, p));
            assertRejected("to must not be null", () -> new TierTransfer("k", Tier.GPU, null, 1, p));
            assertRejected("sizeBytes must be >= 0, was -1", () -> new TierTransfer("k", Tier.GPU, Tier.CPU, -1, p));
            assertRejected("positions must not be null", () -> new TierTransfer("k", Tier.GPU, Tier.CPU, 1, null));
            assertRejected("key must not be blank, was \"\t\"", () -> new TierTransfer("\t", Tier.GPU, Tier.CPU, 1, p));
        }

        @Test
        void constructorNamesTheArgumentAndValue() {
            assertRejected("gpuBudget must be >= 0, was -1", () -> new TieredStore(-1, 0, DemotionPolicy.leastAccessedFirst()));
            assertRejected("cpuBudget must be >= 0, was -7", () -> new TieredStore(0, -7, DemotionPolicy.leastAccessedFirst()));
            assertRejected("policy must not be null", () -> new TieredStore(0, 0, null));
        }

        @Test
        void storeMethodsNameTheArgumentAndValueAndChangeNothing() {
            TieredStore store = new TieredStore(100, 100, DemotionPolicy.leastAccessedFirst());
            store.register(seg("s", 10), Tier.CPU);
            List<SegmentMeta> before = store.segments();
            assertRejected("meta must not be null", () -> store.register(null, Tier.GPU));
            assertRejected("tier must not be null", () -> store.register(seg("n", 1), null));
            assertRejected("key must not be null", () -> store.demote((String) null, Tier.DISK));
            assertRejected("key must not be blank, was \" \"", () -> store.demote(" ", Tier.DISK));
            assertRejected("to must not be null", () -> store.demote("s", null));
            assertRejected("key must not be null", () -> store.promote((String) null, Tier.GPU));
            assertRejected("to must not be null", () -> store.promote("s", null));
            assertRejected("key must not be blank, was \"\"", () -> store.remove(""));
            assertRejected("key must not be null", () -> store.discard((String) null));
            assertRejected("key must not be blank, was \" \"", () -> store.discard(" "));
            assertRejected("handle must not be null", () -> store.discard((SegmentHandle) null));
            assertRejected("key must not be null", () -> store.get((String) null));
            assertRejected("handle must not be null", () -> store.get((SegmentHandle) null));
            assertRejected("handle must not be null", () -> store.touch((SegmentHandle) null));
            assertRejected("handle must not be null", () -> store.demote((SegmentHandle) null, Tier.DISK));
            assertRejected("to must not be null", () -> store.demote(store.handle("s"), null));
            assertRejected("key must not be blank, was \"  \"", () -> store.touch("  "));
            assertRejected("tier must not be null", () -> store.candidatesForDemotion(null, 10));
            assertRejected("transfer must not be null", () -> store.rollback(null));
            assertEquals(before, store.segments());
            assertEquals(10, store.cpuUsed());
            assertEquals(0, store.gpuUsed());
            assertEquals(List.of("s"), store.candidatesForDemotion(Tier.CPU, 1));
        }

        @Test
        void inconsistentPolicyIsReportedBeforeAnythingChanges() {
            DemotionPolicy broken = new DemotionPolicy() {
                @Override
                public String name() {
                    return "broken";
                }

                @Override
                public Comparator<Usage> demotionOrder() {
                    return (a, b) -> 1; // never equal, not antisymmetric: a TreeSet cannot find anything
                }
            };
            TieredStore store = new TieredStore(100, 100, broken);
            store.register(seg("a", 10), Tier.GPU);
            store.register(seg("b", 10), Tier.GPU);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> store.touch("a"));
            assertTrue(e.getMessage().contains("broken"), e.getMessage());
            assertEquals(0, store.get("a").orElseThrow().accessCount());
            assertEquals(20, store.gpuUsed());
        }
    }
}
