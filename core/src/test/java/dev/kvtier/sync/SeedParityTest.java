package dev.kvtier.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * One twin for every {@code #[test]} of the seed {@code distributed_cache.rs} (same meaning, camelCase
 * name), plus the module's doc example.
 */
class SeedParityTest {

    @Test
    void moduleDocExample() {
        // Build shard info for rank 0 of 4
        CacheShardInfo shard = new CacheShardInfo(0, 4, 32);
        assertEquals(8, shard.layers().size()); // 32 layers / 4 ranks = 8 per shard
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7), shard.layers());

        // Protocol tracks sync state
        CacheSyncProtocol protocol = new CacheSyncProtocol(4, 32);
        protocol.recordEvent(new SyncEvent.ShardUpdated(0, 3, 42));
        assertEquals(OptionalLong.of(42), protocol.latestPosition(0, 3));
    }

    @Test
    void shardInfoEvenSplit() {
        CacheShardInfo shard = new CacheShardInfo(0, 4, 32);
        assertEquals(8, shard.layers().size());
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7), shard.layers());

        CacheShardInfo shard3 = new CacheShardInfo(3, 4, 32);
        assertEquals(List.of(24, 25, 26, 27, 28, 29, 30, 31), shard3.layers());
    }

    @Test
    void shardInfoUnevenSplit() {
        CacheShardInfo shard0 = new CacheShardInfo(0, 3, 10);
        CacheShardInfo shard1 = new CacheShardInfo(1, 3, 10);
        CacheShardInfo shard2 = new CacheShardInfo(2, 3, 10);
        // 10/3 = 3 r 1: the first rank gets 4, the rest get 3
        assertEquals(4, shard0.layers().size());
        assertEquals(3, shard1.layers().size());
        assertEquals(3, shard2.layers().size());
        // No overlap
        List<Integer> all = new ArrayList<>();
        all.addAll(shard0.layers());
        all.addAll(shard1.layers());
        all.addAll(shard2.layers());
        all.sort(null);
        assertEquals(IntStream.range(0, 10).boxed().toList(), all);
    }

    @Test
    void ownsLayer() {
        CacheShardInfo shard = new CacheShardInfo(1, 2, 8);
        assertFalse(shard.ownsLayer(0)); // layer 0 belongs to rank 0
        assertTrue(shard.ownsLayer(4)); // layer 4 belongs to rank 1
    }

    @Test
    void protocolTrackUpdates() {
        CacheSyncProtocol proto = new CacheSyncProtocol(2, 4);
        proto.recordEvent(new SyncEvent.ShardUpdated(0, 0, 10));
        proto.recordEvent(new SyncEvent.ShardUpdated(1, 0, 8));
        assertEquals(OptionalLong.of(10), proto.latestPosition(0, 0));
        assertEquals(OptionalLong.of(8), proto.latestPosition(1, 0));
        assertEquals(OptionalLong.of(8), proto.minSyncedPosition(0));
    }

    @Test
    void protocolMinSyncedNoneIfMissing() {
        CacheSyncProtocol proto = new CacheSyncProtocol(3, 2);
        proto.recordEvent(new SyncEvent.ShardUpdated(0, 0, 5));
        // rank 1 and 2 haven't reported
        assertEquals(OptionalLong.empty(), proto.minSyncedPosition(0));
    }

    @Test
    void protocolPrefixConfirmation() {
        CacheSyncProtocol proto = new CacheSyncProtocol(2, 4);
        assertFalse(proto.isPrefixConfirmed(0xABCD));
        proto.recordEvent(new SyncEvent.PrefixConfirmed(0xABCD, 64));
        assertTrue(proto.isPrefixConfirmed(0xABCD));
        assertEquals(OptionalLong.of(64), proto.prefixTokens(0xABCD));
    }

    @Test
    void protocolFlushAll() {
        CacheSyncProtocol proto = new CacheSyncProtocol(2, 4);
        proto.recordEvent(new SyncEvent.ShardUpdated(0, 0, 10));
        proto.recordEvent(new SyncEvent.PrefixConfirmed(1, 5));
        proto.recordEvent(new SyncEvent.FlushAll());
        assertEquals(OptionalLong.empty(), proto.latestPosition(0, 0));
        assertFalse(proto.isPrefixConfirmed(1));
    }

    @Test
    void protocolLogBounded() {
        CacheSyncProtocol proto = new CacheSyncProtocol(1, 1).withMaxLogSize(3);
        for (int i = 0; i < 10; i++) {
            proto.recordEvent(new SyncEvent.ShardUpdated(0, 0, i));
        }
        assertEquals(3, proto.eventCount());
    }

    @Test
    void protocolRecentEvents() {
        CacheSyncProtocol proto = new CacheSyncProtocol(1, 1);
        proto.recordEvent(new SyncEvent.ShardUpdated(0, 0, 1));
        proto.recordEvent(new SyncEvent.ShardUpdated(0, 0, 2));
        proto.recordEvent(new SyncEvent.FlushAll());
        List<SyncEvent> recent = proto.recentEvents(2);
        assertEquals(2, recent.size());
        assertEquals(new SyncEvent.FlushAll(), recent.get(1));
    }

    @Test
    void cacheRoutingHint() {
        CacheRoutingHint hint = new CacheRoutingHint(42, List.of(0, 2), 128);
        assertTrue(hint.hasTargets());
        assertEquals(128, hint.reusableTokens());
    }

    @Test
    void cacheRoutingHintEmpty() {
        CacheRoutingHint hint = new CacheRoutingHint(0, List.of(), 0);
        assertFalse(hint.hasTargets());
    }
}
