package dev.kvtier.sync;

import static dev.kvtier.sync.CacheShardInfoTest.assertRejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** Behaviour beyond the seed's tests, and every refused input. */
class CacheSyncProtocolTest {

    private static SyncEvent.ShardUpdated updated(int rank, int layer, long seqPos) {
        return new SyncEvent.ShardUpdated(rank, layer, seqPos);
    }

    @Test
    void nothingReportedMeansEmptyAnswers() {
        CacheSyncProtocol proto = new CacheSyncProtocol(2, 3);
        for (int layer = 0; layer < 3; layer++) {
            assertEquals(OptionalLong.empty(), proto.minSyncedPosition(layer));
            for (int rank = 0; rank < 2; rank++) {
                assertEquals(OptionalLong.empty(), proto.latestPosition(rank, layer));
            }
        }
        assertEquals(0, proto.eventCount());
        assertEquals(List.of(), proto.recentEvents(5));
        assertEquals(OptionalLong.empty(), proto.prefixTokens(0));
    }

    @Test
    void positionsAreKeptPerRankAndLayer() {
        CacheSyncProtocol proto = new CacheSyncProtocol(3, 4);
        proto.recordEvent(updated(2, 3, 7));
        proto.recordEvent(updated(0, 3, 9));
        assertEquals(OptionalLong.of(7), proto.latestPosition(2, 3));
        assertEquals(OptionalLong.of(9), proto.latestPosition(0, 3));
        assertEquals(OptionalLong.empty(), proto.latestPosition(1, 3));
        assertEquals(OptionalLong.empty(), proto.latestPosition(2, 2));
        assertEquals(OptionalLong.empty(), proto.minSyncedPosition(3));
        proto.recordEvent(updated(1, 3, 11));
        assertEquals(OptionalLong.of(7), proto.minSyncedPosition(3));
        assertEquals(OptionalLong.empty(), proto.minSyncedPosition(2));
    }

    @Test
    void laterUpdateReplacesEvenIfLower() {
        CacheSyncProtocol proto = new CacheSyncProtocol(1, 1);
        proto.recordEvent(updated(0, 0, 10));
        proto.recordEvent(updated(0, 0, 4));
        assertEquals(OptionalLong.of(4), proto.latestPosition(0, 0));
    }

    @Test
    void shardEvictedSetsThePositionLikeTheSeed() {
        CacheSyncProtocol proto = new CacheSyncProtocol(2, 1);
        proto.recordEvent(updated(0, 0, 100));
        proto.recordEvent(updated(1, 0, 80));
        proto.recordEvent(new SyncEvent.ShardEvicted(0, 0, 20));
        assertEquals(OptionalLong.of(20), proto.latestPosition(0, 0));
        assertEquals(OptionalLong.of(20), proto.minSyncedPosition(0));
        // The seed sets the position even when the eviction names a higher one, and on a fresh cell.
        proto.recordEvent(new SyncEvent.ShardEvicted(1, 0, 500));
        assertEquals(OptionalLong.of(500), proto.latestPosition(1, 0));
        CacheSyncProtocol fresh = new CacheSyncProtocol(1, 1);
        fresh.recordEvent(new SyncEvent.ShardEvicted(0, 0, 3));
        assertEquals(OptionalLong.of(3), fresh.latestPosition(0, 0));
    }

    @Test
    void flushAllClearsEveryPositionAndPrefixAndIsLogged() {
        CacheSyncProtocol proto = new CacheSyncProtocol(2, 2);
        for (int rank = 0; rank < 2; rank++) {
            for (int layer = 0; layer < 2; layer++) {
                proto.recordEvent(updated(rank, layer, 5));
            }
        }
        proto.recordEvent(new SyncEvent.PrefixConfirmed(-7L, 9));
        proto.recordEvent(new SyncEvent.FlushAll());
        for (int rank = 0; rank < 2; rank++) {
            for (int layer = 0; layer < 2; layer++) {
                assertEquals(OptionalLong.empty(), proto.latestPosition(rank, layer));
            }
        }
        assertEquals(OptionalLong.empty(), proto.minSyncedPosition(0));
        assertFalse(proto.isPrefixConfirmed(-7L));
        assertEquals(6, proto.eventCount());
        assertEquals(List.of(new SyncEvent.FlushAll()), proto.recentEvents(1));
        // State recorded after the flush counts again.
        proto.recordEvent(updated(1, 1, 2));
        assertEquals(OptionalLong.of(2), proto.latestPosition(1, 1));
    }

