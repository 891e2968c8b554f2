package dev.kvtier.sync;

import static dev.kvtier.sync.CacheShardInfoTest.assertRejected;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class SyncEventTest {

    @Test
    void shardEventsRejectNegativeComponents() {
        assertRejected(() -> new SyncEvent.ShardUpdated(-1, 0, 0), "rank", "-1");
        assertRejected(() -> new SyncEvent.ShardUpdated(0, -2, 0), "layer", "-2");
        assertRejected(() -> new SyncEvent.ShardUpdated(0, 0, -3), "seqPos", "-3");
        assertRejected(() -> new SyncEvent.ShardEvicted(-1, 0, 0), "rank", "-1");
        assertRejected(() -> new SyncEvent.ShardEvicted(0, -2, 0), "layer", "-2");
        assertRejected(() -> new SyncEvent.ShardEvicted(0, 0, Long.MIN_VALUE), "seqPos", String.valueOf(Long.MIN_VALUE));
    }

    @Test
    void prefixConfirmedRejectsNegativeTokenCount() {
        assertRejected(() -> new SyncEvent.PrefixConfirmed(5, -64), "numTokens", "-64");
    }

    @Test
    void prefixConfirmedAcceptsEveryPrefixIdAndPrintsItUnsigned() {
        assertEquals("PrefixConfirmed[prefixId=0xffffffffffffffff, numTokens=64]",
                new SyncEvent.PrefixConfirmed(-1L, 64).toString());
        assertEquals("PrefixConfirmed[prefixId=0x8000000000000000, numTokens=0]",
                new SyncEvent.PrefixConfirmed(Long.MIN_VALUE, 0).toString());
        assertEquals("PrefixConfirmed[prefixId=0xabcd, numTokens=1]", new SyncEvent.PrefixConfirmed(0xABCD, 1).toString());
    }

    @Test
    void eventsAreValues() {
        assertEquals(new SyncEvent.FlushAll(), new SyncEvent.FlushAll());
        assertEquals(new SyncEvent.ShardUpdated(1, 2, 3), new SyncEvent.ShardUpdated(1, 2, 3));
        assertEquals("ShardEvicted[rank=1, layer=2, seqPos=3]", new SyncEvent.ShardEvicted(1, 2, 3).toString());
    }
}
