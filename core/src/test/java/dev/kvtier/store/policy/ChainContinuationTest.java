package dev.kvtier.store.policy;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link DemotionPolicy#adaptiveContinuationS3Fifo()}'s naming by chain continuation ({@link ChainContinuation}),
 * pinned on ({@link S3FifoPolicy#pinnedContinuation()}): what it learns from the walks it sees and how it names.
 */
class ChainContinuationTest {
    private static final long SIZE = 10;
    private static final int TOKENS = 16;

    /** Block {@code index} of the chain called {@code chain}. */
    private static SegmentMeta block(String chain, int index) {
        return SegmentMeta.of(chain + index, PositionRange.of((long) index * TOKENS, (long) (index + 1) * TOKENS), SIZE);
    }

    /** A walk registering a new chain of {@code blocks} blocks. */
    private static void registerChain(TieredStore store, String chain, int blocks) {
        for (int i = 0; i < blocks; i++) {
            assertTrue(store.register(block(chain, i), Tier.GPU));
        }
    }

    /** A walk reading the chain's first {@code blocks} blocks again. */
    private static void walk(TieredStore store, String chain, int blocks) {
        for (int i = 0; i < blocks; i++) {
            assertTrue(store.touch(chain + i));
        }
    }

    @Test
    void depthBucketsAreHalfOctaves() {
        assertEquals(0, ChainContinuation.bucket(0));
        assertEquals(0, ChainContinuation.bucket(1));
        assertEquals(2, ChainContinuation.bucket(2));
        assertEquals(3, ChainContinuation.bucket(3));
        assertEquals(4, ChainContinuation.bucket(4));
        assertEquals(5, ChainContinuation.bucket(6));
        assertEquals(18, ChainContinuation.bucket(512));
        assertEquals(19, ChainContinuation.bucket(768));
        assertEquals(125, ChainContinuation.bucket(Long.MAX_VALUE), "every position has a bucket");
        assertTrue(125 < ChainContinuation.BUCKETS);
    }

    /**
     * Short chains ("a") are each walked again once, long after they ended; long chains ("d") never are. The long
     * chains are the more recent, so any recency order names the short chains' segments first; a policy that learned
     * that chains ending that deep do not go on names the long chains' first.
     */
    @Test
    void theChainsLeastLikelyToGoOnAreNamedFirstEvenWhenMoreRecent() {
        TieredStore store = new TieredStore(1_000 * SIZE, 1_000 * SIZE, S3FifoPolicy.pinnedContinuation());
        for (int i = 0; i < 10; i++) {
            registerChain(store, "a" + i + "-", 2);
        }
        for (int i = 0; i < 30; i++) {
            registerChain(store, "b" + i + "-", 1); // fillers: the gaps before the short chains go on are long
        }
        for (int i = 0; i < 10; i++) {
            walk(store, "a" + i + "-", 2);
        }
        for (int i = 0; i < 10; i++) {
            registerChain(store, "d" + i + "-", 8);
        }
        registerChain(store, "end-", 1); // ends the last long walk

        List<String> order = store.candidatesForDemotion(Tier.GPU, 1_000 * SIZE);
        int lastLong = -1;
        int firstShort = Integer.MAX_VALUE;
        for (int i = 0; i < order.size(); i++) {
            if (order.get(i).startsWith("d")) {
                lastLong = i;
            } else if (order.get(i).startsWith("a")) {
                firstShort = Math.min(firstShort, i);
            }
        }
        assertTrue(lastLong < firstShort, "every long chain's segment before the short ones: " + order);
        assertEquals("end-0", order.get(order.size() - 1), "the walk in progress last: " + order);
    }

    /**
     * A prefix read by two chains ("p", a system prompt) is named after both chains' own segments: it is worth
     * keeping whichever chain goes on.
     */
    @Test
    void aPrefixSharedByChainsIsNamedAfterTheirOwnSegments() {
        TieredStore store = new TieredStore(1_000 * SIZE, 1_000 * SIZE, S3FifoPolicy.pinnedContinuation());
        registerChain(store, "p", 2);
        for (String chain : List.of("x", "y")) {
            walk(store, "p", 2);
            for (int i = 2; i < 6; i++) {
                assertTrue(store.register(block(chain, i), Tier.GPU));
            }
        }
        registerChain(store, "end-", 1);

        List<String> order = store.candidatesForDemotion(Tier.GPU, 1_000 * SIZE);
        List<String> own = new ArrayList<>(order.subList(0, order.size() - 3));
        assertEquals(List.of("p0", "p1", "end-0"), order.subList(order.size() - 3, order.size()), order.toString());
        assertEquals(8, own.size(), order.toString());
        assertFalse(own.contains("p0") || own.contains("p1"), order.toString());
    }

    /** Held segments are passed and named last; a segment that left the GPU tier is not named there. */
    @Test
    void heldSegmentsComeLastAndDemotedOnesAreGone() {
        TieredStore store = new TieredStore(1_000 * SIZE, 1_000 * SIZE, S3FifoPolicy.pinnedContinuation());
        registerChain(store, "a", 3);
        registerChain(store, "b", 3);
        registerChain(store, "end-", 1);
        assertTrue(store.hold("a0"));
        assertTrue(store.demote("b0", Tier.CPU).isPresent());
        List<String> order = store.candidatesForDemotion(Tier.GPU, 1_000 * SIZE);
        assertEquals(6, order.size(), order.toString());
        assertEquals("a0", order.get(order.size() - 1), order.toString());
        assertFalse(order.contains("b0"), order.toString());
    }

    /**
     * Walks continued after the counts were halved can leave a bucket with more continued walks than ended ones
     * (found with 256 walks per halving on generated chat): the odds must stay finite, or that bucket's segments are
     * never the lowest and a whole-tier query misses them. Here chains of 2 blocks are all continued (to 4 blocks, a
     * deeper bucket) after a halving, then fresh 2-block chains are asked for.
     */
    @Test
    void everySegmentIsNamedWhenContinuationsOutnumberEndedWalksAfterAHalving() {
        TieredStore store = new TieredStore(100_000 * SIZE, 0, S3FifoPolicy.pinnedContinuation());
        int chains = ChainContinuation.DECAY_WALKS + 10;
        for (int i = 0; i < chains; i++) {
            registerChain(store, "a" + i + "-", 2);
        }
        for (int i = 0; i < chains; i++) {
            walk(store, "a" + i + "-", 2);
            assertTrue(store.register(block("a" + i + "-", 2), Tier.GPU));
            assertTrue(store.register(block("a" + i + "-", 3), Tier.GPU));
        }
        for (int i = 0; i < 5; i++) {
            registerChain(store, "z" + i + "-", 2);
        }
        registerChain(store, "end-", 1);
        List<String> order = store.candidatesForDemotion(Tier.GPU, 100_000 * SIZE);
        assertEquals(4 * chains + 2 * 5 + 1, order.size(), "every segment named once");
        assertEquals(order.size(), new java.util.HashSet<>(order).size());
    }

    /**
     * A tier that never needs room is never asked for candidates, so the ring of walk tails must drop the tails that
     * left without a query: after 10,000 one-walk chains, each removed again, it holds a few at most.
     */
    @Test
    void removedTailsDoNotAccumulateWithoutQueries() {
        S3FifoPolicy.S3FifoTracker[] tracker = new S3FifoPolicy.S3FifoTracker[1];
        DemotionPolicy spy = new DemotionPolicy() {
            @Override
            public String name() {
                return "spy";
            }

            @Override
            public Tracker newTracker(long gpuBudget, long cpuBudget) {
                tracker[0] = (S3FifoPolicy.S3FifoTracker) S3FifoPolicy.pinnedContinuation().newTracker(gpuBudget, cpuBudget);
                return tracker[0];
            }
        };
        TieredStore store = new TieredStore(1_000 * SIZE, 0, spy);
        for (int i = 0; i < 10_000; i++) {
            registerChain(store, "c" + i + "-", 2);
            if (i > 0) {
                assertTrue(store.remove("c" + (i - 1) + "-0").isPresent());
                assertTrue(store.remove("c" + (i - 1) + "-1").isPresent());
            }
        }
        int capacity = tracker[0].chains().tailRingCapacity();
        assertTrue(capacity <= 64, "ring of " + capacity);
    }
}
