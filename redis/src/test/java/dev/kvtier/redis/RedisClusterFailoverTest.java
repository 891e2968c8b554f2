package dev.kvtier.redis;

import org.junit.jupiter.api.Tag;
import dev.kvtier.testing.FaultLogRouting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A Redis Cluster of three masters, each with a replica (six {@code redis-server}s started by the test), whose
 * master of some keys is killed with SIGKILL: while its replica takes over, every call on those keys ends within the
 * command timeout (a failed future: a miss), calls never hang, no answer is a wrong byte, and once the replica is
 * promoted the store serves every key again without being reopened. The store runs as the README's least-privilege
 * cluster user ({@link RedisClusterAclTest#README_CLUSTER_RULES}).
 */
@Tag(FaultLogRouting.TAG) // faults injected on purpose: the library's warnings go to target/test-logs
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RedisClusterFailoverTest {
    private static final long COMMAND_TIMEOUT_MS = 500;
    private static final long BOUND_MS = COMMAND_TIMEOUT_MS + 2000;

    @TempDir
    Path directory;

    private LocalRedisCluster cluster;
    private RedisRemoteBlockStore store;

    @AfterEach
    void stop() {
        if (store != null) {
            store.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aKilledMasterIsAFewBoundedMissesThenItsReplicaServesTheSameBytes() throws Exception {
        cluster = LocalRedisCluster.start(directory, 3, 1, "");
        // As the README's least-privilege cluster user: the failover's topology refreshes need no more.
        RedisClusterAclTest.setUserOnEveryNode(cluster, RedisClusterAclTest.USER,
                RedisClusterAclTest.README_CLUSTER_RULES);
        store = RedisRemoteBlockStore.open(URI.create(cluster.uri()), Map.of("commandTimeoutMs",
                Long.toString(COMMAND_TIMEOUT_MS), "user", RedisClusterAclTest.USER, "password",
                RedisClusterAclTest.PASSWORD));
        Map<String, byte[]> written = new LinkedHashMap<>();
        for (int i = 0; i < 48; i++) {
            written.put("kvtier:failover:" + i, RedisFaultTest.randomBytes(10_000 + i, i));
        }
        store.putAll(written).get(20, TimeUnit.SECONDS);
        List<String> keys = List.copyOf(written.keySet());
        awaitReplicated(keys.size());

        LocalRedisServer victim = cluster.masterOf(keys.get(0));
        victim.kill();

        int failures = 0;
        int calls = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            long start = System.nanoTime();
            CompletableFuture<List<byte[]>> call = store.getAll(keys);
            calls++;
            try {
                List<byte[]> got = call.get(BOUND_MS, TimeUnit.MILLISECONDS);
                int present = 0;
                for (int i = 0; i < keys.size(); i++) {
                    if (got.get(i) != null) {
                        assertArrayEquals(written.get(keys.get(i)), got.get(i), keys.get(i));
                        present++;
                    }
                }
                assertEquals(keys.size(), present, "the promoted replica lost keys it had replicated");
                break;
            } catch (ExecutionException miss) {
                failures++;
            } catch (TimeoutException hang) {
                fail("a call was still pending " + BOUND_MS + " ms after it was made (call " + calls + ")");
            }
            assertTrue(System.nanoTime() < deadline, "the store did not serve every key within 30 s of the kill; "
                    + failures + " failed calls");
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            Thread.sleep(Math.max(0, 100 - took));
        }
        assertTrue(failures > 0, "no call failed although a master was killed: the test did not test the failover");
    }

    /** Waits until the replicas together hold {@code keys} keys (replication is asynchronous). */
    private void awaitReplicated(int keys) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            int replicated = 0;
            for (LocalRedisServer node : cluster.nodes()) {
                if (node.cli("ROLE").startsWith("slave")) {
                    replicated += Integer.parseInt(node.cli("DBSIZE").trim());
                }
            }
            if (replicated == keys) {
                return;
            }
            assertTrue(System.nanoTime() < deadline, "replicas hold " + replicated + " of " + keys + " keys");
            Thread.sleep(50);
        }
    }
}
