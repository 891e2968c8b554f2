package dev.kvtier.store;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link TieredStore#hold} / {@link TieredStore#release} (a prefix block held on its tier by its children) and
 * the chain-aware S3-FIFO's view of a run of a chain registered tail first.
 */
class HeldSegmentsTest {
    private static final long SIZE = 10;

    private static SegmentMeta meta(String key, long start) {
        return SegmentMeta.of(key, PositionRange.of(start, start + 1), SIZE);
    }

    @Test
    void aHeldSegmentKeepsItsPlaceButIsNamedOnlyWhenTheOthersDoNotAddUp() {
        TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.s3Fifo());
        for (String key : List.of("a", "b", "c")) {
            assertTrue(store.register(meta(key, 0), Tier.GPU));
        }
        assertEquals(List.of("a"), store.candidatesForDemotion(Tier.GPU, SIZE));

        assertTrue(store.hold("a"));
        assertEquals(List.of("b"), store.candidatesForDemotion(Tier.GPU, SIZE));
        assertEquals(List.of("b", "c", "a"), store.candidatesForDemotion(Tier.GPU, 3 * SIZE), "held: named last");

        assertTrue(store.release("a"));
        assertEquals(List.of("a"), store.candidatesForDemotion(Tier.GPU, SIZE), "released: in its old place");
        assertFalse(store.hold("unknown"));
        assertFalse(store.release("unknown"));
    }

    @Test
    void leavingTheTierEndsAHold() {
        TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.s3Fifo());
        assertTrue(store.register(meta("a", 0), Tier.GPU));
        assertTrue(store.register(meta("b", 0), Tier.GPU));
        assertTrue(store.hold("a"));
        assertTrue(store.demote("a", Tier.CPU).isPresent());
        assertTrue(store.promote("a", Tier.GPU).isPresent());
        assertEquals(List.of("b", "a"), store.candidatesForDemotion(Tier.GPU, 2 * SIZE));
        assertTrue(store.demote("b", Tier.CPU).isPresent());
        assertEquals(List.of("a"), store.candidatesForDemotion(Tier.GPU, SIZE), "not held any more");
    }

    @Test
    void holdingIsNotAUse() {
        TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.s3Fifo());
        assertTrue(store.register(meta("a", 0), Tier.GPU));
        long before = store.get("a").orElseThrow().accessCount();
        assertTrue(store.hold("a"));
        assertTrue(store.release("a"));
        assertEquals(before, store.get("a").orElseThrow().accessCount());
    }

    /**
     * A run registered tail first: only its last block is a chain tail (named before everything else); the blocks
     * before it are continued by the registration just before theirs.
     */
    @Test
    void aRunRegisteredTailFirstHasOneChainTail() {
        TieredStore store = new TieredStore(100_000, 1_000, DemotionPolicy.chainAwareS3Fifo());
        // A chain registered root first: continued but for its last block.
        for (int i = 0; i < 5; i++) {
            assertTrue(store.register(meta("root-first-" + i, i), Tier.GPU));
        }
        // Another chain's run, registered tail first at positions 1000..1002.
        for (int i = 2; i >= 0; i--) {
            assertTrue(store.register(meta("tail-first-" + i, 1_000 + i), Tier.GPU));
        }
        for (int i = 0; i < 40; i++) { // past the continuation window: the pending ones are judged
            assertTrue(store.touch("root-first-0"));
        }
        assertEquals(List.of("root-first-4", "tail-first-2", "root-first-1"),
                store.candidatesForDemotion(Tier.GPU, 3 * SIZE));
    }
}
