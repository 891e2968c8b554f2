package dev.kvtier.redis;

import dev.kvtier.remote.RemoteBlockStore;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.codec.ToByteBufEncoder;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link RemoteBlockStore} on Redis through Lettuce: a standalone server ({@code redis://}, {@code rediss://} for
 * TLS) or a Redis Cluster ({@code redis-cluster://h1:p1,h2:p2}, seed nodes; commands routed by key slot, one
 * pipeline per node). Opened by {@link #open(URI, Map)} or, by URI alone, through core's {@code RemoteBlockStores}
 * (this module {@code provides} a {@link RedisRemoteBlockStoreProvider}).
 *
 * <h2>What it promises beyond the SPI</h2>
 * <ul>
 *   <li><b>One pipelined batch per call.</b> A call queues its commands on the connection and flushes once (on a
 *       cluster each command is flushed as it is routed to its node, still without waiting for answers): for
 *       {@code getAll} and {@code getAllInto} a {@code GETRANGE key 0 maxValueBytes+1} per key, for {@code containsAll}
 *       an {@code EXISTS} per key, for {@code putAll} a {@code SET} per key. On a standalone server these three
 *       (and {@code HELLO} with the credentials at connect, which needs no permission) are all it sends, and the
 *       least-privilege ACL in the README allows exactly them; on a cluster Lettuce also reads the topology
 *       ({@code CLUSTER NODES}, {@code INFO}).</li>
 *   <li><b>One marker byte before each value.</b> Redis holds a value as a marker byte followed by its bytes (the
 *       marker is written and stripped by the codec, without copying the value on put), so an empty value is one
 *       byte and {@code GETRANGE}'s empty answer means an absent key. A Redis value that does not start with the
 *       marker (written by something else) is answered absent.</li>
 *   <li><b>A huge value never costs its size.</b> {@code GETRANGE} reads at most the marker and
 *       {@code maxValueBytes + 1} bytes of a value; a longer value is answered absent ({@code null}), counted
 *       ({@link #oversizedValues()}) and logged once.</li>
 *   <li><b>Bounded waits.</b> Every command completes within {@code commandTimeoutMs} (a timeout is an exceptional
 *       future); while a standalone server is down, commands fail at once instead of queueing (on a cluster, a
 *       command for a node that is down fails at the command timeout); the client reconnects by itself, and a
 *       cluster's topology is refreshed on {@code MOVED}, reconnects and every 10 s, so a failed-over
 *       node is a few misses, never a hang. {@link #open} waits at most {@code connectTimeoutMs} + 0.5 s for the first
 *       connection; a server that is down then is retried at the next call (every call meanwhile fails at once).</li>
 *   <li><b>Credentials refused at open.</b> A wrong user or password, or a user without a permission the connection
 *       needs (on a cluster: {@code CLUSTER NODES}, to read the slot map), is an {@link IllegalArgumentException}
 *       from {@link #open} naming the store and the user (never the password) with the server's answer. A user
 *       without a permission only a call needs ({@code EXISTS}, {@code GETRANGE}, {@code SET}, or a key outside its
 *       pattern) is found at that call: its future fails with the server's {@code NOPERM} answer.</li>
 *   <li><b>Its own threads, released on close.</b> Lettuce's I/O and computation threads ({@code kvtier-redis-*},
 *       daemons) belong to this store; {@link #close()} completes every pending future exceptionally and ends them
 *       (waiting at most 2 s).</li>
 * </ul>
 * Futures complete on the store's I/O threads: a dependent must not block. Thread-safe.
 */
public final class RedisRemoteBlockStore implements RemoteBlockStore {
    private static final System.Logger LOG = System.getLogger(RedisRemoteBlockStore.class.getName());
    private static final RedisCodec<String, byte[]> CODEC = new MarkedValueCodec();
    /** The byte before every value in Redis: a stored value is never empty, so an empty answer is an absent key. */
    private static final byte VALUE_MARKER = 'k';
    /** The longest key the SPI allows, in UTF-8 bytes. */
    private static final int MAX_KEY_BYTES = 512;
    private static final Duration RECONNECT_BACKOFF = Duration.ofMillis(500);
    private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(2);

    private final RedisStoreSettings settings;
    private final String description;
    private final ClientResources resources;
    private final RedisClient standaloneClient;
    private final RedisClusterClient clusterClient;
    /** Taken only to queue one call's commands and flush them, so that each call is one batch; never over I/O. */
    private final ReentrantLock batchLock = new ReentrantLock();
    private final Set<CompletableFuture<?>> pending = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicLong oversizedValues = new AtomicLong();
    private final AtomicBoolean oversizedLogged = new AtomicBoolean();
    /** The current connection attempt (or the connection); replaced when a failed attempt is retried. */
    private volatile CompletableFuture<StatefulConnection<String, byte[]>> connection;
    private volatile long nextConnectAttemptNanos;

    private RedisRemoteBlockStore(RedisStoreSettings settings) {
        this.settings = settings;
        this.description = settings.describe();
        this.resources = DefaultClientResources.builder()
                .ioThreadPoolSize(settings.ioThreads())
                .computationThreadPoolSize(2)
                .threadFactoryProvider(poolName -> new DefaultThreadFactory("kvtier-redis-" + poolName, true))
                .build();
        SocketOptions socket = SocketOptions.builder().connectTimeout(settings.connectTimeout()).keepAlive(true)
                .build();
        TimeoutOptions timeouts = TimeoutOptions.enabled(settings.commandTimeout());
        SslOptions ssl = sslOptions(settings);
        if (settings.cluster()) {
            List<RedisURI> seeds = new ArrayList<>();
            for (RedisStoreSettings.Endpoint endpoint : settings.endpoints()) {
                seeds.add(redisUri(settings, endpoint));
            }
            this.standaloneClient = null;
            this.clusterClient = RedisClusterClient.create(resources, seeds);
            ClusterClientOptions.Builder options = ClusterClientOptions.builder()
                    .socketOptions(socket)
                    .timeoutOptions(timeouts)
                    .autoReconnect(true)
                    // Not REJECT_COMMANDS: Lettuce 7.7's cluster writer rejects every command with it (its node
                    // connections count as disconnected). A command for a node that is down waits for its
                    // reconnection or the failover and fails at the command timeout.
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.ACCEPT_COMMANDS)
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                            .enablePeriodicRefresh(Duration.ofSeconds(10))
                            .enableAllAdaptiveRefreshTriggers()
                            .adaptiveRefreshTriggersTimeout(Duration.ofMillis(500))
                            .build());
            if (ssl != null) {
                options.sslOptions(ssl);
            }
            clusterClient.setOptions(options.build());
        } else {
            this.clusterClient = null;
            this.standaloneClient = RedisClient.create(resources);
            ClientOptions.Builder options = ClientOptions.builder()
                    .socketOptions(socket)
                    .timeoutOptions(timeouts)
                    .autoReconnect(true)
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
            if (ssl != null) {
                options.sslOptions(ssl);
            }
            standaloneClient.setOptions(options.build());
        }
    }

    /**
     * Opens a store at {@code uri} with {@code settings} (names in the README's "Sharing KV across hosts": user,
     * password, tls, tlsVerify, tlsCaFile, commandTimeoutMs, connectTimeoutMs, maxValueBytes, ioThreads) and waits at
     * most {@code connectTimeoutMs} + 0.5 s for its first connection (a server down then is retried at later calls).
     *
     * @param uri where the server is: {@code redis://host[:port]} (port 6379 if left out), {@code rediss://} for TLS,
     *     or {@code redis-cluster://} / {@code rediss-cluster://} with comma-separated seed nodes, each optionally
     *     with percent-encoded credentials before the hosts ({@code password@} or {@code user:password@}); no
     *     database number, query or fragment; not null
     * @param settings setting names to their values as text (a {@code user} or {@code password} here replaces the
     *     URI's); an empty map for the defaults; not null; read during the call and not kept
     * @return the open store, owned by the caller, who closes it
     * @throws IllegalArgumentException naming the URI part or setting that is invalid or unknown, or the user the
     *     server refused (its password wrong, or a permission the connection needs missing: on a cluster
     *     {@code CLUSTER NODES})
     */
    public static RedisRemoteBlockStore open(URI uri, Map<String, String> settings) {
        RedisRemoteBlockStore store = new RedisRemoteBlockStore(RedisStoreSettings.parse(uri, settings));
        try {
            store.firstConnect();
        } catch (RuntimeException | Error e) {
            store.close();
            throw e;
        }
        return store;
    }

    private void firstConnect() {
        CompletableFuture<StatefulConnection<String, byte[]>> attempt = startConnecting();
        try {
            attempt.get(settings.connectTimeout().toMillis() + 500, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (TimeoutException e) {
            LOG.log(System.Logger.Level.WARNING, description + ": no connection within " + settings.connectTimeout()
                    + "; calls fail (misses) until it connects");
        } catch (ExecutionException e) {
            Throwable cause = rootCause(e);
            String refusal = refusal(cause);
            if (refusal != null) {
                String user = settings.user() == null ? "the default user" : "user '" + settings.user() + "'";
                throw new IllegalArgumentException(refusal.equals("NOPERM")
                        ? description + ": " + user + " lacks a permission this store needs (grant the"
                                + " least-privilege ACL of kvtier's README): " + cause.getMessage()
                        : description + " refused the credentials of " + user + ": " + cause.getMessage(), cause);
            }
            LOG.log(System.Logger.Level.WARNING, description + ": cannot connect (" + cause
                    + "); calls fail (misses) and the connection is retried");
        }
    }

    /**
     * Why the server refused the user, if it did: {@code WRONGPASS} or {@code NOAUTH} (the credentials) or
     * {@code NOPERM} (a command the store sends at connect, such as a cluster's {@code CLUSTER NODES}); null for any
     * other failure. A cluster client reports its seeds' answers only as text in one exception, so the text is read.
     */
    private static String refusal(Throwable cause) {
        if (!(cause instanceof RedisException)) {
            return null;
        }
        String message = String.valueOf(cause.getMessage());
        for (String error : List.of("WRONGPASS", "NOAUTH", "NOPERM")) {
            if (message.contains(error)) {
                return error;
            }
        }
        return null;
    }

    private static Throwable rootCause(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        return cause;
    }

    private CompletableFuture<StatefulConnection<String, byte[]>> startConnecting() {
        CompletableFuture<StatefulConnection<String, byte[]>> attempt;
        if (clusterClient != null) {
            // An asynchronous cluster connect needs the slot map first: read it from the seeds, then connect.
            attempt = clusterClient.refreshPartitionsAsync().toCompletableFuture()
                    .thenCompose(ignored -> clusterClient.connectAsync(CODEC)).thenCompose(this::prepareCluster);
        } else {
            attempt = standaloneClient.connectAsync(CODEC, redisUri(settings, settings.endpoints().get(0)))
                    .toCompletableFuture().thenApply(this::prepareStandalone);
        }
        nextConnectAttemptNanos = System.nanoTime() + RECONNECT_BACKOFF.toNanos();
        connection = attempt;
        attempt.whenComplete((open, failure) -> {
            if (open != null && closed.get()) {
                open.closeAsync(); // close() ran while this attempt was in flight
            }
        });
        return attempt;
    }

    private StatefulConnection<String, byte[]> prepareStandalone(StatefulRedisConnection<String, byte[]> open) {
        open.setAutoFlushCommands(false);
        return open;
    }

    /** The cluster connection once every master's connection is open. */
    private CompletableFuture<StatefulConnection<String, byte[]>> prepareCluster(
            StatefulRedisClusterConnection<String, byte[]> open) {
        // Auto-flush stays on for a cluster: Lettuce opens a node's connection for reads and one for writes lazily,
        // and a command queued on a connection still opening when the batch is flushed would sit there until the
        // next call's flush. Commands are still pipelined (none waits for an answer before the next is sent).
        List<CompletableFuture<?>> masters = new ArrayList<>();
        for (RedisClusterNode node : open.getPartitions()) {
            if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                masters.add(open.getConnectionAsync(node.getNodeId()));
            }
        }
        return CompletableFuture.allOf(masters.toArray(new CompletableFuture<?>[0])).thenApply(ignored -> open);
    }

    /** The open connection, or null after starting a new attempt when the last one failed and its backoff ran out. */
    private StatefulConnection<String, byte[]> connectionOrNull() {
        CompletableFuture<StatefulConnection<String, byte[]>> current = connection;
        if (current.isDone() && !current.isCompletedExceptionally()) {
            return current.join();
        }
        if (current.isCompletedExceptionally() && System.nanoTime() - nextConnectAttemptNanos >= 0) {
            synchronized (this) {
                if (connection == current && !closed.get()) {
                    startConnecting();
                }
            }
        }
        return null;
    }

    @Override
    public CompletableFuture<boolean[]> containsAll(List<String> keys) {
        checkKeys(keys);
        checkOpen();
        if (keys.isEmpty()) {
            return CompletableFuture.completedFuture(new boolean[0]);
        }
        List<RedisFuture<Long>> exists = new ArrayList<>(keys.size());
        CompletableFuture<boolean[]> result = new CompletableFuture<>();
        if (!batch(result, "EXISTS", keys.size(), commands -> {
            for (String key : keys) {
                exists.add(commands.exists(key));
            }
        })) {
            return result;
        }
        whenAll(exists, result, "EXISTS", keys.size(), () -> {
            boolean[] held = new boolean[keys.size()];
            for (int i = 0; i < held.length; i++) {
                held[i] = exists.get(i).toCompletableFuture().join() > 0;
            }
            return held;
        });
        return result;
    }

    @Override
    public CompletableFuture<Void> getAllInto(List<String> keys, ValueSink sink) {
        checkKeys(keys);
        if (sink == null) {
            throw new IllegalArgumentException("sink must not be null");
        }
        checkOpen();
        if (keys.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        List<RedisFuture<Void>> ranges = new ArrayList<>(keys.size());
        CompletableFuture<Void> result = new CompletableFuture<>();
        if (!batch(result, "GETRANGE", keys.size(), commands -> {
            for (int i = 0; i < keys.size(); i++) {
                // The marker and at most maxValueBytes + 1 bytes of the value (the end is inclusive): one byte more
                // than the largest value allowed tells an oversized value apart. The answer goes to the sink from
                // Lettuce's receive buffer, without an array per value.
                CommandArgs<String, byte[]> args = new CommandArgs<>(CODEC).addKey(keys.get(i)).add(0)
                        .add(settings.maxValueBytes() + 1);
                ranges.add(commands.dispatch(CommandType.GETRANGE, new SinkOutput(keys.get(i), i, sink), args));
            }
        })) {
            return result;
        }
        whenAll(ranges, result, "GETRANGE", keys.size(), () -> null);
        return result;
    }

    @Override
    public CompletableFuture<Void> putAll(Map<String, byte[]> values) {
        if (values == null) {
            throw new IllegalArgumentException("values must not be null");
        }
        for (Map.Entry<String, byte[]> entry : values.entrySet()) {
            checkKey(entry.getKey());
            if (entry.getValue() == null) {
                throw new IllegalArgumentException("the value of key '" + entry.getKey() + "' is null");
            }
            if (entry.getValue().length > settings.maxValueBytes()) {
                throw new IllegalArgumentException("the value of key '" + entry.getKey() + "' has "
                        + entry.getValue().length + " bytes, above this store's maxValueBytes "
                        + settings.maxValueBytes());
            }
        }
        checkOpen();
        if (values.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        List<RedisFuture<String>> sets = new ArrayList<>(values.size());
        CompletableFuture<Void> result = new CompletableFuture<>();
        if (!batch(result, "SET", values.size(), commands -> {
            for (Map.Entry<String, byte[]> entry : values.entrySet()) {
                sets.add(commands.set(entry.getKey(), entry.getValue()));
            }
        })) {
            return result;
        }
        whenAll(sets, result, "SET", values.size(), () -> null);
        return result;
    }

    /**
     * Values answered absent because they were longer than {@code maxValueBytes}, since the store opened.
     *
     * @return the count, {@code >= 0}, never decreasing; still readable after {@link #close()}
     */
    public long oversizedValues() {
        return oversizedValues.get();
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        // The connection closes first (Lettuce cancels the commands it has not written, and a cancelled command is
        // never encoded), then the callers' futures fail: a putAll's arrays are the caller's again only once no
        // command can still read them.
        CompletableFuture<StatefulConnection<String, byte[]>> current = connection;
        if (current != null && current.isDone() && !current.isCompletedExceptionally()) {
            current.join().close();
        }
        try {
            if (clusterClient != null) {
                clusterClient.shutdown(Duration.ZERO, SHUTDOWN_TIMEOUT);
            } else {
                standaloneClient.shutdown(Duration.ZERO, SHUTDOWN_TIMEOUT);
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, description + ": client shutdown failed", e);
        }
        try {
            resources.shutdown(0, SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .get(SHUTDOWN_TIMEOUT.toMillis() + 500, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.log(System.Logger.Level.WARNING, description + ": its threads did not end within "
                    + SHUTDOWN_TIMEOUT, e);
        }
        IllegalStateException closing = new IllegalStateException(description + " was closed");
        for (CompletableFuture<?> future : pending) {
            future.completeExceptionally(closing);
        }
        pending.clear();
    }

    @Override
    public String toString() {
        return "RedisRemoteBlockStore[" + description + "]";
    }

    /**
     * Keys as UTF-8; a value as {@link #VALUE_MARKER} followed by its bytes, written straight into Lettuce's output
     * buffer (no copy of the array). Decoding strips the marker: an empty reply (an absent key) or one without the
     * marker is null.
     */
    private static final class MarkedValueCodec
            implements RedisCodec<String, byte[]>, ToByteBufEncoder<String, byte[]> {
        private static final byte[] EMPTY = new byte[0];

        @Override
        public String decodeKey(ByteBuffer bytes) {
            return StringCodec.UTF8.decodeKey(bytes);
        }

        @Override
        public byte[] decodeValue(ByteBuffer bytes) {
            ByteBuffer value = afterMarker(bytes);
            if (value == null) {
                return null;
            }
            if (!value.hasRemaining()) {
                return EMPTY;
            }
            byte[] copy = new byte[value.remaining()];
            value.get(copy);
            return copy;
        }

        @Override
        public ByteBuffer encodeKey(String key) {
            return StringCodec.UTF8.encodeKey(key); // also what a cluster hashes to route the key
        }

        @Override
        public ByteBuffer encodeValue(byte[] value) {
            ByteBuffer marked = ByteBuffer.allocate(value.length + 1);
            marked.put(VALUE_MARKER).put(value).flip();
            return marked;
        }

        @Override
        public void encodeKey(String key, ByteBuf target) {
            ByteBufUtil.writeUtf8(target, key);
        }

        @Override
        public void encodeValue(byte[] value, ByteBuf target) {
            target.writeByte(VALUE_MARKER);
            target.writeBytes(value);
        }

        @Override
        public int estimateSize(Object keyOrValue) {
            if (keyOrValue instanceof byte[]) {
                return ((byte[]) keyOrValue).length + 1;
            }
            return keyOrValue == null ? 0 : ByteBufUtil.utf8Bytes((CharSequence) keyOrValue);
        }

        @Override
        public boolean isEstimateExact() {
            return true; // Lettuce then writes the length and the bytes straight into its buffer
        }
    }

    /**
     * Hands one {@code GETRANGE} answer to the caller's sink, a read-only view of Lettuce's receive buffer past the
     * marker; an empty answer (an absent key), one without the marker (not written by kvtier) or one longer than
     * {@code maxValueBytes} is handed over as null. What the sink throws fails the command (Lettuce catches it).
     */
    private final class SinkOutput extends CommandOutput<String, byte[], Void> {
        private final String key;
        private final int index;
        private final ValueSink sink;

        SinkOutput(String key, int index, ValueSink sink) {
            super(CODEC, null);
            this.key = key;
            this.index = index;
            this.sink = sink;
        }

        @Override
        public void set(ByteBuffer bytes) {
            ByteBuffer value = afterMarker(bytes);
            if (value != null && value.remaining() > settings.maxValueBytes()) {
                oversized(key);
                value = null;
            }
            sink.accept(index, value);
        }
    }

    /**
     * A read-only view of a Redis answer's bytes after the {@link #VALUE_MARKER} ({@code bytes}' position untouched),
     * or null for an empty answer (an absent key) or one without the marker (not written by kvtier).
     */
    private static ByteBuffer afterMarker(ByteBuffer bytes) {
        if (bytes == null || !bytes.hasRemaining() || bytes.get(bytes.position()) != VALUE_MARKER) {
            return null;
        }
        ByteBuffer view = bytes.duplicate();
        view.position(view.position() + 1);
        return view.slice().asReadOnlyBuffer();
    }

    private interface Commands {
        void queue(RedisClusterAsyncCommands<String, byte[]> commands);
    }

    /**
     * Queues one call's commands and flushes them once; false (with {@code result} failed) when there is no
     * connection.
     */
    @SuppressWarnings("unchecked")
    private boolean batch(CompletableFuture<?> result, String command, int keys, Commands queue) {
        StatefulConnection<String, byte[]> open = connectionOrNull();
        if (open == null) {
            result.completeExceptionally(new IOException(description + ": not connected; " + command + " of " + keys
                    + " key(s) not sent"));
            return false;
        }
        RedisClusterAsyncCommands<String, byte[]> commands = open instanceof StatefulRedisClusterConnection<?, ?>
                ? ((StatefulRedisClusterConnection<String, byte[]>) open).async()
                : ((StatefulRedisConnection<String, byte[]>) open).async();
        pending.add(result);
        batchLock.lock();
        try {
            queue.queue(commands);
            open.flushCommands();
        } catch (RuntimeException e) {
            open.flushCommands(); // whatever was queued goes out and completes (or times out) on its own
            fail(result, command, keys, e);
            return false;
        } finally {
            batchLock.unlock();
        }
        if (closed.get()) { // close() may have swept the pending set before this call added to it
            result.completeExceptionally(new IllegalStateException(description + " was closed"));
        }
        return true;
    }

    private interface Answer<T> {
        T read();
    }

    private <T> void whenAll(List<? extends RedisFuture<?>> futures, CompletableFuture<T> result, String command,
                             int keys, Answer<T> answer) {
        CompletableFuture<?>[] each = new CompletableFuture<?>[futures.size()];
        for (int i = 0; i < each.length; i++) {
            each[i] = futures.get(i).toCompletableFuture();
        }
        CompletableFuture.allOf(each).whenComplete((ignored, failure) -> {
            pending.remove(result);
            if (failure != null) {
                fail(result, command, keys, failure);
                return;
            }
            try {
                result.complete(answer.read());
            } catch (RuntimeException e) {
                fail(result, command, keys, e);
            }
        });
    }

    /** The one translator: every failure of a call becomes an {@link IOException} naming the store and the call. */
    private void fail(CompletableFuture<?> result, String command, int keys, Throwable failure) {
        pending.remove(result);
        Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        result.completeExceptionally(new IOException(description + ": " + command + " of " + keys
                + " key(s) failed: " + cause, cause));
    }

    private void oversized(String key) {
        oversizedValues.incrementAndGet();
        if (oversizedLogged.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, description + ": the value of key '" + key + "' is longer than"
                    + " maxValueBytes " + settings.maxValueBytes() + " and was answered absent (logged once; see"
                    + " oversizedValues())");
        }
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException(description + " was closed");
        }
    }

    private static void checkKeys(List<String> keys) {
        if (keys == null) {
            throw new IllegalArgumentException("keys must not be null");
        }
        for (int i = 0; i < keys.size(); i++) {
            if (keys.get(i) == null) {
                throw new IllegalArgumentException("key " + i + " of " + keys.size() + " is null");
            }
            checkKey(keys.get(i));
        }
    }

    private static void checkKey(String key) {
        if (key == null) {
            throw new IllegalArgumentException("a key is null");
        }
        // More than 512 chars is more than 512 UTF-8 bytes: refused without encoding.
        if (key.length() > MAX_KEY_BYTES
                || key.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_KEY_BYTES) {
            throw new IllegalArgumentException("key '" + key.substring(0, Math.min(key.length(), 64))
                    + "...' is longer than " + MAX_KEY_BYTES + " UTF-8 bytes");
        }
    }

    private static RedisURI redisUri(RedisStoreSettings settings, RedisStoreSettings.Endpoint endpoint) {
        RedisURI.Builder uri = RedisURI.Builder.redis(endpoint.host(), endpoint.port())
                .withTimeout(settings.commandTimeout())
                .withSsl(settings.tls());
        if (settings.tls()) {
            RedisStoreSettings.TlsVerify verify = settings.tlsVerify();
            uri.withVerifyPeer(verify == RedisStoreSettings.TlsVerify.FULL ? SslVerifyMode.FULL
                    : verify == RedisStoreSettings.TlsVerify.CA ? SslVerifyMode.CA : SslVerifyMode.NONE);
        }
        if (settings.password() != null) {
            if (settings.user() != null) {
                uri.withAuthentication(settings.user(), settings.password());
            } else {
                uri.withPassword(settings.password());
            }
        }
        return uri.build();
    }

    private static SslOptions sslOptions(RedisStoreSettings settings) {
        if (!settings.tls() || settings.tlsCaFile() == null) {
            return null;
        }
        return SslOptions.builder().jdkSslProvider().trustManager(settings.tlsCaFile().toFile()).build();
    }
}
