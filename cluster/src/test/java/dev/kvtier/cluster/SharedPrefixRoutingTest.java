package dev.kvtier.cluster;

import static dev.kvtier.cluster.ClusterStateTest.batch;
import static dev.kvtier.cluster.ClusterStateTest.block;
import static dev.kvtier.cluster.ClusterStateTest.feed;
import static dev.kvtier.cluster.ClusterStateTest.stored;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;
import dev.kvtier.sync.CacheRoutingHint;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Routing when the ranks share a remote block store: a prefix the store holds is available to every rank. */
class SharedPrefixRoutingTest {

    @Test
    void aLongerPrefixInTheSharedStoreMakesEveryRankRelevant() {
        // Group 0 = ranks 0,1 (nothing); group 1 = ranks 2,3 (blocks 1 and 2).
        ClusterState state = feed(batch(0, 1, 1, true), batch(1, 1, 1, true),
                batch(2, 1, 1, true, stored(1, Tier.GPU), stored(2, Tier.GPU)),
                batch(3, 1, 1, true, stored(1, Tier.CPU), stored(2, Tier.GPU)));
        List<BlockHash> chain = List.of(block(1), block(2), block(3), block(4));

        CacheRoutingHint shared = state.route(chain, 4, 16);
        assertEquals(List.of(0, 1, 2, 3), shared.relevantRanks());
        assertEquals(4 * 16, shared.reusableTokens());
        assertEquals(List.of("host-0", "host-1", "host-2", "host-3"), shared.rankHosts());
        assertEquals(block(4).high(), shared.prefixId());

        CacheRoutingHint local = state.route(chain, 2, 16);
        assertEquals(state.route(chain), local, "no more in the store than the ranks hold: the local hint");
        assertEquals(List.of(2, 3), local.relevantRanks());

        assertEquals(state.route(chain), state.route(chain, 0, 16));
        assertThrows(IllegalArgumentException.class, () -> state.route(chain, 5, 16));
        assertThrows(IllegalArgumentException.class, () -> state.route(chain, -1, 16));
        assertThrows(IllegalArgumentException.class, () -> state.route(chain, 1, 0));
    }
}
