package dev.kvtier.redis;

import dev.kvtier.Backend;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.RemoteStoreConfig;
import dev.kvtier.RemoteStoreStats;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixLookup;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.store.Tier;
import dev.kvtier.testing.FaultLogRouting;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The least-privilege ACL the README's "Sharing KV across hosts" shows for a Redis Cluster, set with
 * {@code ACL SETUSER} on every node of a three-master cluster (started by this class on loopback ports), as an
 * operator would: a store opened as that user does the contract's round trip ({@code putAll}, {@code containsAll},
 * {@code getAll}) and two prefix caches share blocks through it. A user without {@code CLUSTER NODES} (the slot map)
 * or with a wrong password is refused at open, naming the user and never the password; a user without
 * {@code GETRANGE} opens, and every fetch fails with the server's {@code NOPERM}: counted failures (misses) in a cache,
 * never a wrong byte.
 */
@Tag(FaultLogRouting.TAG) // refused users and failing fetches are logged on purpose: to target/test-logs
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisClusterAclTest {
    /** The ACL rules of the README's cluster user, after {@code ACL SETUSER <user> reset on >password}. */
    static final List<String> README_CLUSTER_RULES = List.of("~kvtier:*", "resetchannels", "-@all", "+exists",
            "+getrange", "+set", "+cluster|nodes");
    static final String USER = "kvtier";
    static final String PASSWORD = "s3cret";

    private static final int PAGE = RedisPrefixCacheTest.PAGE;
    private static final BlockLayout LAYOUT = RedisPrefixCacheTest.LAYOUT;

    private static Path clusterDirectory;
    private static LocalRedisCluster cluster;

    @TempDir
    Path directory;

    private final List<AutoCloseable> opened = new ArrayList<>();

    @BeforeAll
    static void startCluster() throws IOException {
        clusterDirectory = Files.createTempDirectory("kvtier-redis-cluster-acl");
        // No failover here: a long node timeout keeps a node stalled by a loaded machine from being failed
        // (CLUSTERDOWN), which is not what this class tests.
        cluster = LocalRedisCluster.start(clusterDirectory, 3, 0, "cluster-node-timeout 15000");
        setUserOnEveryNode(cluster, USER, README_CLUSTER_RULES);
        setUserOnEveryNode(cluster, "kvtier-no-nodes", without(README_CLUSTER_RULES, "+cluster|nodes"));
        setUserOnEveryNode(cluster, "kvtier-no-getrange", without(README_CLUSTER_RULES, "+getrange"));
    }

    @AfterAll
    static void stopCluster() throws IOException {
        if (cluster != null) {
            cluster.close();
        }
        TestDirectories.delete(clusterDirectory);
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    /**
     * {@code ACL SETUSER user reset on >s3cret rules...} on every node, replicas too: a cluster does not propagate
     * ACL users between its nodes.
     */
    static void setUserOnEveryNode(LocalRedisCluster cluster, String user, List<String> rules) throws IOException {
        List<String> command = new ArrayList<>(List.of("ACL", "SETUSER", user, "reset", "on", ">" + PASSWORD));
        command.addAll(rules);
        for (LocalRedisServer node : cluster.nodes()) {
            assertEquals("OK", node.cli(command.toArray(new String[0])), "ACL SETUSER on node " + node.port());
        }
    }

    private static List<String> without(List<String> rules, String rule) {
        List<String> fewer = new ArrayList<>(rules);
        assertTrue(fewer.remove(rule), rule);
        return fewer;
    }

    private RedisRemoteBlockStore openAs(String user, String password) {
        RedisRemoteBlockStore store = RedisRemoteBlockStore.open(URI.create(cluster.uri()),
                Map.of("user", user, "password", password, "commandTimeoutMs", "5000"));
        opened.add(store);
        return store;
    }

    @Test
    void theReadmeClusterAclIsEnoughForTheRoundTrip() throws Exception {
        RedisRemoteBlockStore store = openAs(USER, PASSWORD);
        Map<String, byte[]> written = new LinkedHashMap<>();
        for (int i = 0; i < 24; i++) { // 24 keys fall in the slots of all three masters
            written.put("kvtier:acl-round-trip:" + i, RedisFaultTest.randomBytes(i == 0 ? 4 << 20 : 1000 + i, i));
        }
        written.put("kvtier:acl-round-trip:empty", new byte[0]);
        store.putAll(written).get(20, TimeUnit.SECONDS);

        List<String> keys = new ArrayList<>(written.keySet());
        keys.add("kvtier:acl-round-trip:absent");
        boolean[] held = store.containsAll(keys).get(10, TimeUnit.SECONDS);
        List<byte[]> got = store.getAll(keys).get(20, TimeUnit.SECONDS);
        for (int i = 0; i < written.size(); i++) {
            assertTrue(held[i], keys.get(i));
            assertArrayEquals(written.get(keys.get(i)), got.get(i), keys.get(i));
        }
        assertFalse(held[keys.size() - 1]);
        assertNull(got.get(keys.size() - 1));

        // Outside its key pattern it is refused: a failed future, never a value.
        ExecutionException outside = assertThrows(ExecutionException.class,
                () -> store.getAll(List.of("other:key")).get(10, TimeUnit.SECONDS));
        assertTrue(outside.getCause().getMessage().contains("NOPERM"), outside.getCause().getMessage());
    }

    private KvTierCache openCache(String user) {
        RemoteStoreConfig remote = RemoteStoreConfig.builder().store(URI.create(cluster.uri()))
                .storeSetting("user", user).storeSetting("password", PASSWORD).storeSetting("commandTimeoutMs", "2000")
                .key(RedisPrefixCacheTest.KEY).namespace("redis-acl-test").build();
        KvTierConfig config = KvTierConfig.builder().backend(Backend.HOST).gpuBudgetBytes(64L * PAGE)
                .cpuBudgetBytes(64L * PAGE).pageSizeBytes(PAGE).diskExtentBytes(16L * PAGE)
                .diskDirectory(directory.resolve("cache-" + opened.size())).transferTimeout(Duration.ofSeconds(2))
                .remote(remote).build();
        KvTierCache cache = KvTierCache.open(config);
        opened.add(cache);
        return cache;
    }

    private static void awaitWritten(KvTierCache cache, long blocks) throws InterruptedException {
        RedisPrefixCacheTest.await(() -> cache.stats().remote().blocksWritten() >= blocks,
                blocks + " blocks written through");
    }

    @Test
    void twoPrefixCachesShareBlocksThroughTheReadmeClusterAcl() throws Exception {
        KvTierCache rankA = openCache(USER);
        KvTierCache rankB = openCache(USER);
        List<BlockHash> hashes = RedisPrefixCacheTest.chain(101, 16);
        rankA.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, hashes, RedisPrefixCacheTest.contents(hashes));
        awaitWritten(rankA, 16);

        PrefixBlockCache b = rankB.prefixBlocks(LAYOUT);
        PrefixLookup lookup = b.lookupPrefix(hashes);
        assertEquals(16, lookup.remoteBlocks());
        try (PrefixPin pin = b.ensurePrefixResident(hashes, Tier.GPU)) {
            assertEquals(16, pin.size());
        }
        RedisPrefixCacheTest.assertBytes(b, hashes);
        RemoteStoreStats stats = rankB.stats().remote();
        assertEquals(16, stats.blocksFetched());
        assertEquals(0, stats.failures());
        assertEquals(0, stats.rejections());
        assertEquals(0, rankA.stats().remote().failures());
    }

    /**
     * Fails on commit 2bfdd36: the cluster client reported the seeds' {@code NOPERM} only as text, so the open logged
     * a warning and every later call failed ("not connected") instead.
     */
    @Test
    void aUserWithoutClusterNodesIsRefusedAtOpenNamingItAndThePermission() {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> openAs("kvtier-no-nodes", PASSWORD));
        String message = refused.getMessage();
        assertTrue(message.contains("'kvtier-no-nodes'") && message.contains("NOPERM")
                && message.contains("cluster|nodes"), message);
        assertFalse(message.contains(PASSWORD), message);
    }

    /** Fails on commit 2bfdd36, as {@link #aUserWithoutClusterNodesIsRefusedAtOpenNamingItAndThePermission}. */
    @Test
    void aWrongPasswordIsRefusedAtOpenNamingTheUserNotThePassword() {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> openAs(USER, "wrong-password"));
        String message = refused.getMessage();
        assertTrue(message.contains("'" + USER + "'") && message.contains("WRONGPASS"), message);
        assertFalse(message.contains("wrong-password"), message);
    }

    @Test
    void aUserWithoutGetrangeOpensAndEveryFetchIsACountedFailureNeverAValue() throws Exception {
        RedisRemoteBlockStore store = openAs("kvtier-no-getrange", PASSWORD);
        store.putAll(Map.of("kvtier:acl-no-getrange", new byte[] {1, 2, 3})).get(10, TimeUnit.SECONDS);
        ExecutionException fetch = assertThrows(ExecutionException.class,
                () -> store.getAll(List.of("kvtier:acl-no-getrange")).get(10, TimeUnit.SECONDS));
        assertTrue(fetch.getCause().getMessage().contains("NOPERM")
                && fetch.getCause().getMessage().contains("getrange"), fetch.getCause().getMessage());

        KvTierCache rankA = openCache(USER);
        KvTierCache rankB = openCache("kvtier-no-getrange");
        List<BlockHash> hashes = RedisPrefixCacheTest.chain(102, 4);
        rankA.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, hashes, RedisPrefixCacheTest.contents(hashes));
        awaitWritten(rankA, 4);
        PrefixBlockCache b = rankB.prefixBlocks(LAYOUT);
        assertEquals(4, b.lookupPrefix(hashes).remoteBlocks(), "EXISTS is granted: the look-up sees the blocks");
        try (PrefixPin pin = b.ensurePrefixResident(hashes, Tier.GPU)) {
            assertEquals(0, pin.size(), "GETRANGE is refused: nothing is fetched");
        }
        RemoteStoreStats stats = rankB.stats().remote();
        assertEquals(0, stats.blocksFetched());
        assertTrue(stats.failures() >= 1, stats.toString());
        assertEquals(0, stats.rejections());
        assertEquals(0, rankB.stats().used(Tier.GPU) + rankB.stats().used(Tier.CPU));
    }
}
