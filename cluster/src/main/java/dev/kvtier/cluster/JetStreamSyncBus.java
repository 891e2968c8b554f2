package dev.kvtier.cluster;

import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.PushSubscribeOptions;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;
import io.nats.client.api.DiscardPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.api.StreamState;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A {@link SyncBus} over NATS JetStream: the event stream is a file-backed JetStream stream with one subject
 * ({@code <prefix>.events}; one subject keeps stream sequences contiguous, so a jump means retention dropped
 * something), retention {@code max_msgs} with discard-old; the control channel is plain NATS on
 * {@code <prefix>.control}.
 *
 * <p>Subscriptions are <em>ordered push consumers</em> started at a given stream sequence: the subscriber keeps its own
 * last applied sequence and resumes after it. Measured here (see issue 13): after {@code kill -9} that gives no loss
 * and no duplicate, where a durable acked consumer redelivered. Ordered consumers are ephemeral; nothing is left on
 * the server when a subscriber dies.
 *
 * <p>The connection reconnects forever on its own ({@code maxReconnects(-1)}); a publish while the server is away
 * fails with {@link SyncBusException} after {@code timeout}, and the caller decides (the rank's publisher then
 * re-announces). Thread-safe. Each subscription delivers on its own dispatcher thread.
 */
public final class JetStreamSyncBus implements SyncBus {
    private static final System.Logger LOG = System.getLogger(JetStreamSyncBus.class.getName());
    private static final java.util.concurrent.ThreadFactory RESUBSCRIBERS =
            dev.kvtier.concurrent.KvTierThreads.factory("jetstream-resubscribe");

    private final String url;
    private final String streamName;
    private final String eventSubject;
    private final String controlSubject;
    private final String subjectPrefix;
    private final long retainedMessages;
    private final Duration timeout;
    private final java.util.List<ResumingSubscription> liveSubscriptions =
            new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Connection connection;
    private final JetStream jetStream;
    private final JetStreamManagement management;

    /**
     * Connects to {@code url} and creates the stream {@code streamName} (or uses it if it exists) with subjects under
     * {@code subjectPrefix}, keeping the newest {@code retainedMessages} messages. An existing stream is updated to
     * this retention: every participant of one cluster should pass the same value.
     *
     * @throws IllegalArgumentException if {@code retainedMessages < 1} or a name is blank
     * @throws SyncBusException naming the url and stream when the server cannot be reached within {@code timeout}
     *     or refuses the stream (e.g. JetStream not enabled: start it with {@code -js})
     */
    public JetStreamSyncBus(String url, String streamName, String subjectPrefix, long retainedMessages,
            Duration timeout) {
        if (retainedMessages < 1) {
            throw new IllegalArgumentException("retainedMessages must be >= 1, got " + retainedMessages);
        }
        if (streamName == null || streamName.isBlank() || subjectPrefix == null || subjectPrefix.isBlank()) {
            throw new IllegalArgumentException("streamName and subjectPrefix must not be blank, got '" + streamName
                    + "' and '" + subjectPrefix + "'");
        }
        this.url = url;
        this.streamName = streamName;
        this.subjectPrefix = subjectPrefix;
        this.retainedMessages = retainedMessages;
        this.timeout = timeout;
        this.eventSubject = subjectPrefix + ".events";
        this.controlSubject = subjectPrefix + ".control";
        Options options = new Options.Builder().server(url).connectionTimeout(timeout).maxReconnects(-1)
                .reconnectWait(Duration.ofMillis(100)).connectionName("kvtier").errorListener(new QuietErrors())
                .connectionListener(this::connectionEvent)
                .build();
        Connection opened = null;
        try {
            // Retries the first connect like a reconnect: a process started while the server restarts still comes up.
            opened = Nats.connectReconnectOnConnect(options);
            this.connection = opened;
            this.jetStream = connection.jetStream(io.nats.client.JetStreamOptions.builder()
                    .requestTimeout(timeout).build());
            this.management = connection.jetStreamManagement();
            ensureStreamWithin(timeout.multipliedBy(3));
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            closeQuietly(opened);
            throw new SyncBusException("cannot open " + describe() + ": " + e.getMessage()
                    + " (is nats-server running with -js at that address?)", e);
        } catch (InterruptedException e) {
            closeQuietly(opened);
            Thread.currentThread().interrupt();
            throw new SyncBusException("interrupted while connecting to " + describe(), e);
        }
    }

