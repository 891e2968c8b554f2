package dev.kvtier.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The bucket tree against a {@code TreeSet} with the order it replaced (filed last use, then key): the same members in
 * the same order after adds and removes, through leaf and inner splits, emptied leaves and a shrinking root, with the
 * tree's own invariants checked throughout.
 */
class RecordTreeTest {
    private static final Comparator<UsageBucketIndex.Record> ORDER =
            Comparator.<UsageBucketIndex.Record>comparingLong(r -> r.filedLastUse).thenComparing(r -> r.entry.key);

    private static UsageBucketIndex.Record record(String key, long filedLastUse) {
        UsageBucketIndex.Record record = new UsageBucketIndex.Record(
                new SegmentEntry(null, SegmentMeta.of(key, PositionRange.of(0, 1), 1), Tier.GPU, 0));
        record.filedLastUse = filedLastUse;
        return record;
    }

    private static void assertSameOrder(TreeSet<UsageBucketIndex.Record> model, RecordTree tree) {
        tree.checkInvariants();
        assertEquals(model.size(), tree.size());
        assertEquals(model.isEmpty(), tree.isEmpty());
        UsageBucketIndex.Record node = tree.first();
        for (UsageBucketIndex.Record expected : model) {
            assertSame(expected, node);
            node = tree.higher(node);
        }
        assertNull(node);
    }

    /** Random adds and removes, {@code lastUses} distinct last uses (few: ties broken by the key are common). */
    private static void play(long seed, int steps, int lastUses, int addsInFive) {
        SplittableRandom random = new SplittableRandom(seed);
        TreeSet<UsageBucketIndex.Record> model = new TreeSet<>(ORDER);
        RecordTree tree = new RecordTree();
        List<UsageBucketIndex.Record> members = new ArrayList<>();
        for (int step = 0; step < steps; step++) {
            if (members.isEmpty() || random.nextInt(5) < addsInFive) {
                UsageBucketIndex.Record record = record("k" + seed + "-" + step, random.nextInt(lastUses));
                tree.add(record);
                assertTrue(model.add(record));
                members.add(record);
            } else {
                UsageBucketIndex.Record record = members.remove(random.nextInt(members.size()));
                tree.remove(record);
                model.remove(record);
            }
            if (step % 997 == 0 || members.size() < 8) {
                assertSameOrder(model, tree);
            }
        }
        assertSameOrder(model, tree);
        while (!members.isEmpty()) {
            UsageBucketIndex.Record record = members.remove(random.nextInt(members.size()));
            tree.remove(record);
            model.remove(record);
            if (members.size() % 500 == 0) {
                assertSameOrder(model, tree);
            }
        }
        assertTrue(tree.isEmpty());
        assertNull(tree.first());
        assertEquals(1, tree.checkInvariants());
    }

    @Test
    void smallTreesWithManyTiesKeepTheTreeSetsOrder() {
        for (int seed = 0; seed < 10; seed++) {
            play(seed, 3_000, 300, 3);
        }
    }

    @Test
    void largeTreesThroughInnerSplitsAndBackToEmptyKeepTheTreeSetsOrder() {
        // 4 adds in 5: ~30,000 members, three levels of 64-key nodes; then removed in random order to empty.
        play(42, 50_000, 1 << 30, 4);
    }

    @Test
    void ascendingAndDescendingAddsStayShallow() {
        RecordTree ascending = new RecordTree();
        RecordTree descending = new RecordTree();
        int n = 100_000;
        for (int i = 0; i < n; i++) {
            ascending.add(record("a" + i, i));
            descending.add(record("d" + i, n - i));
        }
        // Half-full nodes at worst: 32^3 < 100,000 <= 32^4, so at most 4 levels.
        assertTrue(ascending.checkInvariants() <= 4, "depth " + ascending.checkInvariants());
        assertTrue(descending.checkInvariants() <= 4, "depth " + descending.checkInvariants());
        assertEquals(0, ascending.first().filedLastUse);
        assertEquals(1, descending.first().filedLastUse);
    }

    @Test
    void removingARecordNotInTheTreeIsRefusedNamingIt() {
        RecordTree tree = new RecordTree();
        tree.add(record("present", 5));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> tree.remove(record("absent", 5)));
        assertTrue(e.getMessage().contains("absent"), e.getMessage());
    }
}
