package dev.kvtier.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The store's open-addressing table against a {@link LinkedHashMap}, through growth, deletions and renumbering. */
class EntryTableTest {

    private static SegmentEntry entry(String key) {
        return new SegmentEntry(null, SegmentMeta.of(key, PositionRange.of(0, 1), 1), Tier.GPU, 0);
    }

    @Test
    void randomAddsAndRemovesMatchALinkedHashMap() {
        // "Aa" and "BB" share a hash code, so keys built from them collide in every table size:
        // long probe runs, and deletions in their middle, are exercised, not just hoped for.
        String[] keys = new String[96];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = (i % 2 == 0 ? "Aa" : "BB") + ((i / 2) % 2 == 0 ? "Aa" : "BB") + (i < 8 ? "" : "-" + i);
        }
        for (long seed = 1; seed <= 20; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            // Odd seeds start the registration counter near its end: the order must survive the renumbering.
            EntryTable table = seed % 2 == 0 ? new EntryTable() : new EntryTable(Integer.MAX_VALUE - 300);
            Map<String, SegmentEntry> model = new LinkedHashMap<>();
            for (int step = 0; step < 2_000; step++) {
                String key = keys[random.nextInt(keys.length)];
                SegmentEntry present = model.get(key);
                if (present == null) {
                    SegmentEntry added = entry(new String(key)); // an equal key, not the same object
                    table.add(added);
                    model.put(key, added);
                } else {
                    table.remove(present);
                    model.remove(key);
                }
                assertEquals(model.size(), table.size(), "size, seed " + seed + " step " + step);
                for (String k : keys) {
                    SegmentEntry expected = model.get(k);
                    if (expected == null) {
                        assertNull(table.get(k), k + ", seed " + seed + " step " + step);
                    } else {
                        assertSame(expected, table.get(k), k + ", seed " + seed + " step " + step);
                    }
                }
                List<SegmentEntry> order = new ArrayList<>();
                table.forEachInRegistrationOrder(order::add);
                assertEquals(new ArrayList<>(model.values()), order, "order, seed " + seed + " step " + step);
                assertEquals(true, 2 * table.size() <= table.capacity(), "load at most 1/2");
            }
        }
    }

    @Test
    void nullKeyIsNeverFound() {
        EntryTable table = new EntryTable();
        table.add(entry("a"));
        assertNull(table.get(null));
    }
}