    @Test
    void prefixReconfirmationReplacesTheTokenCountAndIdsAreFull64Bit() {
        CacheSyncProtocol proto = new CacheSyncProtocol(1, 0);
        long highBit = 0x8000_0000_0000_0001L;
        proto.recordEvent(new SyncEvent.PrefixConfirmed(highBit, 64));
        proto.recordEvent(new SyncEvent.PrefixConfirmed(highBit, 32));
        assertEquals(OptionalLong.of(32), proto.prefixTokens(highBit));
        assertFalse(proto.isPrefixConfirmed(1L)); // same low bits, different id
        proto.recordEvent(new SyncEvent.PrefixConfirmed(0, 0));
        assertTrue(proto.isPrefixConfirmed(0));
        assertEquals(OptionalLong.of(0), proto.prefixTokens(0));
    }

    @Test
    void boundedLogKeepsTheNewestInOrder() {
        CacheSyncProtocol proto = new CacheSyncProtocol(1, 1).withMaxLogSize(3);
        for (int i = 0; i < 10; i++) {
            proto.recordEvent(updated(0, 0, i));
        }
        assertEquals(List.of(updated(0, 0, 7), updated(0, 0, 8), updated(0, 0, 9)), proto.recentEvents(10));
        assertEquals(List.of(updated(0, 0, 8), updated(0, 0, 9)), proto.recentEvents(2));
        assertEquals(List.of(), proto.recentEvents(0));
    }

    @Test
    void defaultLogKeepsTenThousandEvents() {
        CacheSyncProtocol proto = new CacheSyncProtocol(1, 1);
        for (int i = 0; i < CacheSyncProtocol.DEFAULT_MAX_LOG_SIZE + 5; i++) {
            proto.recordEvent(updated(0, 0, i));
        }
        assertEquals(10_000, proto.eventCount());
        assertEquals(List.of(updated(0, 0, 5)), proto.recentEvents(10_000).subList(0, 1));
    }

    @Test
    void recentEventsIsAnUnmodifiableSnapshot() {
        CacheSyncProtocol proto = new CacheSyncProtocol(1, 1);
        proto.recordEvent(updated(0, 0, 1));
        List<SyncEvent> snapshot = proto.recentEvents(5);
        proto.recordEvent(updated(0, 0, 2));
        assertEquals(List.of(updated(0, 0, 1)), snapshot);
        assertThrows(UnsupportedOperationException.class, () -> snapshot.add(new SyncEvent.FlushAll()));
    }

    @Test
    void withMaxLogSizeReturnsTheProtocolAndTrimsAtOnce() {
        CacheSyncProtocol proto = new CacheSyncProtocol(1, 1);
        for (int i = 0; i < 5; i++) {
            proto.recordEvent(updated(0, 0, i));
        }
        assertSame(proto, proto.withMaxLogSize(2));
        assertEquals(2, proto.eventCount());
        assertEquals(List.of(updated(0, 0, 3), updated(0, 0, 4)), proto.recentEvents(5));
        proto.withMaxLogSize(4);
        proto.recordEvent(updated(0, 0, 5));
        assertEquals(3, proto.eventCount());
    }

    @Test
    void zeroMaxLogSizeAppliesEventsButKeepsNone() {
        CacheSyncProtocol proto = new CacheSyncProtocol(1, 1).withMaxLogSize(0);
        proto.recordEvent(updated(0, 0, 8));
        proto.recordEvent(new SyncEvent.PrefixConfirmed(3, 4));
        assertEquals(0, proto.eventCount());
        assertEquals(List.of(), proto.recentEvents(3));
        assertEquals(OptionalLong.of(8), proto.latestPosition(0, 0));
        assertTrue(proto.isPrefixConfirmed(3));
    }

