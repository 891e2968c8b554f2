package dev.kvtier.cluster;

import dev.kvtier.concurrent.KvTierThreads;
import dev.kvtier.persist.AtomicReplace;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.sync.CacheRoutingHint;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The cluster prefix index as a service: consumes the event stream into a {@link ClusterState}, answers
 * {@link #route} with a {@link CacheRoutingHint}, sends prefetch hints to ranks, asks out-of-sync ranks to
 * re-announce, and keeps a snapshot so that a restart serves correct hints quickly.
 *
 * <p><b>Start.</b> If {@code snapshotFile} holds an intact snapshot of this topology, taken on the stream the bus has
 * now (same {@link SyncBus#streamIdentity()}), the state starts from it, else empty (every rank out of sync). The
 * subscription starts right after the state's last stream sequence. A snapshot of another stream (recreated since,
 * whether now shorter or already grown past the snapshot's position), or one the stream ends below, is useless: the
 * router starts empty and asks every rank to re-announce. A gap (retention dropped what the router had not read) is
 * found by the state and repaired the same way. Never a stale index silently: an out-of-sync rank counts for no hint
 * until it resets.
 *
 * <p><b>A stream lost while running.</b> When the bus finds the stream recreated (an empty store after a server
 * restart, or deleted and created again) the state starts over on it ({@link ClusterState#streamRecreated}): every
 * rank out of sync, asked at once to re-announce, reading from the new stream's first message. While the bus cannot
 * resubscribe (it retries for ever) {@link #indexMayBeStale()} says so and a warning is logged.
 *
 * <p><b>Background work</b> on one daemon thread ({@code kvtier-cluster-router-*}): every {@code resyncInterval},
 * resync requests for out-of-sync ranks (one for all when all are), once the router has read as far as the stream
 * reached when it started or has seen a gap (before that, "out of sync" usually only means "not read yet"); every {@code snapshotInterval}, a snapshot
 * (written to a temporary file, forced, then moved over the old one, so a crash leaves the old or the new, never half).
 *
 * <p>Thread-safe; {@link #route} runs under the state's read lock in parallel with the consumer.
 */
public final class ClusterRouter implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ClusterRouter.class.getName());

    /** Called on the delivery thread after each rank batch was handled (tests, benchmarks). Must return quickly. */
    @FunctionalInterface
    public interface AppliedListener {
        /**
         * One rank batch was handled, after the state's lock was released.
         *
         * @param batch   the decoded batch as it came off the stream
         * @param outcome what the state did with it (applied, skipped, refused)
         */
        void onApplied(WireMessage.RankBatch batch, ClusterState.Outcome outcome);
    }

    /**
     * How a router runs.
     *
     * @param snapshotFile where to keep the snapshot, or {@code null} for none
     * @param snapshotInterval how often to write it (ignored without a file)
     * @param resyncInterval how often to repeat resync requests while some rank is out of sync
     * @param expectedBlocks initial capacity of the index
     */
    public record Options(Path snapshotFile, Duration snapshotInterval, Duration resyncInterval, int expectedBlocks) {
        /**
         * Checks the intervals and capacity.
         *
         * @throws IllegalArgumentException for non-positive intervals or a negative capacity
         */
        public Options {
            if (snapshotInterval.isNegative() || snapshotInterval.isZero() || resyncInterval.isNegative()
                    || resyncInterval.isZero() || expectedBlocks < 0) {
                throw new IllegalArgumentException("intervals must be > 0 and expectedBlocks >= 0, got "
                        + snapshotInterval + ", " + resyncInterval + ", " + expectedBlocks);
            }
        }

        /**
         * No snapshot file, resync requests every second.
         *
         * @return options with no snapshot file, a 1 s resync interval and room for 1024 blocks up front
         */
        public static Options inMemory() {
            return new Options(null, Duration.ofSeconds(10), Duration.ofSeconds(1), 1024);
        }
    }

    private final SyncBus bus;
    private final ClusterTopology topology;
    private final Options options;
    private final ClusterState state;
    private final AppliedListener listener;
    private final ReentrantLock progressLock = new ReentrantLock();
    private final Condition progress = progressLock.newCondition();
    private final ScheduledExecutorService background;
    private final SyncBus.Subscription subscription;
    private volatile boolean closed;
    /** Whether the subscription is receiving (see {@link #indexMayBeStale()}). */
    private volatile boolean streamLive = true;
    /** The stream's end when this router started: until it has read that far, "out of sync" may just mean "not yet read". */
    private final long catchUpTarget;

    private ClusterRouter(SyncBus bus, ClusterTopology topology, Options options, ClusterState state,
            AppliedListener listener) {
        this.bus = bus;
        this.topology = topology;
        this.options = options;
        this.state = state;
        this.listener = listener;
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1,
                KvTierThreads.factory("cluster-router"));
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.background = executor;
        this.catchUpTarget = bus.lastSequence();
        this.subscription = bus.subscribe(state.lastStreamSequence() + 1, new SyncBus.EventHandler() {
            @Override
            public void onMessage(long streamSequence, byte[] payload) {
                onMessage(streamSequence, payload, SyncBus.UNKNOWN_SENDER);
            }

            @Override
            public void onMessage(long streamSequence, byte[] payload, int senderRank) {
                ClusterRouter.this.onMessage(streamSequence, payload, senderRank);
            }

            @Override
            public void onStreamRecreated(String streamIdentity) {
                state.streamRecreated(streamIdentity);
                background.execute(ClusterRouter.this::requestResyncIfNeeded); // do not wait for the next round
            }

            @Override
            public void onSubscriptionLive(boolean live) {
                streamLive = live;
                LOG.log(live ? System.Logger.Level.INFO : System.Logger.Level.WARNING, live
                        ? "receiving from " + bus.describe() + " again"
                        : "not receiving from " + bus.describe() + ": the index may be stale until it is back");
            }
        });
        long resync = options.resyncInterval().toNanos();
        background.scheduleWithFixedDelay(this::requestResyncIfNeeded, 0, resync, TimeUnit.NANOSECONDS);
        if (options.snapshotFile() != null) {
            long every = options.snapshotInterval().toNanos();
            background.scheduleWithFixedDelay(this::snapshotQuietly, every, every, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * Starts a router on {@code bus} (see the class comment for where it starts from).
     *
     * @param bus      the bus to read the event stream from and send control messages on; not closed by
     *                 {@link #close()}
     * @param topology the cluster's shape; a snapshot of another shape is ignored (logged) and the router starts empty
     * @param options  snapshot file and intervals, resync interval, initial index capacity
     * @param listener told about each batch handled, or {@code null}
     * @return a running router, owned by the caller (close it)
     */
    public static ClusterRouter start(SyncBus bus, ClusterTopology topology, Options options, AppliedListener listener) {
        ClusterState state = loadSnapshot(topology, options);
        String identity = bus.streamIdentity();
        if (state != null && !state.streamIdentity().equals(identity)) {
            LOG.log(System.Logger.Level.WARNING, "the snapshot was taken on stream " + state.streamIdentity() + " but "
                    + bus.describe() + " is now " + identity + ": the stream was recreated; starting empty");
            state = null;
        } else if (state != null && bus.lastSequence() < state.lastStreamSequence()) {
            LOG.log(System.Logger.Level.WARNING, "the snapshot has read up to stream sequence "
                    + state.lastStreamSequence() + " but " + bus.describe() + " ends at " + bus.lastSequence()
                    + ": the stream was recreated; starting empty");
            state = null;
        }
        if (state == null) {
            state = new ClusterState(topology, options.expectedBlocks());
            state.adoptStream(identity);
        }
        return new ClusterRouter(bus, topology, options, state, listener);
    }

    private static ClusterState loadSnapshot(ClusterTopology topology, Options options) {
        if (options.snapshotFile() == null) {
            return null;
        }
        try (InputStream in = Files.newInputStream(options.snapshotFile())) {
            return ClusterState.restore(in, topology);
        } catch (NoSuchFileException none) {
            return null;
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "ignoring the snapshot " + options.snapshotFile() + ": "
                    + e.getMessage() + "; starting empty and asking every rank to re-announce");
            return null;
        }
    }

    private void onMessage(long streamSequence, byte[] payload, int senderRank) {
        ClusterState.Outcome outcome = state.applyStreamMessage(streamSequence, payload, senderRank,
                listener == null ? null : listener::onApplied);
        if (outcome == ClusterState.Outcome.GAP) {
            background.execute(this::requestResyncIfNeeded); // do not wait for the next round
        }
        progressLock.lock();
        try {
            progress.signalAll();
        } finally {
            progressLock.unlock();
        }
    }

    private void requestResyncIfNeeded() {
        if (closed) {
            return;
        }
        long outOfSync = state.ranksOutOfSync();
        if (outOfSync == 0 || (state.lastStreamSequence() < catchUpTarget && state.streamGaps() == 0)) {
            return; // a restarted router first reads what is there, which usually brings every rank in sync
        }
        try {
            long all = topology.worldSize() == 64 ? -1L : (1L << topology.worldSize()) - 1;
            if (outOfSync == all) {
                bus.sendControl(WireFormat.encode(new WireMessage.ResyncRequest(true, 0)));
            } else {
                for (long rest = outOfSync; rest != 0; rest &= rest - 1) {
                    bus.sendControl(WireFormat.encode(new WireMessage.ResyncRequest(false,
                            Long.numberOfTrailingZeros(rest))));
                }
            }
        } catch (SyncBusException e) {
            LOG.log(System.Logger.Level.DEBUG, "resync request not sent (will retry): " + e.getMessage());
        }
    }

    /**
     * The hint for a request whose prompt is the block chain {@code chain}: see {@link ClusterState#route}.
     *
     * @param chain the prompt's block hashes, first block first
     * @return the ranks holding the longest prefix, its reusable tokens and the ranks' hosts; no ranks when none holds
     *         the first block
     */
    public CacheRoutingHint route(List<BlockHash> chain) {
        return state.route(chain);
    }

    /**
     * The hint for {@code chain} where a prefix held by the remote block store {@code shared} counts as available to
     * every rank (see {@link ClusterState#route(List, int, long)}): routing may then prefer load over locality, since
     * a rank without the blocks fetches them. Asks the store once (bounded by the probe's timeout; a store that fails
     * or is slow counts as holding nothing), and not at all when the ranks' own prefix covers the whole chain.
     *
     * @param chain  the prompt's block hashes, first block first
     * @param shared the probe of the remote block store the ranks' caches share, with their namespace and layout
     * @return every rank, with the store's prefix as reusable tokens, when that prefix is longer than any rank's own;
     *         else {@link #route(List)}'s hint
     * @throws IllegalArgumentException if {@code chain} or {@code shared} is null
     */
    public CacheRoutingHint route(List<BlockHash> chain, RemotePrefixProbe shared) {
        if (shared == null) {
            throw new IllegalArgumentException("shared must not be null (use route(chain) without a remote store)");
        }
        if (chain == null) {
            throw new IllegalArgumentException("chain must not be null");
        }
        CacheRoutingHint local = state.route(chain);
        if (chain.isEmpty() || local.reusableTokens() >= chain.size() * shared.tokensPerBlock()) {
            return local;
        }
        return state.route(chain, shared.heldBlocks(chain), shared.tokensPerBlock());
    }

    /**
     * Tells {@code rank} to start promoting {@code prefix} (the reusable blocks of a request routed to it, first block
     * first) toward the GPU; its publisher hands them to its {@link ClusterPublisher.PrefetchListener}. Send it to every
     * rank of the chosen tensor-parallel group. Fire and forget: a lost hint only costs the prefetch.
     *
     * @param rank           the rank to tell, {@code >= 0}
     * @param prefix         the reusable blocks' chain hashes, first block first (typically the first blocks of the
     *                       chain given to {@link #route})
     * @param reusableTokens the tokens {@code prefix} covers, {@code >= 0} (the hint's {@code reusableTokens()})
     * @throws IllegalArgumentException for a negative rank or token count
     * @throws SyncBusException         when the bus cannot send it
     */
    public void sendPrefetch(int rank, List<BlockHash> prefix, long reusableTokens) {
        bus.sendControl(WireFormat.encode(new WireMessage.PrefetchHint(rank, reusableTokens, prefix)));
    }

    /**
     * Whether the router is not receiving the stream right now (the bus cannot resubscribe: server away, stream
     * missing): the index then says what the ranks held when it last heard from them.
     *
     * @return {@code true} between the bus reporting the subscription down and reporting it live again
     */
    public boolean indexMayBeStale() {
        return !streamLive;
    }

    /**
     * The state this router keeps (read it; the router is its only writer).
     *
     * @return the live state, not a copy
     */
    public ClusterState state() {
        return state;
    }

    /**
     * Waits until the stream has been read up to {@code streamSequence}; whether it got there within {@code timeout}.
     *
     * @param streamSequence the stream sequence to wait for (as {@link SyncBus#publish} returned it)
     * @param timeout        how long to wait at most
     * @return whether {@link ClusterState#lastStreamSequence()} reached {@code streamSequence} in time
     * @throws InterruptedException if the waiting thread is interrupted
     */
    public boolean awaitStreamSequence(long streamSequence, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        progressLock.lock();
        try {
            while (state.lastStreamSequence() < streamSequence) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                progress.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
            }
            return true;
        } finally {
            progressLock.unlock();
        }
    }

    /**
     * Writes a snapshot to the options' file now (temporary file, force, atomic move).
     *
     * @throws IllegalStateException if the router has no snapshot file
     * @throws IOException           when the directory, the temporary file, the force or the move fails; the old
     *                               snapshot, if any, is then left in place
     */
    public void snapshotNow() throws IOException {

        Path target = options.snapshotFile();
        if (target == null) {
            throw new IllegalStateException("this router was started without a snapshot file");
        }
        writeSnapshot(state, target);
    }

    /** Writes {@code state}'s snapshot to {@code target} so that a crash leaves the old file or the new one. */
    static void writeSnapshot(ClusterState state, Path target) throws IOException {
        Path absolute = target.toAbsolutePath();
        Files.createDirectories(absolute.getParent());
        Path temporary = absolute.resolveSibling("." + absolute.getFileName() + ".tmp");
        try {
            try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
                    OutputStream out = java.nio.channels.Channels.newOutputStream(channel)) {
                state.snapshot(out);
                channel.force(true);
            }
            AtomicReplace.replace(temporary, absolute);
        } finally {
            Files.deleteIfExists(temporary);
        }
    }

    private void snapshotQuietly() {
        if (closed) {
            return;
        }
        try {
            snapshotNow();
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "snapshot to " + options.snapshotFile() + " failed (will retry): "
                    + e.getMessage());
        }
    }

    /** Stops consuming and the background work. Does not close the bus. Idempotent. */
    @Override
    public void close() {
        closed = true;
        subscription.close();
        KvTierThreads.shutdownAndAwait(background);
    }
}
