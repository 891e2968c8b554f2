package dev.kvtier.tiering;

import dev.kvtier.store.PositionRange;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * The segment table's open-addressing slots against a map: random places and removals, with few distinct hash
 * values among many keys so probe runs are long and wrap around the end, must leave every key findable (removal
 * shifts later segments of a run back) and every removed key gone.
 */
class SegmentTableSlotsTest {

    /** Keys whose hash codes collide in groups: "Aa" and "BB" hash alike, so do their concatenations. */
    private static String collidingKey(int n) {
        StringBuilder key = new StringBuilder();
        for (int bit = 0; bit < 4; bit++) {
            key.append((n >> bit & 1) == 0 ? "Aa" : "BB");
        }
        return key.append('/').append(n >> 4).toString();
    }

    @Test
    void randomPlacesAndRemovalsKeepEveryKeyFindable() {
        for (long seed = 1; seed <= 20; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            SegmentTable.Slots slots = new SegmentTable.Slots(256);
            Map<String, Segment> model = new HashMap<>();
            List<String> keys = new ArrayList<>();
            for (int n = 0; n < 400; n++) {
                keys.add(random.nextBoolean() ? collidingKey(n) : "k" + n);
            }
            for (int op = 0; op < 5_000; op++) {
                String key = keys.get(random.nextInt(keys.size()));
                Segment present = model.get(key);
                if (present == null && model.size() < 128) { // at most half full, as the table keeps itself
                    Segment segment = new Segment(key, PositionRange.of(0, 1), 1);
                    slots.place(segment, key.hashCode());
                    model.put(key, segment);
                } else if (present != null) {
                    int slot = slots.slotOf(present, key.hashCode());
                    slots.removeAt(slot);
                    model.remove(key);
                    assertEquals(-1, slots.slotOf(present, key.hashCode()), "removed: " + key);
                }
                if (op % 97 == 0) {
                    for (String k : keys) {
                        Segment expected = model.get(k);
                        if (expected == null) {
                            assertNull(slots.find(k, k.hashCode()), "seed " + seed + ", op " + op + ": " + k + " was removed");
                        } else {
                            assertSame(expected, slots.find(new String(k), k.hashCode()), "seed " + seed + ", op " + op
                                    + ": " + k + " (an equal key, not the same string)");
                        }
                    }
                }
            }
        }
    }

    /**
     * The block index: blocks found by their hash words, through probe runs made long by hashes that collide (few
     * distinct hash values) and by removals; a block of equal low word but another high word is another block.
     */
    @Test
    void blocksAreFoundByTheirHashWordsThroughCollisionsAndRemovals() {
        for (long seed = 1; seed <= 20; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            SegmentTable.Slots slots = new SegmentTable.Slots(256);
            Map<Long, Segment> model = new HashMap<>();
            for (int op = 0; op < 5_000; op++) {
                long low = random.nextInt(300);
                long high = low % 2 == 0 ? 7 : 9; // the high word matters: compared below with the other one
                int hash = (int) (low % 5); // five hash values among 300 blocks: long runs, wrapping around
                Segment present = model.get(low);
                if (present == null && model.size() < 128) {
                    Segment block = Segment.block(high, low, PositionRange.of(0, 1), 1, null);
                    slots.place(block, hash);
                    model.put(low, block);
                } else if (present != null) {
                    slots.removeAt(slots.slotOf(present, hash));
                    model.remove(low);
                }
                if (op % 97 == 0) {
                    for (long l = 0; l < 300; l++) {
                        long h = l % 2 == 0 ? 7 : 9;
                        int lHash = (int) (l % 5);
                        assertSame(model.get(l), slots.findBlock(h, l, lHash), "seed " + seed + ", op " + op + ": block " + l);
                        assertNull(slots.findBlock(h + 1, l, lHash), "another high word: another block");
                    }
                }
            }
        }
    }

    @Test
    void aBlockKeyNamesItsHashAndBack() {
        long high = 0x0123_4567_89ab_cdefL;
        long low = 0xfedc_ba98_7654_3210L;
        String key = BlockKeys.of(high, low);
        assertEquals("kvblock:0123456789abcdeffedcba9876543210", key);
        assertTrue(BlockKeys.isBlockKey(key));
        assertEquals(high, BlockKeys.high(key));
        assertEquals(low, BlockKeys.low(key));
        assertEquals(key, Segment.block(high, low, PositionRange.of(0, 1), 1, null).key);
        for (String notOne : new String[] {"kvblock:0123456789ABCDEFfedcba9876543210", "kvblock:0123",
                "kvblocx:0123456789abcdeffedcba9876543210", "kvblock:0123456789abcdeffedcba987654321g"}) {
            assertFalse(BlockKeys.isBlockKey(notOne), notOne);
        }
    }
}
