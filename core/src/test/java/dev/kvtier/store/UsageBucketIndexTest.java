package dev.kvtier.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The bucket index's dead tails (UsageBucketIndex#forget): a removed segment whose record was its bucket's list
 * tail leaves that record behind, and the next registration filed there takes it over. Through the store, under
 * both built-in orders: a dead tail is never named, a registration taking one over is named in its right place,
 * and whatever else is filed or walked in that bucket (a re-filing, a walk, an arrival on a slower tier) finds
 * the order the eager removal gave. The whole order against a model is TieredStorePropertyTest's.
 */
class UsageBucketIndexTest {

    private static final PositionRange POSITIONS = PositionRange.of(0, 16);

    private static TieredStore store(String policy) {
        return new TieredStore(1_000, 1_000, DemotionPolicy.named(policy));
    }

    private static void register(TieredStore store, String key, Tier tier) {
        assertTrue(store.register(SegmentMeta.of(key, POSITIONS, 10), tier), key);
    }

    private static List<String> all(TieredStore store, Tier tier) {
        return store.candidatesForDemotion(tier, Long.MAX_VALUE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"least-accessed-first", "least-recently-used"})
    void aRemovedTailIsNeverNamedAndTheNextRegistrationTakesItsPlace(String policy) {
        TieredStore store = store(policy);
        register(store, "a", Tier.GPU);
        register(store, "b", Tier.GPU);
        register(store, "c", Tier.GPU);
        store.remove("c"); // the tail: left dead
        assertEquals(List.of("a", "b"), all(store, Tier.GPU));
        register(store, "d", Tier.GPU); // takes over the dead tail (or, after the walk above dropped it, a new one)
        store.remove("d");
        register(store, "e", Tier.GPU); // takes over d's record
        assertEquals(List.of("a", "b", "e"), all(store, Tier.GPU));
        store.remove("b"); // not the tail: unlinked at once
        store.remove("e");
        register(store, "c", Tier.GPU); // the key again, a new registration
        assertEquals(List.of("a", "c"), all(store, Tier.GPU));
    }

    @ParameterizedTest
    @ValueSource(strings = {"least-accessed-first", "least-recently-used"})
    void aReFilingPastADeadTailKeepsTheOrder(String policy) {
        TieredStore store = store(policy);
        register(store, "a", Tier.GPU);
        register(store, "b", Tier.GPU);
        store.touch("a"); // a's record stays where it was filed, stale
        register(store, "c", Tier.GPU);
        store.remove("c"); // dead tail after a's stale record
        // The walk re-files a behind b (in plain LRU into this very bucket, after where the dead tail was).
        assertEquals(List.of("b", "a"), all(store, Tier.GPU));
        register(store, "d", Tier.GPU);
        store.remove("d");
        store.touch("b");
        register(store, "e", Tier.GPU);
        assertEquals(policy.equals("least-recently-used") ? List.of("a", "b", "e") : List.of("e", "a", "b"),
                all(store, Tier.GPU));
    }

    @ParameterizedTest
    @ValueSource(strings = {"least-accessed-first", "least-recently-used"})
    void aRegistrationWithItsOwnCountLeavesADeadTailOfAnotherBucketUnnamed(String policy) {
        TieredStore store = store(policy);
        register(store, "a", Tier.GPU);
        register(store, "b", Tier.GPU);
        store.remove("b");
        assertTrue(store.register(SegmentMeta.of("c", POSITIONS, 10).withAccessCount(3), Tier.GPU));
        register(store, "d", Tier.GPU);
        assertEquals(policy.equals("least-recently-used") ? List.of("a", "c", "d") : List.of("a", "d", "c"),
                all(store, Tier.GPU));
    }

    /** A segment leaves its records on the tiers it visited; removed, each that was a tail is left dead there. */
    @ParameterizedTest
    @ValueSource(strings = {"least-accessed-first", "least-recently-used"})
    void deadTailsOnEveryTierTheRemovedSegmentVisited(String policy) {
        TieredStore store = store(policy);
        register(store, "a", Tier.GPU);
        register(store, "b", Tier.GPU);
        assertTrue(store.demote("a", Tier.CPU).isPresent());
        assertTrue(store.demote("b", Tier.CPU).isPresent());
        assertTrue(store.promote("b", Tier.GPU).isPresent()); // b keeps its CPU record, the CPU list's tail
        store.remove("b"); // dead tails on GPU and CPU
        assertEquals(List.of(), all(store, Tier.GPU));
        register(store, "c", Tier.CPU);
        register(store, "d", Tier.GPU);
        assertEquals(List.of("a", "c"), all(store, Tier.CPU));
        assertEquals(List.of("d"), all(store, Tier.GPU));
    }
}
