package dev.kvtier.cluster;

import dev.kvtier.concurrent.Backoff;
import dev.kvtier.concurrent.KvTierThreads;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One rank's side of the event stream. The engine calls it <em>after</em> each change is committed (events follow
 * bytes): {@link #blockStored}, {@link #blockRemoved}, {@link #blockGone}, {@link #shardUpdated}, {@link #shardEvicted};
 * then {@link #endStep()} at each engine step boundary, which sends that step's events as one message (more only if
 * they pass {@link WireFormat#MAX_MESSAGE_BYTES}).
 *
 * <p><b>Incarnations.</b> Each publisher has an epoch (larger for each restart of the rank; by default the wall clock in
 * milliseconds at construction) and numbers its messages 1, 2, ... within it. Its first message is a <em>reset</em>
 * carrying everything {@link Holdings} reports (what the persistent disk tier recovered, after a restart): receivers
 * forget the rank's older epochs and start over. {@link #resetAndReannounce()} does the same within the epoch; it runs
 * when a receiver asks ({@link WireMessage.ResyncRequest} on the control channel) and after this publisher had to drop
 * messages. Re-announcements run on their own thread and walk the holdings without holding this publisher's locks,
 * so an engine that reports events while holding its own locks cannot deadlock with them.
 *
 * <p><b>Never blocks the engine on the network.</b> Messages go to a bounded queue ({@code maxQueuedMessages}); one
 * daemon thread publishes them in order, <em>pipelined</em>: up to {@link #MAX_UNACKNOWLEDGED} messages are on their
 * way at once ({@link SyncBus#publishAsync}), so the rate is not one message per round trip. When an acknowledgement
 * fails, everything from the first unacknowledged message on is sent again, in order, after a capped backoff (a
 * resend may store a message twice; receivers drop the duplicate by its epoch and sequence). When the queue is full
 * (bus down for long) the queue is dropped and the next step boundary sends a reset and a full re-announcement
 * instead: receivers see the jump in sequence, mark this rank out of sync meanwhile, and are whole again after the
 * reset.
 *
 * <p><b>Refused messages.</b> Messages are split to fit the bus ({@link SyncBus#maxMessageBytes()}: a server's
 * {@code max_payload} may be far below {@link WireFormat#MAX_MESSAGE_BYTES}). A message the bus refuses all the same
 * ({@link SyncBusException#refused()}) can never be sent: it and everything queued after it are dropped and counted
 * ({@link #refusedMessages()}, {@link #droppedMessages()}), and a reset and re-announcement follow at once.
 *
 * <p><b>The publishing thread never dies silently.</b> Every failure of a publish is counted
 * ({@link #publishFailures()}) and handled as above; should the thread end all the same (an {@link Error}), the next
 * {@link #endStep()} or {@link #flush} logs it with its cause, counts it ({@link #publisherRestarts()}) and starts a
 * new one, which resends what was not acknowledged.
 *
 * <p><b>Control.</b> Resync requests for this rank (or all ranks) trigger {@link #resetAndReannounce()}; prefetch hints
 * for this rank go to the {@link PrefetchListener}. Bad control messages (not kvtier's, damaged, or an event batch on
 * the control channel) are counted by reason ({@link #badControlMessages()}) and logged at most once a second, as the
 * router does with bad event-stream messages. {@link RankCacheBridge} builds a publisher over a
 * {@code KvTierCache}: it reports the cache's committed changes, walks its blocks for re-announcements and turns
 * prefetch hints into the prefix API's restores.
 *
 * <p>Thread-safe: event methods may be called from any thread; events of one step are those reported between two
 * {@link #endStep()} calls.
 */
public final class ClusterPublisher implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ClusterPublisher.class.getName());
    /** Messages sent and not yet acknowledged at most; more wait in the queue. */
    public static final int MAX_UNACKNOWLEDGED = 256;
    private static final Backoff RETRY = new Backoff(0, 0, TimeUnit.MILLISECONDS.toNanos(5),
            TimeUnit.MILLISECONDS.toNanos(500));

    /** What the rank holds now, reported into an {@link Announcer} for a re-announcement. */
    @FunctionalInterface
    public interface Holdings {
        /**
         * Calls {@code announcer} for every block (per tier) and shard position the rank holds right now.
         *
         * @param announcer receives the holdings; valid only during this call. Called on the re-announcement thread,
         *                  without this publisher's locks
         */
        void announce(Announcer announcer);
    }

    /** Receives a rank's holdings during a re-announcement. */
    public interface Announcer {
        /**
         * The rank holds {@code block} in {@code tier}.
         *
         * @param block  the block's chain hash
         * @param tier   one tier holding its bytes; a block in two tiers is announced once per tier
         * @param tokens how many tokens the block covers, {@code >= 0}
         */
        void block(BlockHash block, Tier tier, int tokens);

        /**
         * The rank's position for {@code layer} is {@code seqPos}.
         *
         * @param layer  the model layer, in {@code [0, numLayers)}
         * @param seqPos the token position the layer's KV reaches, {@code >= 0}
         */
        void shard(int layer, long seqPos);
    }

    /** Receives prefetch hints the router sends this rank. Called on the bus's control thread: return quickly. */
    @FunctionalInterface
    public interface PrefetchListener {
        /**
         * A request that will reuse {@code blocks} (first block first, {@code reusableTokens} tokens) is on its way.
         *
         * @param blocks         the blocks the router's hint names (a prefix of the request's chain), first block first;
         *                       unmodifiable
         * @param reusableTokens the tokens those blocks cover
         */
        void onPrefetchHint(List<BlockHash> blocks, long reusableTokens);
    }

    private final SyncBus bus;
    private final int rank;
    private final String host;
    private final long epoch;
    private final Holdings holdings;
    private final PrefetchListener prefetch;
    private final int maxQueuedMessages;
    private final WireFormat.Limits limits;
    private final int hostBytes;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    // Guarded by lock.
    private final List<ClusterEvent> step = new ArrayList<>();
    private int stepBytes;
    private long sequence;
    private final ArrayDeque<byte[]> queue = new ArrayDeque<>();
    /** Sent, not yet acknowledged, in the order sent. */
    private final ArrayDeque<Unacknowledged> unacknowledged = new ArrayDeque<>();
    private boolean needsReset;
    /** A reset is queued or running: events wait in {@link #step} until it is sent. */
    private boolean resetting;
    /** A reset is queued and has not started yet (requests are merged into it). */
    private boolean resetRequested;
    private boolean closed;
    private long dropped;
    private long published;
    private long publishFailures;
    private long refused;
    private long publisherRestarts;
    private Thread publisher;
    private final java.util.concurrent.ExecutorService reannouncer =
            java.util.concurrent.Executors.newSingleThreadExecutor(KvTierThreads.factory("cluster-reannounce"));
    private final SyncBus.Subscription control;
    private final java.util.concurrent.ConcurrentHashMap<MalformedMessageException.Reason, java.util.concurrent.atomic.LongAdder>
            badControl = new java.util.concurrent.ConcurrentHashMap<>();
    private final ThrottledLog badControlLog = new ThrottledLog(LOG, Duration.ofSeconds(1));

    /**
     * Starts publishing for {@code rank} of {@code topology} on {@code bus}: enqueues the reset with the
     * {@code holdings} and listens for control messages.
     *
     * @param bus               the bus to publish on and read control messages from; not closed by {@link #close()}
     * @param topology          the cluster's shape, for the rank and layer checks
     * @param rank              this rank, in {@code [0, topology.worldSize())}
     * @param host              where a router sends this rank's requests (e.g. {@code "gpu-node-3:8000"}), at most
     *                          {@link WireFormat#MAX_HOST_BYTES} UTF-8 bytes; may be empty
     * @param epoch this incarnation's epoch, larger than any earlier incarnation's of the rank ({@link #clockEpoch()})
     * @param holdings          what the rank holds now, walked for the first reset and every re-announcement
     * @param prefetch receives prefetch hints, or {@code null} to ignore them
     * @param maxQueuedMessages messages waiting to be published at most, {@code >= 1}; past it the queue is dropped and
     *                          a reset follows
     * @throws IllegalArgumentException for a rank outside the topology, a negative epoch, a host longer than
     *     {@link WireFormat#MAX_HOST_BYTES} bytes, or {@code maxQueuedMessages < 1}
     */
    public ClusterPublisher(SyncBus bus, ClusterTopology topology, int rank, String host, long epoch,
            Holdings holdings, PrefetchListener prefetch, int maxQueuedMessages) {
        if (rank < 0 || rank >= topology.worldSize()) {
            throw new IllegalArgumentException("rank must be in [0, " + topology.worldSize() + "), got " + rank);
        }
        if (epoch < 0 || maxQueuedMessages < 1) {
            throw new IllegalArgumentException("epoch must be >= 0 and maxQueuedMessages >= 1, got " + epoch + " and "
                    + maxQueuedMessages);
        }
        this.hostBytes = host.getBytes(StandardCharsets.UTF_8).length;
        if (hostBytes > WireFormat.MAX_HOST_BYTES) {
            throw new IllegalArgumentException("host must be at most " + WireFormat.MAX_HOST_BYTES
                    + " UTF-8 bytes, got '" + host + "'");
        }
        int smallest = WireFormat.batchOverhead(hostBytes) + WireFormat.MAX_EVENT_BYTES;
        if (bus.maxMessageBytes() < smallest) {
            throw new IllegalArgumentException(bus.describe() + " takes messages of at most " + bus.maxMessageBytes()
                    + " bytes; a batch of one event from host '" + host + "' needs " + smallest
                    + " (raise the server's max_payload)");
        }
        this.bus = bus;
        this.rank = rank;
        this.host = host;
        this.epoch = epoch;
        this.holdings = holdings;
        this.prefetch = prefetch;
        this.maxQueuedMessages = maxQueuedMessages;
        this.limits = topology.limits();
        this.publisher = KvTierThreads.factory("cluster-publisher").newThread(this::publishLoop);
        resetAndReannounce();
        publisher.start();
        this.control = bus.subscribeControl(this::onControl);
    }

    /**
     * An epoch from the wall clock (milliseconds): larger for each restart as long as the clock does not go back.
     *
     * @return {@link System#currentTimeMillis()}
     */
    public static long clockEpoch() {
        return System.currentTimeMillis();
    }

    /**
     * This publisher's rank.
     *
     * @return the rank given at construction
     */
    public int rank() {
        return rank;
    }

    /**
     * This incarnation's epoch.
     *
     * @return the epoch given at construction, carried by every message of this publisher
     */
    public long epoch() {
        return epoch;
    }

    /**
     * The rank now holds {@code block} in {@code tier} (its bytes are in place).
     *
     * @param block  the block's chain hash
     * @param tier   the tier its bytes are now in
     * @param tokens how many tokens the block covers, {@code >= 0}
     * @throws IllegalArgumentException if {@code block} or {@code tier} is null or {@code tokens < 0}
     */
    public void blockStored(BlockHash block, Tier tier, int tokens) {
        add(new ClusterEvent.BlockStored(block, tier, tokens));
    }

    /**
     * The rank no longer holds {@code block} in {@code tier}.
     *
     * @param block the block's chain hash
     * @param tier  the tier its bytes left (it may still be in another)
     * @throws IllegalArgumentException if {@code block} or {@code tier} is null
     */
    public void blockRemoved(BlockHash block, Tier tier) {
        add(new ClusterEvent.BlockRemoved(block, tier));
    }

    /**
     * The rank holds {@code block} in no tier any more.
     *
     * @param block the block's chain hash
     * @throws IllegalArgumentException if {@code block} is null
     */
    public void blockGone(BlockHash block) {
        add(new ClusterEvent.BlockGone(block));
    }

    /**
     * The seed's ShardUpdated for this rank.
     *
     * @param layer  the model layer, in {@code [0, numLayers)}
     * @param seqPos the token position the layer's KV now reaches, {@code >= 0}
     * @throws IllegalArgumentException if {@code layer} is out of range or {@code seqPos} negative
     */
    public void shardUpdated(int layer, long seqPos) {
        requireLayer(layer);
        add(new ClusterEvent.ShardUpdated(layer, seqPos));
    }

    /**
     * The seed's ShardEvicted for this rank.
     *
     * @param layer  the model layer, in {@code [0, numLayers)}
     * @param seqPos the token position after which the layer's KV was evicted, {@code >= 0}
     * @throws IllegalArgumentException if {@code layer} is out of range or {@code seqPos} negative
     */
    public void shardEvicted(int layer, long seqPos) {
        requireLayer(layer);
        add(new ClusterEvent.ShardEvicted(layer, seqPos));
    }

    private void requireLayer(int layer) {
        if (layer < 0 || layer >= limits.numLayers()) {
            throw new IllegalArgumentException("layer must be in [0, " + limits.numLayers() + "), got " + layer);
        }
    }

    /** The largest message to build: what the bus takes now (a reconnect may change it). */
    private int messageLimit() {
        return Math.min(WireFormat.MAX_MESSAGE_BYTES, bus.maxMessageBytes());
    }

    private void add(ClusterEvent event) {
        lock.lock();
        try {
            int bytes = WireFormat.eventBytes(event);
            if (!resetting && WireFormat.batchOverhead(hostBytes) + stepBytes + bytes > messageLimit()) {
                enqueueEvents(step, false); // a step too large for one message continues in the next
                step.clear();
                stepBytes = 0;
            }
            step.add(event);
            stepBytes += bytes;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Ends the engine step: its events go out as one message (none when there were none). During a re-announcement
     * they wait, and go out right after it.
     */
    public void endStep() {
        boolean reset;
        lock.lock();
        try {
            restartPublisherIfDead();
            reset = needsReset;
            if (!reset && !resetting && !step.isEmpty()) {
                enqueueEvents(step, false);
                step.clear();
                stepBytes = 0;
            }
        } finally {
            lock.unlock();
        }
        if (reset) {
            resetAndReannounce();
        }
    }

    /**
     * Asks for a reset and a re-announcement of everything {@link Holdings} reports. It runs on this publisher's own
     * thread ({@code kvtier-cluster-reannounce-*}), never on the caller's, and calls {@link Holdings#announce} holding
     * none of this publisher's locks: the engine may report events while the holdings are walked (they are sent after
     * the reset; a store or removal seen twice is harmless), and may hold its own locks while it reports. Requests made
     * while one is pending are merged. {@link #flush} waits for it.
     */
    public void resetAndReannounce() {
        lock.lock();
        try {
            if (closed || resetRequested) {
                return;
            }
            resetRequested = true;
            resetting = true; // from now on events wait for the reset
        } finally {
            lock.unlock();
        }
        try {
            reannouncer.execute(this::runReset);
        } catch (java.util.concurrent.RejectedExecutionException closedMeanwhile) {
            // closing: nothing more is sent
        }
    }

    private void runReset() {
        lock.lock();
        try {
            resetRequested = false;
            needsReset = false;
            // Events reported before this point were committed before the walk below: the holdings cover them.
            step.clear();
            stepBytes = 0;
        } finally {
            lock.unlock();
        }
        List<ClusterEvent> announced = new ArrayList<>();
        try {
            holdings.announce(new Announcer() {
                @Override
                public void block(BlockHash block, Tier tier, int tokens) {
                    announced.add(new ClusterEvent.BlockStored(block, tier, tokens));
                }

                @Override
                public void shard(int layer, long seqPos) {
                    requireLayer(layer);
                    announced.add(new ClusterEvent.ShardUpdated(layer, seqPos));
                }
            });
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "rank " + rank + ": the holdings could not be walked; the reset waits"
                    + " for the next request", e);
            lock.lock();
            try {
                needsReset = true;
                resetting = resetRequested;
                changed.signalAll();
            } finally {
                lock.unlock();
            }
            return;
        }
        lock.lock();
        try {
            enqueueEvents(announced, true);
            if (!resetRequested) {
                resetting = false;
                if (!step.isEmpty()) {
                    enqueueEvents(step, false); // what the engine reported during the walk, after the reset
                    step.clear();
                    stepBytes = 0;
                }
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Caller holds lock. Queues {@code events} as one message, or several when they pass the size bound; the first is
     * a reset when {@code reset} (and is sent even when there are no events).
     */
    private void enqueueEvents(List<ClusterEvent> events, boolean reset) {
        int overhead = WireFormat.batchOverhead(hostBytes);
        int limit = messageLimit();
        List<ClusterEvent> chunk = new ArrayList<>();
        int bytes = 0;
        boolean first = reset;
        for (ClusterEvent event : events) {
            int size = WireFormat.eventBytes(event);
            if (overhead + bytes + size > limit && !chunk.isEmpty()) {
                enqueueMessage(chunk, first);
                first = false;
                chunk = new ArrayList<>();
                bytes = 0;
            }
            chunk.add(event);
            bytes += size;
        }
        if (!chunk.isEmpty() || first) {
            enqueueMessage(chunk, first);
        }
    }

    /** Caller holds lock. Encodes the next message and queues it. */
    private void enqueueMessage(List<ClusterEvent> events, boolean reset) {
        sequence++;
        byte[] message = WireFormat.encode(new WireMessage.RankBatch(rank, epoch, sequence, reset, host, events));
        if (queue.size() >= maxQueuedMessages) {
            dropped += queue.size() + 1;
            queue.clear();
            needsReset = true;
            LOG.log(System.Logger.Level.WARNING, "rank " + rank + ": " + bus.describe() + " is not taking messages;"
                    + " dropped the queue, the next step boundary re-announces everything");
            return;
        }
        queue.addLast(message);
        changed.signalAll();
    }

    /** A message sent and its acknowledgement. */
    private record Unacknowledged(byte[] message, java.util.concurrent.CompletableFuture<Long> ack) {
    }

    /** Caller holds lock. Called where the engine or a waiter passes by: a dead publishing thread is replaced. */
    private void restartPublisherIfDead() {
        if (closed || publisher.isAlive()) {
            return;
        }
        publisherRestarts++;
        LOG.log(System.Logger.Level.ERROR, "rank " + rank + ": the publishing thread had ended (see the error logged"
                + " with it); starting a new one, which resends the " + unacknowledged.size()
                + " unacknowledged messages");
        // What was sent and not acknowledged goes again, first, in order.
        for (var it = unacknowledged.descendingIterator(); it.hasNext(); ) {
            queue.addFirst(it.next().message());
        }
        unacknowledged.clear();
        publisher = KvTierThreads.factory("cluster-publisher").newThread(this::publishLoop);
        publisher.start();
    }

    private void publishLoop() {
        try {
            int attempt = 0;
            while (true) {
                try {
                    Step step = publishNext(attempt);
                    if (step == Step.CLOSED) {
                        return;
                    }
                    if (step == Step.ACKNOWLEDGED) {
                        attempt = 0;
                    }
                } catch (SendFailed failure) {
                    attempt++;
                    RETRY.idle(attempt);
                } catch (RuntimeException e) {
                    countFailure();
                    LOG.log(System.Logger.Level.WARNING, "rank " + rank + ": publishing failed unexpectedly; going on",
                            e);
                    attempt++;
                    RETRY.idle(attempt);
                }
            }
        } catch (Throwable e) {
            LOG.log(System.Logger.Level.ERROR, "rank " + rank + ": the publishing thread ends; the next step boundary"
                    + " or flush starts a new one", e);
            throw e;
        }
    }

    /** What one round of the publishing thread did. */
    private enum Step { SENT, ACKNOWLEDGED, CLOSED }

    /** An acknowledgement failed and was handled; the loop backs off before going on. */
    private static final class SendFailed extends Exception {
        private static final long serialVersionUID = 1L;

        SendFailed() {
            super(null, null, false, false);
        }
    }

    private void countFailure() {
        lock.lock();
        try {
            publishFailures++;
        } finally {
            lock.unlock();
        }
    }

    /**
     * One step of the publishing thread: sends the next queued message when the window has room, or settles the
     * oldest acknowledgement once it is in, or waits for either.
     *
     * @throws SendFailed when the oldest acknowledgement failed (already handled: resend queued, or reset asked)
     */
    private Step publishNext(int attempt) throws SendFailed {
        Unacknowledged toSend = null;
        Unacknowledged oldest;
        lock.lock();
        try {
            while (true) {
                if (closed) {
                    return Step.CLOSED;
                }
                oldest = unacknowledged.peekFirst();
                if (oldest != null && oldest.ack().isDone()) {
                    break;
                }
                if (unacknowledged.size() < MAX_UNACKNOWLEDGED && !queue.isEmpty()) {
                    // Counted as unacknowledged from the moment it leaves the queue: flush never misses it.
                    toSend = new Unacknowledged(queue.pollFirst(), new java.util.concurrent.CompletableFuture<>());
                    unacknowledged.addLast(toSend);
                    break;
                }
                changed.awaitUninterruptibly();
            }
        } finally {
            lock.unlock();
        }
        if (toSend != null) {
            // An Error thrown here ends the thread with the message still unacknowledged: its successor resends it.
            java.util.concurrent.CompletableFuture<Long> result;
            try {
                result = bus.publishAsync(toSend.message());
            } catch (RuntimeException e) {
                result = java.util.concurrent.CompletableFuture.failedFuture(e); // a bus that throws instead
            }
            java.util.concurrent.CompletableFuture<Long> ack = toSend.ack();
            result.whenComplete((sequence, failure) -> {
                if (failure == null) {
                    ack.complete(sequence);
                } else {
                    ack.completeExceptionally(failure);
                }
                signalChange();
            });
            return Step.SENT;
        }
        Throwable failure = ack(oldest);
        if (failure == null) {
            lock.lock();
            try {
                if (unacknowledged.peekFirst() == oldest) {
                    unacknowledged.removeFirst();
                }
                published++;
                changed.signalAll();
            } finally {
                lock.unlock();
            }
            return Step.ACKNOWLEDGED;
        }
        onSendFailure(failure, attempt);
        throw new SendFailed();
    }

    private void signalChange() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The failure of a completed acknowledgement, or null when it succeeded. */
    private static Throwable ack(Unacknowledged sent) {
        try {
            sent.ack().join();
            return null;
        } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
            return e.getCause() == null ? e : e.getCause();
        }
    }

    /**
     * The oldest unacknowledged message failed. Refused: it can never be sent, so it and everything after it are
     * dropped and a reset follows. Otherwise: everything from it on is sent again, in order.
     */
    private void onSendFailure(Throwable failure, int attempt) {
        boolean refusal = !(failure instanceof SyncBusException e) || e.refused();
        lock.lock();
        try {
            publishFailures++;
            if (refusal) {
                refused++;
                dropped += unacknowledged.size() + queue.size();
                unacknowledged.clear();
                queue.clear();
                needsReset = true;
            } else {
                for (var it = unacknowledged.descendingIterator(); it.hasNext(); ) {
                    queue.addFirst(it.next().message());
                }
                unacknowledged.clear();
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        if (refusal) {
            LOG.log(System.Logger.Level.WARNING, "rank " + rank + ": " + bus.describe() + " refused a message (" + failure
                    + "); dropped it and what followed it, re-announcing everything");
            resetAndReannounce();
        } else if (attempt == 0) {
            LOG.log(System.Logger.Level.WARNING, "rank " + rank + ": publish failed, resending from the first"
                    + " unacknowledged message: " + failure.getMessage());
        }
    }

    private boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    private void onControl(byte[] payload) {
        WireMessage message;
        try {
            message = WireFormat.decode(payload, limits);
        } catch (MalformedMessageException e) {
            badControl(e.reason(), e.getMessage());
            return;
        }
        switch (message) {
            case WireMessage.ResyncRequest request when request.allRanks() || request.rank() == rank ->
                    resetAndReannounce();
            case WireMessage.PrefetchHint hint when hint.rank() == rank && prefetch != null ->
                    prefetch.onPrefetchHint(hint.blocks(), hint.reusableTokens());
            case WireMessage.RankBatch batch -> badControl(MalformedMessageException.Reason.BAD_STRUCTURE,
                    "an event batch of rank " + batch.rank() + " on the control channel");
            default -> {
                // for another rank, or nothing to do
            }
        }
    }

    private void badControl(MalformedMessageException.Reason reason, String detail) {
        badControl.computeIfAbsent(reason, r -> new java.util.concurrent.atomic.LongAdder()).increment();
        badControlLog.warn("rank " + rank + ": skipped bad control message: " + detail);
    }

    /**
     * Bad control messages skipped, by reason (only reasons seen).
     *
     * @return a new map, the caller's to keep; counts since construction
     */
    public java.util.Map<MalformedMessageException.Reason, Long> badControlMessages() {
        java.util.EnumMap<MalformedMessageException.Reason, Long> counts =
                new java.util.EnumMap<>(MalformedMessageException.Reason.class);
        badControl.forEach((reason, count) -> counts.put(reason, count.sum()));
        return counts;
    }

    /**
     * Waits until every message queued so far is on the bus.
     *
     * @param timeout how long to wait at most; zero or negative checks once without waiting
     * @return whether it got there within {@code timeout}; {@code false} also when the waiting thread is interrupted
     *         (its interrupt status is set again)
     */
    public boolean flush(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            while (!queue.isEmpty() || !unacknowledged.isEmpty() || resetting) {
                restartPublisherIfDead();
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                // Bounded slices: a publishing thread that ends signals nothing, and is only seen by looking.
                changed.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Messages published so far (a retried message counts once).
     *
     * @return messages the bus acknowledged since construction
     */
    public long publishedMessages() {
        lock.lock();
        try {
            return published;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Failed publishes (each failed acknowledgement or refusal counts once; resends are counted again).
     *
     * @return the count since construction
     */
    public long publishFailures() {
        lock.lock();
        try {
            return publishFailures;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Messages the bus refused for good (too large for it, say); each was followed by a reset.
     *
     * @return the count since construction
     */
    public long refusedMessages() {
        lock.lock();
        try {
            return refused;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Times the publishing thread was found dead and started again.
     *
     * @return the count since construction; above 0 means an {@link Error} ended the thread (it was logged)
     */
    public long publisherRestarts() {
        lock.lock();
        try {
            return publisherRestarts;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Messages dropped because the queue was full, or because a message before them was refused.
     *
     * @return the count since construction
     */
    public long droppedMessages() {

        lock.lock();
        try {
            return dropped;
        } finally {
            lock.unlock();
        }
    }

    /** Stops listening and publishing; messages still queued are dropped (receivers see the gap). Idempotent. */
    @Override
    public void close() {
        control.close();
        reannouncer.shutdownNow();
        lock.lock();
        try {
            closed = true;
            queue.clear();
            unacknowledged.clear();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        Thread running;
        lock.lock();
        try {
            running = publisher;
        } finally {
            lock.unlock();
        }
        try {
            running.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