    @Test
    void rejectsBadShape() {
        assertRejected(() -> new CacheSyncProtocol(0, 4), "worldSize", "0");
        assertRejected(() -> new CacheSyncProtocol(-3, 4), "worldSize", "-3");
        assertRejected(() -> new CacheSyncProtocol(2, -1), "numLayers", "-1");
        assertRejected(() -> new CacheSyncProtocol(1 << 16, 1 << 16), "worldSize * numLayers", "65536 * 65536");
    }

    @Test
    void rejectsEventsOutsideTheShapeAndChangesNothing() {
        CacheSyncProtocol proto = new CacheSyncProtocol(2, 4);
        proto.recordEvent(updated(1, 3, 6));
        assertRejected(() -> proto.recordEvent(updated(2, 0, 1)), "rank", "2", "worldSize");
        assertRejected(() -> proto.recordEvent(updated(0, 4, 1)), "layer", "4", "numLayers");
        assertRejected(() -> proto.recordEvent(new SyncEvent.ShardEvicted(5, 0, 1)), "rank", "5");
        assertRejected(() -> proto.recordEvent(new SyncEvent.ShardEvicted(1, 9, 1)), "layer", "9");
        assertRejected(() -> proto.recordEvent(null), "event", "null");
        assertEquals(1, proto.eventCount());
        assertEquals(List.of(updated(1, 3, 6)), proto.recentEvents(10));
        assertEquals(OptionalLong.of(6), proto.latestPosition(1, 3));
        for (int layer = 0; layer < 3; layer++) {
            assertEquals(OptionalLong.empty(), proto.latestPosition(0, layer));
            assertEquals(OptionalLong.empty(), proto.latestPosition(1, layer));
        }
    }

    @Test
    void aProtocolWithoutLayersRefusesShardEventsButTracksPrefixes() {
        CacheSyncProtocol proto = new CacheSyncProtocol(2, 0);
        assertRejected(() -> proto.recordEvent(updated(0, 0, 1)), "layer", "0", "numLayers");
        proto.recordEvent(new SyncEvent.PrefixConfirmed(1, 2));
        assertEquals(OptionalLong.of(2), proto.prefixTokens(1));
    }

    @Test
    void rejectsBadArgumentsToQueriesAndSettings() {
        CacheSyncProtocol proto = new CacheSyncProtocol(2, 4);
        assertRejected(() -> proto.withMaxLogSize(-1), "maxLogSize", "-1");
        assertRejected(() -> proto.recentEvents(-2), "n", "-2");
        assertRejected(() -> proto.latestPosition(2, 0), "rank", "2");
        assertRejected(() -> proto.latestPosition(-1, 0), "rank", "-1");
        assertRejected(() -> proto.latestPosition(0, 4), "layer", "4");
        assertRejected(() -> proto.latestPosition(0, -1), "layer", "-1");
        assertRejected(() -> proto.minSyncedPosition(4), "layer", "4");
        assertRejected(() -> proto.minSyncedPosition(-5), "layer", "-5");
        // The refused withMaxLogSize left the default bound in place.
        for (int i = 0; i < 3; i++) {
            proto.recordEvent(updated(0, 0, i));
        }
        assertEquals(3, proto.eventCount());
    }

    @Test
    void forgetRankClearsOnlyThatRanksPositionsAndLogsNothing() {
        CacheSyncProtocol protocol = new CacheSyncProtocol(3, 2);
        for (int rank = 0; rank < 3; rank++) {
            for (int layer = 0; layer < 2; layer++) {
                protocol.recordEvent(new SyncEvent.ShardUpdated(rank, layer, 10 + rank));
            }
        }
        protocol.recordEvent(new SyncEvent.PrefixConfirmed(5, 7));
        int logged = protocol.eventCount();
        protocol.forgetRank(1);
        assertEquals(java.util.OptionalLong.empty(), protocol.latestPosition(1, 0));
        assertEquals(java.util.OptionalLong.empty(), protocol.latestPosition(1, 1));
        assertEquals(java.util.OptionalLong.of(10), protocol.latestPosition(0, 1));
        assertEquals(java.util.OptionalLong.of(12), protocol.latestPosition(2, 0));
        assertEquals(java.util.OptionalLong.empty(), protocol.minSyncedPosition(0));
        assertTrue(protocol.isPrefixConfirmed(5));
        assertEquals(logged, protocol.eventCount());
        assertRejected(() -> protocol.forgetRank(3), "rank", "3");
    }
}
