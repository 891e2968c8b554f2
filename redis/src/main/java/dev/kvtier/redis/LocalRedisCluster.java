package dev.kvtier.redis;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A Redis Cluster of {@code redis-server}s that this process starts and stops by PID on loopback ports: for tests and
 * benchmarks. Masters and replicas are joined with {@code redis-cli --cluster create --cluster-yes} and the cluster
 * is ready when every node reports {@code cluster_state:ok}. A node timeout of 1 s makes a replica take over a killed
 * master within a few seconds. Not thread-safe: one owner starts and stops it.
 */
public final class LocalRedisCluster implements AutoCloseable {
    private static final long READY_TIMEOUT_MS = 30_000;

    private final List<LocalRedisServer> nodes;
    private final int masters;

    private LocalRedisCluster(List<LocalRedisServer> nodes, int masters) {
        this.nodes = nodes;
        this.masters = masters;
    }

    /**
     * Starts {@code masters} masters with {@code replicasPerMaster} replicas each (nodes in subdirectories of
     * {@code directory}) and waits until the cluster is ready.
     *
     * @throws IllegalStateException if the cluster is not ready within 30 s, naming the node that is not
     */
    public static LocalRedisCluster start(Path directory, int masters, int replicasPerMaster, String extraConfiguration)
            throws IOException {
        if (masters < 3) {
            throw new IllegalArgumentException("a Redis Cluster needs at least 3 masters, not " + masters);
        }
        List<LocalRedisServer> nodes = new ArrayList<>();
        LocalRedisCluster cluster = new LocalRedisCluster(nodes, masters);
        try {
            int count = masters * (1 + replicasPerMaster);
            for (int i = 0; i < count; i++) {
                nodes.add(LocalRedisServer.startClusterNode(directory.resolve("node-" + i), String.join("\n",
                        "cluster-enabled yes",
                        "cluster-node-timeout 1000",
                        "cluster-require-full-coverage no",
                        "cluster-allow-reads-when-down no",
                        extraConfiguration)));
            }
            List<String> command = new ArrayList<>(List.of(
                    LocalRedisServer.findBinary().resolveSibling("redis-cli").toString(), "--cluster", "create"));
            for (LocalRedisServer node : nodes) {
                command.add("127.0.0.1:" + node.port());
            }
            command.addAll(List.of("--cluster-replicas", Integer.toString(replicasPerMaster), "--cluster-yes"));
            LocalRedisServer.run(command);
            cluster.awaitReady();
            return cluster;
        } catch (IOException | RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /** Waits until every running node reports {@code cluster_state:ok} and knows every other running node. */
    public void awaitReady() throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READY_TIMEOUT_MS);
        for (LocalRedisServer node : nodes) {
            if (!node.isRunning()) {
                continue;
            }
            while (!node.cli("CLUSTER", "INFO").contains("cluster_state:ok")) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("Redis Cluster node 127.0.0.1:" + node.port()
                            + " did not reach cluster_state:ok within " + READY_TIMEOUT_MS + " ms: "
                            + node.cli("CLUSTER", "INFO"));
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            }
        }
    }

    /** The client URI with every node as a seed: {@code redis-cluster://127.0.0.1:p1,127.0.0.1:p2,...}. */
    public String uri() {
        StringBuilder uri = new StringBuilder("redis-cluster://");
        for (int i = 0; i < nodes.size(); i++) {
            uri.append(i == 0 ? "" : ",").append("127.0.0.1:").append(nodes.get(i).port());
        }
        return uri.toString();
    }

    /** Every node, masters first as created (roles change after a failover). */
    public List<LocalRedisServer> nodes() {
        return List.copyOf(nodes);
    }

    /** The running node that serves {@code key}'s slot now (asked with {@code CLUSTER KEYSLOT} and {@code SHARDS}). */
    public LocalRedisServer masterOf(String key) throws IOException {
        for (LocalRedisServer node : nodes) {
            if (!node.isRunning()) {
                continue;
            }
            String role = node.cli("ROLE");
            if (!role.startsWith("master")) {
                continue;
            }
            // A master answers an EXISTS for a key it serves; any other answers -MOVED.
            String answer = node.cli("EXISTS", key);
            if (!answer.startsWith("MOVED") && !answer.startsWith("CLUSTERDOWN")) {
                return node;
            }
        }
        throw new IllegalStateException("no running master serves key '" + key + "'");
    }

    /** The number of masters it was created with. */
    public int masters() {
        return masters;
    }

    /** Stops every node. */
    @Override
    public void close() {
        for (LocalRedisServer node : nodes) {
            node.stop();
        }
    }
}
