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
     * @param directory where the nodes keep their configuration, logs and data, node {@code i} in
     *     {@code directory/node-i} (created if absent, left in place after {@link #close()}); not null
     * @param masters how many masters share the 16384 slots, at least 3
     * @param replicasPerMaster how many replicas follow each master, {@code >= 0}; the cluster has
     *     {@code masters * (1 + replicasPerMaster)} nodes
     * @param extraConfiguration redis.conf lines appended to every node's configuration after the cluster settings
     *     (so they can override them), for example {@code maxmemory 64mb}; not null, may be empty
     * @return the ready cluster, owned by the caller, who closes it to stop every node
     * @throws IOException if a node's directory or configuration cannot be written, a node's process cannot be
     *     launched, no free port pair (client port and bus port) is found, or {@code redis-cli --cluster create} or a
     *     {@code redis-cli} readiness check exits with a failure, does not finish within 30 s or is interrupted; the
     *     nodes started so far are stopped first
     * @throws IllegalArgumentException if {@code masters} is below 3
     * @throws IllegalStateException if there is no redis-server binary, a node does not answer {@code PING} within
     *     10 s, or the cluster is not ready within 30 s, naming the node that is not; the nodes started so far are
     *     stopped first
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

    /**
     * Waits until every running node reports {@code cluster_state:ok} and knows every other running node; stopped
     * nodes are skipped.
     *
     * @throws IOException if {@code redis-cli CLUSTER INFO} against a node that is running exits with a failure (the
     *     node does not accept the connection), does not finish within 30 s, or the waiting thread is interrupted
     * @throws IllegalStateException if a running node does not reach {@code cluster_state:ok} within 30 s, naming it
     */
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

    /**
     * The client URI with every node as a seed: {@code redis-cluster://127.0.0.1:p1,127.0.0.1:p2,...}.
     *
     * @return the URI for {@link RedisRemoteBlockStore#open}, naming every node in creation order, stopped ones too
     *     (the client skips a seed it cannot reach)
     */
    public String uri() {
        StringBuilder uri = new StringBuilder("redis-cluster://");
        for (int i = 0; i < nodes.size(); i++) {
            uri.append(i == 0 ? "" : ",").append("127.0.0.1:").append(nodes.get(i).port());
        }
        return uri.toString();
    }

    /**
     * Every node, masters first as created (roles change after a failover).
     *
     * @return an unmodifiable list of all {@code masters * (1 + replicasPerMaster)} nodes, running or not; the
     *     servers stay owned by this cluster (the caller may kill and restart one, and {@link #close()} stops them)
     */
    public List<LocalRedisServer> nodes() {
        return List.copyOf(nodes);
    }

    /**
     * The running node that serves {@code key}'s slot now: the first running master that answers an {@code EXISTS}
     * for it without a {@code MOVED} or {@code CLUSTERDOWN} redirection.
     *
     * @param key the key as a client sends it (its hash tag, if any, picks the slot); not null
     * @return the running master serving the key's slot, one of {@link #nodes()}
     * @throws IOException if {@code redis-cli ROLE} or {@code EXISTS} against a running node exits with a failure,
     *     does not finish within 30 s, or the thread is interrupted
     * @throws IllegalStateException if no running master serves the slot (its master is down and no replica has
     *     taken over yet)
     */
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

    /**
     * The number of masters it was created with.
     *
     * @return the {@code masters} given to {@link #start}, at least 3 (not the current count after failovers)
     */
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
