package dev.kvtier.store;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * What a touch without the lock asks the entry alone (SegmentEntry#takesUseInPlace, #registered), tier by tier: its
 * copy of each record's out-of-order flag must follow that record (set, cleared, dropped with it) and a bit of one tier
 * never answer for another. Guards the entry's bookkeeping for any change of how these fields are stored (a
 * field-order experiment packed them into one byte, measured and not kept).
 */
class SegmentEntryTest {

    private static SegmentEntry entry(String key) {
        return new SegmentEntry(null, SegmentMeta.of(key, PositionRange.of(0, 1), 1), Tier.GPU, 0);
    }

    @Test
    void aUseStaysInPlaceOnlyOnATierWhereItsRecordIsInOrder() {
        for (Tier tier : Tier.values()) {
            int t = tier.ordinal();
            SegmentEntry entry = entry("k");
            UsageBucketIndex.Record record = new UsageBucketIndex.Record(entry);
            assertFalse(entry.takesUseInPlace(t), tier + ": no record yet");

            entry.record(t, record);
            assertSame(record, entry.record(t));
            assertTrue(entry.takesUseInPlace(t), tier + ": a record in its bucket's list");
            for (Tier other : Tier.values()) {
                if (other != tier) {
                    assertNull(entry.record(other.ordinal()), tier + " filed, " + other + " asked");
                    assertFalse(entry.takesUseInPlace(other.ordinal()), tier + " filed, " + other + " asked");
                }
            }

            entry.recordOutOfOrder(t, true);
            assertTrue(entry.recordOutOfOrder(t));
            assertFalse(entry.takesUseInPlace(t), tier + ": a record in its bucket's tree must be re-filed");

            entry.recordOutOfOrder(t, false);
            assertTrue(entry.takesUseInPlace(t), tier + ": back in its bucket's list");

            entry.recordOutOfOrder(t, true);
            entry.record(t, null);
            assertNull(entry.record(t));
            assertFalse(entry.recordOutOfOrder(t), tier + ": a dropped record is not out of order");
            assertFalse(entry.takesUseInPlace(t), tier + ": record dropped");
            entry.record(t, record);
            assertTrue(entry.takesUseInPlace(t), tier + ": filed again, in order (the dropped one's flag is gone)");
        }
    }

    @Test
    void recordsOnSeveralTiersKeepTheirOwnBits() {
        SegmentEntry entry = entry("k");
        int gpu = Tier.GPU.ordinal();
        int cpu = Tier.CPU.ordinal();
        int disk = Tier.DISK.ordinal();
        entry.record(gpu, new UsageBucketIndex.Record(entry));
        entry.record(disk, new UsageBucketIndex.Record(entry));
        entry.recordOutOfOrder(disk, true);
        assertTrue(entry.takesUseInPlace(gpu));
        assertFalse(entry.takesUseInPlace(cpu));
        assertFalse(entry.takesUseInPlace(disk));
        entry.record(gpu, null);
        assertFalse(entry.takesUseInPlace(gpu));
        assertTrue(entry.recordOutOfOrder(disk), "dropping the GPU record leaves the disk record's flag");
        assertTrue(entry.registered(), "records say nothing of registration");
    }

    @Test
    void itIsRegisteredUntilItLeavesItsTable() {
        EntryTable table = new EntryTable();
        SegmentEntry a = entry("a");
        SegmentEntry b = entry("b");
        assertTrue(a.registered(), "an entry is registered from its construction (published once added)");
        table.add(a);
        table.add(b);
        a.record(Tier.GPU.ordinal(), new UsageBucketIndex.Record(a));
        table.remove(a);
        assertFalse(a.registered(), "removed");
        assertTrue(a.takesUseInPlace(Tier.GPU.ordinal()), "its record is the order index's to drop, not the table's");
        assertTrue(b.registered(), "another entry of the table stays registered");
        assertSame(b, table.get("b"));
        assertNull(table.get("a"));
    }
}
