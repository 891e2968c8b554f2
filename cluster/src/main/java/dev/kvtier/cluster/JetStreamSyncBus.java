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
import io.nats.client.api.StreamInfo;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.api.StreamState;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A {@link SyncBus} over NATS JetStream: the event stream is a file-backed JetStream stream with the subjects
 * {@code <prefix>.events.>} (a rank publishes on {@code <prefix>.events.<rank>}, anyone else on
 * {@code <prefix>.events.any}; stream sequences count over all subjects, so a jump still means retention dropped
 * something), retention {@code max_msgs} with discard-old; the control channel is plain NATS on {@code <prefix>.control}.
 *
 * <p>Subscriptions are <em>ordered push consumers</em> started at a given stream sequence: the subscriber keeps its own
 * last applied sequence and resumes after it. Measured here (see issue 13): after {@code kill -9} that gives no loss
 * and no duplicate, where a durable acked consumer redelivered. Ordered consumers are ephemeral; nothing is left on
 * the server when a subscriber dies.
 *
 * <p><b>A stream that goes away.</b> The connection reconnects forever on its own ({@code maxReconnects(-1)}). On every
 * reconnect, and every {@link #WATCH_INTERVAL} while connected, the bus makes sure the stream exists (creating it
 * when a server came back with an empty store or an operator deleted it) and reads its creation time, which is its
 * {@link #streamIdentity()}. A subscription that finds a new identity, or a stream that ends below what it has read,
 * tells its handler ({@link EventHandler#onStreamRecreated}) and starts over at the new stream's first message. A
 * subscription that cannot be reopened keeps being retried, never given up, and its handler hears
 * {@link EventHandler#onSubscriptionLive onSubscriptionLive(false)} meanwhile. A publish while the server or the
 * stream is away fails with {@link SyncBusException} after {@code timeout}, and the caller decides (the rank's
 * publisher retries, then re-announces).
 *
 * <p><b>Size.</b> {@link #maxMessageBytes()} is the server's {@code max_payload} read at connect (and at each
 * reconnect), at most {@link WireFormat#MAX_MESSAGE_BYTES}; a larger message is refused with
 * {@link SyncBusException#refused()} set, never an unchecked exception of the client.
 *
 * <p><b>Who may publish.</b> {@link Access} carries the credentials this connection presents (user and password, or a
 * JWT/nkey {@code .creds} file) and the rank it publishes as. With a server whose users may each publish only on their
 * own rank's subject (README, "The cluster"), the rank in the subject is authenticated, and subscribers hand it to
 * {@link EventHandler#onMessage(long, byte[], int)} so that a batch claiming another rank is refused.
 *
 * <p>Thread-safe. Each subscription delivers on its own dispatcher thread; the stream checks and resubscriptions run
 * on one daemon thread of the bus ({@code kvtier-jetstream-watch-*}).
 */
public final class JetStreamSyncBus implements SyncBus {
    private static final System.Logger LOG = System.getLogger(JetStreamSyncBus.class.getName());
    /** How often a connected bus checks that its stream exists and is the one its subscriptions read. */
    public static final Duration WATCH_INTERVAL = Duration.ofMillis(500);
    private static final int STREAM_NAME_IN_USE = 10058;

    /**
     * The credentials a connection presents and the rank it publishes as.
     *
     * @param user user name for user/password authentication, or {@code null}
     * @param password its password, or {@code null}
     * @param credentialsFile a NATS {@code .creds} file (JWT and nkey seed), or {@code null}
     * @param senderRank the rank whose subject this connection publishes on, or {@link SyncBus#UNKNOWN_SENDER}
     */
    public record Access(String user, String password, Path credentialsFile, int senderRank) {
        /**
         * Checks that at most one kind of credentials is given, whole.
         *
         * @throws IllegalArgumentException for a user without password or the reverse, both kinds, or a rank {@code < -1}
         */
        public Access {
            if ((user == null) != (password == null) || (user != null && credentialsFile != null)
                    || senderRank < UNKNOWN_SENDER) {
                throw new IllegalArgumentException("give a user with a password, or a credentials file, or neither;"
                        + " and a rank >= 0 or UNKNOWN_SENDER; got user " + user + ", credentials file "
                        + credentialsFile + ", rank " + senderRank);
            }
        }

        /**
         * No credentials; publishes as no particular rank.
         *
         * @return access that publishes on {@code <prefix>.events.any}, for routers and tools
         */
        public static Access anonymous() {
            return new Access(null, null, null, UNKNOWN_SENDER);
        }

        /**
         * No credentials; publishes on {@code rank}'s subject (a server without authorization trusts it).
         *
         * @param rank the rank to publish as, {@code >= 0} (or {@link SyncBus#UNKNOWN_SENDER})
         * @return access that publishes on {@code <prefix>.events.<rank>}
         * @throws IllegalArgumentException if {@code rank < -1}
         */
        public static Access asRank(int rank) {
            return new Access(null, null, null, rank);
        }

        /**
         * User and password; publishes on {@code senderRank}'s subject ({@link SyncBus#UNKNOWN_SENDER}: none).
         *
         * @param user       the NATS user name (null together with {@code password}: no credentials)
         * @param password   its password
         * @param senderRank the rank to publish as, {@code >= 0}, or {@link SyncBus#UNKNOWN_SENDER}
         * @return access presenting these credentials
         * @throws IllegalArgumentException if only one of {@code user} and {@code password} is null, or
         *                                  {@code senderRank < -1}
         */
        public static Access user(String user, String password, int senderRank) {
            return new Access(user, password, null, senderRank);
        }

        /**
         * A {@code .creds} file (JWT and nkey seed); publishes on {@code senderRank}'s subject.
         *
         * @param file       the credentials file, read by the NATS client at each connect; null gives no credentials
         * @param senderRank the rank to publish as, {@code >= 0}, or {@link SyncBus#UNKNOWN_SENDER}
         * @return access presenting this file
         * @throws IllegalArgumentException if {@code senderRank < -1}
         */
        public static Access credentialsFile(Path file, int senderRank) {
            return new Access(null, null, file, senderRank);
        }

        @Override
        public String toString() {
            return "Access[user=" + user + ", credentialsFile=" + credentialsFile + ", senderRank=" + senderRank + "]";
        }
    }

    private final String url;
    private final String streamName;
    private final String eventSubject;
    private final String subjectFilter;
    private final String controlSubject;
    private final String subjectPrefix;
    private final long retainedMessages;
    private final Duration timeout;
    private final Access access;
    private final java.util.List<ResumingSubscription> liveSubscriptions =
            new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Connection connection;
    private final JetStream jetStream;
    private final JetStreamManagement management;
    private final ScheduledThreadPoolExecutor watcher;
    private volatile int maxMessageBytes;
    private volatile String streamIdentity;
    private volatile boolean closed;

    /**
     * {@link #JetStreamSyncBus(String, String, String, long, Duration, Access)} with {@link Access#anonymous()}.
     *
     * @param url              the NATS server, e.g. {@code nats://127.0.0.1:4222}
     * @param streamName       the JetStream stream's name, not blank, e.g. {@code KVTIER}
     * @param subjectPrefix    the prefix of the event and control subjects, not blank, e.g. {@code kvtier}
     * @param retainedMessages the stream's {@code max_msgs}, {@code >= 1}: older messages are discarded
     * @param timeout          the bound on connecting, each publish's acknowledgement and each stream request
     * @throws IllegalArgumentException if {@code retainedMessages < 1} or a name is blank
     * @throws SyncBusException naming the url and stream when the server cannot be reached or refuses the stream
     */
    public JetStreamSyncBus(String url, String streamName, String subjectPrefix, long retainedMessages,
            Duration timeout) {
        this(url, streamName, subjectPrefix, retainedMessages, timeout, Access.anonymous());
    }

    /**
     * Connects to {@code url} presenting {@code access}'s credentials and creates the stream {@code streamName} (or
     * uses it if it exists) with subjects under {@code subjectPrefix}, keeping the newest {@code retainedMessages}
     * messages. An existing stream is updated to this retention: every participant of one cluster should pass the
     * same value. Without credentials the first connect is retried like a reconnect (a process started while the
     * server restarts still comes up); with credentials it is tried once, so that refused credentials fail at once.
     *
     * @param url              the NATS server, e.g. {@code nats://127.0.0.1:4222}
     * @param streamName       the JetStream stream's name, not blank, e.g. {@code KVTIER}
     * @param subjectPrefix    the prefix of the event and control subjects, not blank, e.g. {@code kvtier}
     * @param retainedMessages the stream's {@code max_msgs}, {@code >= 1}: older messages are discarded
     * @param timeout          the bound on connecting, each publish's acknowledgement and each stream request
     * @param access           the credentials to present and the rank to publish as
     * @throws IllegalArgumentException if {@code retainedMessages < 1} or a name is blank
     * @throws SyncBusException naming the url and stream when the server cannot be reached within {@code timeout},
     *     refuses the credentials, or refuses the stream (e.g. JetStream not enabled: start it with {@code -js})
     */
    public JetStreamSyncBus(String url, String streamName, String subjectPrefix, long retainedMessages,
            Duration timeout, Access access) {
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
        this.access = access;
        this.eventSubject = subjectPrefix + ".events." + (access.senderRank() == UNKNOWN_SENDER ? "any"
                : Integer.toString(access.senderRank()));
        this.subjectFilter = subjectPrefix + ".events.>";
        this.controlSubject = subjectPrefix + ".control";
        Options.Builder builder = new Options.Builder().server(url).connectionTimeout(timeout).maxReconnects(-1)
                .reconnectWait(Duration.ofMillis(100)).connectionName("kvtier").errorListener(new QuietErrors())
                .connectionListener(this::connectionEvent);
        if (access.user() != null) {
            builder.userInfo(access.user(), access.password());
        } else if (access.credentialsFile() != null) {
            builder.credentialPath(access.credentialsFile().toString());
        }
        Connection opened = null;
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1,
                dev.kvtier.concurrent.KvTierThreads.factory("jetstream-watch"));
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.watcher = executor;
        try {
            // Retries the first connect like a reconnect: a process started while the server restarts still comes up.
            opened = access.user() == null && access.credentialsFile() == null
                    ? Nats.connectReconnectOnConnect(builder.build()) : Nats.connect(builder.build());
            this.connection = opened;
            this.jetStream = connection.jetStream(io.nats.client.JetStreamOptions.builder()
                    .requestTimeout(timeout).build());
            this.management = connection.jetStreamManagement();
            readServerLimits();
            this.streamIdentity = identityOf(ensureStreamWithin(timeout.multipliedBy(3)));
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            closeQuietly(opened);
            executor.shutdownNow();
            throw new SyncBusException("cannot open " + describe() + " as " + access + ": " + e.getMessage()
                    + " (is nats-server running with -js at that address, and are the credentials right?)", e);
        } catch (InterruptedException e) {
            closeQuietly(opened);
            executor.shutdownNow();
            Thread.currentThread().interrupt();
            throw new SyncBusException("interrupted while connecting to " + describe(), e);
        }
        long every = WATCH_INTERVAL.toNanos();
        watcher.scheduleWithFixedDelay(this::watchStream, every, every, TimeUnit.NANOSECONDS);
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

    private void readServerLimits() {
        io.nats.client.api.ServerInfo info = connection.getServerInfo();
        long payload = info == null ? WireFormat.MAX_MESSAGE_BYTES : info.getMaxPayload();
        maxMessageBytes = (int) Math.min(WireFormat.MAX_MESSAGE_BYTES, payload <= 0 ? Long.MAX_VALUE : payload);
    }

    /** The server may be (re)starting: retry the stream set-up until {@code limit}, then give the last failure. */
    private StreamInfo ensureStreamWithin(Duration limit)
            throws IOException, JetStreamApiException, InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        for (int attempt = 0; ; attempt++) {
            try {
                return ensureStream(true, System.Logger.Level.DEBUG);
            } catch (IOException | JetStreamApiException | IllegalStateException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                TimeUnit.MILLISECONDS.sleep(Math.min(200, 10L << Math.min(attempt, 5))); // retry pacing
            }
        }
    }

    /**
     * The stream as it is now, created if missing (said at {@code createdLevel}: news when it was there before);
     * its configuration is set to ours when {@code update}.
     */
    private StreamInfo ensureStream(boolean update, System.Logger.Level createdLevel)
            throws IOException, JetStreamApiException {
        StreamConfiguration config = StreamConfiguration.builder().name(streamName).subjects(subjectFilter)
                .storageType(StorageType.File).maxMessages(retainedMessages).discardPolicy(DiscardPolicy.Old)
                .build();
        try {
            StreamInfo info = management.getStreamInfo(streamName);
            return update ? management.updateStream(config) : info;
        } catch (JetStreamApiException notFound) {
            if (notFound.getErrorCode() != 404) {
                throw notFound;
            }
        }
        try {
            StreamInfo created = management.addStream(config);
            LOG.log(createdLevel, describe() + " did not exist (a server with an empty store, or deleted, or never"
                    + " created): created it");
            return created;
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() != STREAM_NAME_IN_USE) {
                throw e;
            }
            return management.getStreamInfo(streamName); // another participant created it first
        }
    }

    private static String identityOf(StreamInfo info) {
        return info.getConfiguration().getName() + "@" + info.getCreateTime().toInstant();
    }

    /**
     * On the watch thread: the stream exists (created if not), and every subscription reads the current one and is
     * open; a subscription that is not is reopened (retried here at each round, never given up).
     */
    private void watchStream() {
        if (closed || connection.getStatus() != Connection.Status.CONNECTED) {
            return;
        }
        // What each subscription had read before the stream is looked at: deliveries go on meanwhile, and a stream
        // that ends below what was read before looking at it has been recreated.
        java.util.List<ResumingSubscription> subscriptions = java.util.List.copyOf(liveSubscriptions);
        long[] readBefore = new long[subscriptions.size()];
        for (int i = 0; i < readBefore.length; i++) {
            readBefore[i] = subscriptions.get(i).lastDelivered();
        }
        StreamInfo info;
        try {
            info = ensureStream(false, System.Logger.Level.WARNING);
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "stream check of " + describe() + " failed (will retry): " + e);
            return;
        }
        String identity = identityOf(info);
        streamIdentity = identity;
        long last = info.getStreamState().getLastSequence();
        for (int i = 0; i < readBefore.length; i++) {
            subscriptions.get(i).check(identity, last, readBefore[i]);
        }
    }

    /**
     * Ordered consumers are ephemeral: a restarted server has none, so each subscription opens a new one (after the
     * stream is made sure of, on the watch thread: opening a consumer waits for the server's answer).
     */
    private void connectionEvent(Connection conn, io.nats.client.ConnectionListener.Events event) {
        if (event == io.nats.client.ConnectionListener.Events.DISCONNECTED) {
            for (ResumingSubscription subscription : liveSubscriptions) {
                subscription.markDown();
            }
        } else if (event == io.nats.client.ConnectionListener.Events.RECONNECTED && !closed) {
            try {
                watcher.execute(this::afterReconnect);
            } catch (java.util.concurrent.RejectedExecutionException closing) {
                // closed meanwhile
            }
        }
    }

    private void afterReconnect() {
        readServerLimits();
        try {
            streamIdentity = identityOf(ensureStream(true, System.Logger.Level.WARNING));
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "after reconnecting, " + describe() + " could not be made sure of"
                    + " (retried every " + WATCH_INTERVAL.toMillis() + " ms): " + e.getMessage());
        }
        for (ResumingSubscription subscription : liveSubscriptions) {
            subscription.markDown(); // the server's ordered consumer is gone or going: open a fresh one now
        }
        watchStream();
    }

    /**
     * A new, independent connection to the same server and stream with the same access (another process's view).
     *
     * @return a new bus, owned by the caller (close it); this one stays open
     * @throws SyncBusException as the constructor does
     */
    public JetStreamSyncBus reconnect() {

        return new JetStreamSyncBus(url, streamName, subjectPrefix, retainedMessages, timeout, access);
    }

    @Override
    public long publish(byte[] message) {
        requireFits(message);
        try {
            return jetStream.publish(eventSubject, message).getSeqno();
        } catch (IOException | JetStreamApiException | IllegalStateException e) {
            throw failure("publish", e);
        } catch (IllegalArgumentException e) {
            throw new SyncBusException("publish to " + describe() + " refused: " + e.getMessage(), e, true);
        }
    }

    @Override
    public java.util.concurrent.CompletableFuture<Long> publishAsync(byte[] message) {
        try {
            requireFits(message);
            return jetStream.publishAsync(eventSubject, message)
                    .orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS)
                    .handle((ack, e) -> {
                        if (e == null) {
                            return ack.getSeqno();
                        }
                        Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                                ? e.getCause() : e;
                        throw failure("publish", cause);
                    });
        } catch (SyncBusException e) {
            return java.util.concurrent.CompletableFuture.failedFuture(e);
        } catch (IllegalArgumentException e) {
            return java.util.concurrent.CompletableFuture.failedFuture(
                    new SyncBusException("publish to " + describe() + " refused: " + e.getMessage(), e, true));
        } catch (RuntimeException e) {
            return java.util.concurrent.CompletableFuture.failedFuture(failure("publish", e));
        }
    }

    /** The one translator of the client's failures: refusals (the server will never take it) apart from the rest. */
    private SyncBusException failure(String what, Throwable e) {
        if (e instanceof SyncBusException known) {
            return known;
        }
        boolean refused = e instanceof IllegalArgumentException;
        return new SyncBusException(what + " to " + describe() + (refused ? " refused: " : " failed: ")
                + (e instanceof java.util.concurrent.TimeoutException ? "no acknowledgement within " + timeout
                : e.getMessage()), e, refused);
    }

    private void requireFits(byte[] message) {
        int limit = maxMessageBytes;
        if (message.length > limit) {
            throw new SyncBusException("publish to " + describe() + " refused: " + message.length
                    + " bytes is more than the server takes (max_payload " + limit + " bytes); split it", null, true);
        }
    }

    @Override
    public int maxMessageBytes() {
        return maxMessageBytes;
    }

    @Override
    public String streamIdentity() {
        return streamIdentity;
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
        ResumingSubscription subscription = new ResumingSubscription(fromSequence - 1, handler, streamIdentity);
        subscription.open();
        liveSubscriptions.add(subscription);
        return subscription;
    }

    /** The rank a subject {@code <prefix>.events.<rank>} carries, else {@link SyncBus#UNKNOWN_SENDER}. */
    private int senderOf(String subject) {
        int dot = subject.lastIndexOf('.');
        String last = subject.substring(dot + 1);
        if (last.isEmpty() || last.length() > 4 || !last.chars().allMatch(Character::isDigit)) {
            return UNKNOWN_SENDER;
        }
        return Integer.parseInt(last);
    }

    /**
     * An ordered consumer that keeps the last stream sequence it delivered and, after the connection comes back (the
     * server may have restarted and forgotten the ephemeral consumer), opens a new one right after it. Deliveries at
     * or below that sequence (an old consumer's last messages), or from a consumer already replaced, are dropped, so
     * each message is delivered once. A recreated stream starts it over at 1 after telling the handler.
     */
    private final class ResumingSubscription implements Subscription {
        private final EventHandler handler;
        /** Guards the consumer's life: the dispatcher, opening and closing. Never taken while delivering. */
        private final Object lock = new Object();
        private Dispatcher dispatcher; // guarded by lock
        private boolean down; // guarded by lock: the consumer must be reopened
        /** Guards what deliveries see; held while the handler runs, so a restart never overlaps a delivery. */
        private final Object deliveryLock = new Object();
        private long lastDelivered; // guarded by deliveryLock
        private long generation; // guarded by deliveryLock: which consumer may deliver
        private String identity; // guarded by deliveryLock
        private boolean told; // guarded by deliveryLock: the handler heard the subscription is down
        private volatile boolean closed;

        ResumingSubscription(long lastDelivered, EventHandler handler, String identity) {
            this.lastDelivered = lastDelivered;
            this.handler = handler;
            this.identity = identity;
        }

        void open() {
            synchronized (lock) {
                if (closed) {
                    return;
                }
                long consumer;
                long from;
                synchronized (deliveryLock) {
                    consumer = ++generation;
                    from = lastDelivered + 1;
                }
                Dispatcher created = connection.createDispatcher();
                PushSubscribeOptions options = PushSubscribeOptions.builder().stream(streamName).ordered(true)
                        .configuration(ConsumerConfiguration.builder().deliverPolicy(DeliverPolicy.ByStartSequence)
                                .startSequence(from).build())
                        .build();
                try {
                    jetStream.subscribe(subjectFilter, created, message -> deliver(consumer, message), false,
                            options);
                } catch (IOException | JetStreamApiException | IllegalStateException e) {
                    closeDispatcher(created);
                    down = true;
                    throw new SyncBusException("cannot subscribe to " + describe() + " from sequence " + from + ": "
                            + e.getMessage(), e);
                }
                dispatcher = created;
                down = false;
            }
            synchronized (deliveryLock) {
                if (told) {
                    told = false;
                    LOG.log(System.Logger.Level.INFO, "subscription to " + describe() + " is live again from"
                            + " sequence " + (lastDelivered + 1));
                    handler.onSubscriptionLive(true);
                }
            }
        }

        /**
         * The connection dropped, or came back without the server's consumer: the consumer must be reopened, and the
         * handler hears that nothing is received meanwhile.
         */
        void markDown() {
            synchronized (lock) {
                down = true;
            }
            tellDown("the connection to the server dropped");
        }

        private void tellDown(String why) {
            synchronized (deliveryLock) {
                if (!told && !closed) {
                    told = true;
                    LOG.log(System.Logger.Level.WARNING, "not receiving from " + describe() + ": " + why
                            + " (resubscribing every " + WATCH_INTERVAL.toMillis() + " ms, never giving up)");
                    handler.onSubscriptionLive(false);
                }
            }
        }

        long lastDelivered() {
            synchronized (deliveryLock) {
                return lastDelivered;
            }
        }

        /**
         * On the watch thread: start over on a recreated stream (another identity, or one ending below what this
         * subscription had read before the stream was looked at), or reopen a consumer that is down.
         */
        void check(String currentIdentity, long streamLastSequence, long readBefore) {
            if (closed) {
                return;
            }
            boolean recreated;
            synchronized (deliveryLock) {
                recreated = !currentIdentity.equals(identity) || streamLastSequence < readBefore;
            }
            boolean reopen;
            synchronized (lock) {
                reopen = down || recreated;
                if (reopen) {
                    closeDispatcher(dispatcher);
                    dispatcher = null;
                    down = true;
                }
            }
            if (!reopen) {
                return;
            }
            synchronized (deliveryLock) {
                generation++; // whatever the old consumer still delivers is dropped
                if (recreated) {
                    LOG.log(System.Logger.Level.WARNING, describe() + " was recreated (" + identity + " -> "
                            + currentIdentity + ", now ending at " + streamLastSequence + ", read up to "
                            + lastDelivered + "): starting over at its first message");
                    identity = currentIdentity;
                    lastDelivered = 0;
                    handler.onStreamRecreated(currentIdentity);
                }
            }
            try {
                open();
            } catch (SyncBusException e) {
                tellDown("cannot resubscribe: " + e.getMessage());
            }
        }

        private void deliver(long consumer, Message message) {
            if (!message.isJetStream()) {
                return; // flow control and heartbeats are handled by the client; nothing else is ours
            }
            long sequence = message.metaData().streamSequence();
            synchronized (deliveryLock) {
                if (closed || consumer != generation || sequence <= lastDelivered) {
                    return;
                }
                lastDelivered = sequence;
                try {
                    handler.onMessage(sequence, message.getData(), senderOf(message.getSubject()));
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "event handler failed on stream sequence " + sequence + " of "
                            + describe() + "; delivery goes on", e);
                }
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
        } catch (IllegalStateException | IllegalArgumentException e) {
            throw failure("control message", e);
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
        closed = true;
        dev.kvtier.concurrent.KvTierThreads.shutdownAndAwait(watcher);
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