    private static void closeQuietly(Connection connection) {
        if (connection != null) {
            try {
                connection.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The server may be (re)starting: retry the stream set-up until {@code limit}, then give the last failure. */
    private void ensureStreamWithin(Duration limit) throws IOException, JetStreamApiException, InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        for (int attempt = 0; ; attempt++) {
            try {
                ensureStream(retainedMessages);
                return;
            } catch (IOException | JetStreamApiException | IllegalStateException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                TimeUnit.MILLISECONDS.sleep(Math.min(200, 10L << Math.min(attempt, 5))); // retry pacing
            }
        }
    }

    private void ensureStream(long retainedMessages) throws IOException, JetStreamApiException {
        StreamConfiguration config = StreamConfiguration.builder().name(streamName).subjects(eventSubject)
                .storageType(StorageType.File).maxMessages(retainedMessages).discardPolicy(DiscardPolicy.Old)
                .build();
        try {
            management.getStreamInfo(streamName);
            management.updateStream(config);
        } catch (JetStreamApiException notFound) {
            if (notFound.getErrorCode() != 404) {
                throw notFound;
            }
            management.addStream(config);
        }
    }

    /** Ordered consumers are ephemeral: a restarted server has none, so each subscription opens a new one. */
    private void connectionEvent(Connection conn, io.nats.client.ConnectionListener.Events event) {
        if (event == io.nats.client.ConnectionListener.Events.RECONNECTED) {
            for (ResumingSubscription subscription : liveSubscriptions) {
                // Not on the client's event thread: opening a consumer waits for the server's answer.
                RESUBSCRIBERS.newThread(subscription::reopen).start();
            }
        }
    }

    /** A new, independent connection to the same server and stream (another process's view of it). */
    public JetStreamSyncBus reconnect() {
        return new JetStreamSyncBus(url, streamName, subjectPrefix, retainedMessages, timeout);
    }

    @Override
    public long publish(byte[] message) {
        try {
            return jetStream.publish(eventSubject, message).getSeqno();
        } catch (IOException | JetStreamApiException e) {
            throw new SyncBusException("publish to " + describe() + " failed: " + e.getMessage(), e);
        } catch (IllegalStateException e) {
            throw new SyncBusException("publish to " + describe() + " failed: " + e.getMessage(), e);
        }
    }

    private StreamState state() {
        try {
            return management.getStreamInfo(streamName).getStreamState();
        } catch (IOException | JetStreamApiException e) {
            throw new SyncBusException("cannot read the state of " + describe() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public long firstSequence() {
        StreamState state = state();
        return state.getMsgCount() == 0 ? state.getLastSequence() + 1 : state.getFirstSequence();
    }

    @Override
    public long lastSequence() {
        return state().getLastSequence();
    }

    @Override
    public Subscription subscribe(long fromSequence, EventHandler handler) {
        if (fromSequence < 1) {
            throw new IllegalArgumentException("fromSequence must be >= 1, got " + fromSequence);
        }
        ResumingSubscription subscription = new ResumingSubscription(fromSequence - 1, handler);
        subscription.open();
        liveSubscriptions.add(subscription);
        return subscription;
    }

    /**
     * An ordered consumer that keeps the last stream sequence it delivered and, after the connection comes back (the
     * server may have restarted and forgotten the ephemeral consumer), opens a new one right after it. Deliveries at
     * or below that sequence (an old consumer's last messages) are dropped, so each message is delivered once.
     */
    private final class ResumingSubscription implements Subscription {
        private final EventHandler handler;
        private final Object lock = new Object();
        private long lastDelivered; // guarded by lock
        private Dispatcher dispatcher; // guarded by lock
        private boolean closed; // guarded by lock

        ResumingSubscription(long lastDelivered, EventHandler handler) {
            this.lastDelivered = lastDelivered;
            this.handler = handler;
        }

        void open() {
            synchronized (lock) {
                if (closed) {
                    return;
                }
                Dispatcher created = connection.createDispatcher();
                PushSubscribeOptions options = PushSubscribeOptions.builder().stream(streamName).ordered(true)
                        .configuration(ConsumerConfiguration.builder().deliverPolicy(DeliverPolicy.ByStartSequence)
                                .startSequence(lastDelivered + 1).build())
                        .build();
                try {
                    jetStream.subscribe(eventSubject, created, this::deliver, false, options);
                } catch (IOException | JetStreamApiException | IllegalStateException e) {
                    closeDispatcher(created);
                    throw new SyncBusException("cannot subscribe to " + describe() + " from sequence "
                            + (lastDelivered + 1) + ": " + e.getMessage(), e);
                }
                dispatcher = created;
            }
        }

        /** After a reconnect: a fresh consumer from the sequence after the last delivered one. */
        void reopen() {
            synchronized (lock) {
                if (closed) {
                    return;
                }
                closeDispatcher(dispatcher);
                dispatcher = null;
            }
            for (int attempt = 0; ; attempt++) {
                try {
                    open();
                    return;
                } catch (SyncBusException e) {
                    if (attempt >= 50 || connection.getStatus() == Connection.Status.CLOSED) {
                        LOG.log(System.Logger.Level.WARNING, "gave up resubscribing: " + e.getMessage());
                        return;
                    }
                    try {
                        TimeUnit.MILLISECONDS.sleep(100); // retry pacing while the server finishes starting
                    } catch (InterruptedException interrupted) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }
        }

        private void deliver(Message message) {
            if (!message.isJetStream()) {
                return; // flow control and heartbeats are handled by the client; nothing else is ours
            }
            long sequence = message.metaData().streamSequence();
            synchronized (lock) {
                if (closed || sequence <= lastDelivered) {
                    return;
                }
                lastDelivered = sequence;
            }
            try {
                handler.onMessage(sequence, message.getData());
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "event handler failed on stream sequence " + sequence + " of "
                        + describe() + "; delivery goes on", e);
            }
        }

        private void closeDispatcher(Dispatcher toClose) {
            if (toClose == null) {
                return;
            }
            try {
                connection.closeDispatcher(toClose);
            } catch (IllegalStateException | IllegalArgumentException gone) {
                LOG.log(System.Logger.Level.DEBUG, "closing a dispatcher of a closed connection", gone);
            }
        }

        @Override
        public void close() {
            liveSubscriptions.remove(this);
            synchronized (lock) {
                if (closed) {
                    return;
                }
                closed = true;
                closeDispatcher(dispatcher);
                dispatcher = null;
            }
        }
    }

    @Override
    public void sendControl(byte[] message) {
        try {
            connection.publish(controlSubject, message);
        } catch (IllegalStateException e) {
            throw new SyncBusException("control message to " + describe() + " failed: " + e.getMessage(), e);
        }
    }

    @Override
    public Subscription subscribeControl(ControlHandler handler) {
        Dispatcher dispatcher = connection.createDispatcher(message -> {
            try {
                handler.onControl(message.getData());
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "control handler failed on " + describe()
                        + "; delivery goes on", e);
            }
        });
        dispatcher.subscribe(controlSubject);
        // Make sure the server knows the interest before the caller goes on to rely on it.
        try {
            connection.flush(Duration.ofSeconds(5));
        } catch (Exception e) {
            LOG.log(System.Logger.Level.DEBUG, "flush after control subscribe failed", e);
        }
        return closeOnce(() -> connection.closeDispatcher(dispatcher));
    }

    /** Subscriptions close idempotently; the client refuses to close a dispatcher twice. */
    private static Subscription closeOnce(Runnable close) {
        java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
        return () -> {
            if (closed.compareAndSet(false, true)) {
                try {
                    close.run();
                } catch (IllegalStateException | IllegalArgumentException connectionGone) {
                    LOG.log(System.Logger.Level.DEBUG, "closing a subscription of a closed connection", connectionGone);
                }
            }
        };
    }

    @Override
    public String describe() {
        return "jetstream " + url + " stream " + streamName;
    }

    @Override
    public void close() {
        try {
            connection.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The client's default listener prints every reconnect attempt to stderr; ours logs them at DEBUG. */
    private static final class QuietErrors implements io.nats.client.ErrorListener {
        @Override
        public void errorOccurred(Connection conn, String error) {
            LOG.log(System.Logger.Level.DEBUG, "nats: " + error);
        }

        @Override
        public void exceptionOccurred(Connection conn, Exception exp) {
            LOG.log(System.Logger.Level.DEBUG, "nats: " + exp);
        }
    }
}
