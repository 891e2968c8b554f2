package dev.kvtier.redis;

import org.junit.jupiter.api.Tag;
import dev.kvtier.testing.FaultLogRouting;
import dev.kvtier.remote.RemoteBlockStore;
import dev.kvtier.remote.RemoteBlockStoreContract;
import dev.kvtier.remote.RemoteBlockStores;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * The store contract on a three-master Redis Cluster without replicas (started by this class on loopback ports): keys
 * of one call spread over the three masters' slots, one pipeline per node.
 */
@Tag(FaultLogRouting.TAG) // faults injected on purpose: the library's warnings go to target/test-logs
class RedisClusterContractTest extends RemoteBlockStoreContract {
    private static Path directory;
    private static LocalRedisCluster cluster;

    @BeforeAll
    static void startCluster() throws IOException {
        directory = Files.createTempDirectory("kvtier-redis-cluster-contract");
        // No failover here: a long node timeout keeps a node slowed by a loaded machine from being marked failed
        // (CLUSTERDOWN) in the middle of a contract test.
        cluster = LocalRedisCluster.start(directory, 3, 0, "cluster-node-timeout 15000");
    }

    @AfterAll
    static void stopCluster() throws IOException {
        cluster.close();
        TestDirectories.delete(directory);
    }

    @Override
    protected RemoteBlockStore newStore() {
        return RemoteBlockStores.open(URI.create(cluster.uri()), Map.of("commandTimeoutMs", "10000"));
    }

    @Override
    protected Duration callReturnBound() {
        return Duration.ofMillis(50);
    }
}
