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

    private final String url;
    private final String streamName;
    private final String eventSubject;
    private final String controlSubject;
    private final String subjectPrefix;
    private final long retainedMessages;
    private final Duration timeout;
    private final Connection connection;
    private final JetStream jetStream;
    private final JetStreamManagement management;

    /**
     * Connects to {@code url} and creates the stream {@code streamName} (or uses it if it exists) with subjects under
     * {@code subjectPrefix}, keeping the newest {@code retainedMessages} messages.
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
                .build();
        try {
            this.connection = Nats.connect(options);
            this.jetStream = connection.jetStream(io.nats.client.JetStreamOptions.builder()
                    .requestTimeout(timeout).build());
            this.management = connection.jetStreamManagement();
            ensureStream(retainedMessages);
        } catch (IOException | JetStreamApiException e) {
            throw new SyncBusException("cannot open " + describe() + ": " + e.getMessage()
                    + " (is nats-server running with -js at that address?)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SyncBusException("interrupted while connecting to " + describe(), e);
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
        Dispatcher dispatcher = connection.createDispatcher();
        PushSubscribeOptions options = PushSubscribeOptions.builder().stream(streamName).ordered(true)
                .configuration(ConsumerConfiguration.builder().deliverPolicy(DeliverPolicy.ByStartSequence)
                        .startSequence(fromSequence).build())
                .build();
        try {
            JetStreamSubscription subscription = jetStream.subscribe(eventSubject, dispatcher,
                    message -> deliver(message, handler), false, options);
            return closeOnce(() -> {
                try {
                    dispatcher.unsubscribe(subscription);
                } catch (IllegalStateException alreadyClosed) {
                    // the connection is closed: nothing is delivered any more anyway
                }
                connection.closeDispatcher(dispatcher);
            });
        } catch (IOException | JetStreamApiException e) {
            connection.closeDispatcher(dispatcher);
            throw new SyncBusException("cannot subscribe to " + describe() + " from sequence " + fromSequence
                    + ": " + e.getMessage(), e);
        }
    }

    private void deliver(Message message, EventHandler handler) {
        if (!message.isJetStream()) {
            return; // flow control and heartbeats are handled by the client; nothing else is ours
        }
        long sequence = message.metaData().streamSequence();
        try {
            handler.onMessage(sequence, message.getData());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "event handler failed on stream sequence " + sequence + " of "
                    + describe() + "; delivery goes on", e);
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
