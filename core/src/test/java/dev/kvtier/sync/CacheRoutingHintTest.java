package dev.kvtier.sync;

import static dev.kvtier.sync.CacheShardInfoTest.assertRejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class CacheRoutingHintTest {

    @Test
    void ranksAreCopiedAndUnmodifiable() {
        List<Integer> ranks = new ArrayList<>(List.of(2, 0, 2));
        CacheRoutingHint hint = new CacheRoutingHint(7, ranks, 16);
        ranks.clear();
        assertEquals(List.of(2, 0, 2), hint.relevantRanks());
        assertTrue(hint.hasTargets());
        assertThrows(UnsupportedOperationException.class, () -> hint.relevantRanks().add(1));
    }

    @Test
    void prefixIdIsPrintedUnsigned() {
        CacheRoutingHint hint = new CacheRoutingHint(-1L, List.of(0), 3);
        assertEquals("CacheRoutingHint[prefixId=0xffffffffffffffff, relevantRanks=[0], reusableTokens=3]", hint.toString());
        assertEquals("CacheRoutingHint[prefixId=0x2a, relevantRanks=[], reusableTokens=0]",
                new CacheRoutingHint(42, List.of(), 0).toString());
    }

    @Test
    void hintsWithEqualComponentsAreEqual() {
        assertEquals(new CacheRoutingHint(Long.MIN_VALUE, new ArrayList<>(List.of(1, 3)), 5),
                new CacheRoutingHint(Long.MIN_VALUE, List.of(1, 3), 5));
    }

    @Test
    void rejectsNegativeReusableTokens() {
        assertRejected(() -> new CacheRoutingHint(1, List.of(0), -5), "reusableTokens", "-5");
    }

    @Test
    void rejectsNullRanks() {
        assertRejected(() -> new CacheRoutingHint(1, null, 0), "relevantRanks", "null");
        assertRejected(() -> new CacheRoutingHint(1, Arrays.asList(0, null), 0), "relevantRanks[1]", "null");
    }

    @Test
    void rejectsNegativeRanks() {
        assertRejected(() -> new CacheRoutingHint(1, List.of(0, 1, -3), 0), "relevantRanks[2]", "-3");
    }

    @Test
    void hostsAreEmptyOrOnePerRankAndCopied() {
        assertEquals(List.of(), new CacheRoutingHint(1, List.of(0, 1), 2).rankHosts());
        List<String> hosts = new ArrayList<>(List.of("a", "b"));
        CacheRoutingHint hint = new CacheRoutingHint(1, List.of(0, 1), 2, hosts);
        hosts.set(0, "changed");
        assertEquals(List.of("a", "b"), hint.rankHosts());
        assertEquals("CacheRoutingHint[prefixId=0x1, relevantRanks=[0, 1], reusableTokens=2, rankHosts=[a, b]]",
                hint.toString());
        assertRejected(() -> new CacheRoutingHint(1, List.of(0, 1), 2, List.of("a")), "rankHosts", "1 hosts for 2");
        assertRejected(() -> new CacheRoutingHint(1, List.of(0), 2, null), "rankHosts", "null");
        assertRejected(() -> new CacheRoutingHint(1, List.of(0), 2, Arrays.asList((String) null)), "rankHosts[0]",
                "non-null");
    }
}
