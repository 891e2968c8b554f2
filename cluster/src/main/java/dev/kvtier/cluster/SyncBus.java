package dev.kvtier.cluster;

/**
 * Carries cache events between ranks and routers: an append-only, ordered <b>event stream</b> (every message gets the
 * next stream sequence, starting at 1; the bus keeps the most recent messages up to its retention and drops the
 * oldest) and a fire-and-forget <b>control channel</b> (resync requests, prefetch hints; not persisted, delivered only
 * to whoever listens at that moment).
 *
 * <p>Implementations: {@link InProcessSyncBus} (ranks in one JVM, no server) and {@link JetStreamSyncBus} (processes
 * and hosts, over a NATS JetStream stream). Both pass {@code SyncBusContract} in the tests; code above the bus
 * (publishers, the router) never knows which one it has.
 *
 * <p><b>Promises.</b> {@link #publish} returns only once the bus holds the message (for JetStream: the server
 * acknowledged it, so it survives a restart of the server with its store directory). A subscription delivers
 * messages in stream-sequence order, on one thread, each at most once; it starts at the first retained message with
 * sequence {@code >= fromSequence}, so a subscriber sees that retention dropped something by comparing the first
 * delivered sequence with the one it asked for. All methods are thread-safe.
 *
 * <p><b>Errors.</b> {@link SyncBusException} (unchecked) names the bus and the cause when the bus cannot be reached
 * or refuses a message; nothing is half-published (the message either has a sequence or it does not).
 */
public interface SyncBus extends AutoCloseable {

    /** Receives event-stream messages; called on the subscription's one delivery thread, in sequence order. */
    @FunctionalInterface
    interface EventHandler {
        /** {@code payload} is the handler's own copy; an exception thrown here is logged and delivery goes on. */
        void onMessage(long streamSequence, byte[] payload);
    }

    /** Receives control-channel messages on the subscription's delivery thread. */
    @FunctionalInterface
    interface ControlHandler {
        /** {@code payload} is the handler's own copy; an exception thrown here is logged and delivery goes on. */
        void onControl(byte[] payload);
    }

    /** A live subscription; {@link #close()} stops delivery (idempotent; a delivery in progress may finish). */
    interface Subscription extends AutoCloseable {
        @Override
        void close();
    }

    /**
     * Appends {@code message} to the event stream.
     *
     * @return its stream sequence ({@code >= 1}, one more than the previous message's)
     * @throws SyncBusException when the bus is closed, unreachable or refuses the message (e.g. larger than it takes)
     */
    long publish(byte[] message);

    /** The sequence of the oldest retained message; {@code lastSequence() + 1} when none is retained. */
    long firstSequence();

    /** The sequence of the newest message published; 0 when none was ever published. */
    long lastSequence();

    /**
     * Delivers every retained message with sequence {@code >= fromSequence}, then every new one, in order.
     *
     * @throws IllegalArgumentException if {@code fromSequence < 1}
     */
    Subscription subscribe(long fromSequence, EventHandler handler);

    /** Sends {@code message} to the current control subscribers (all of them, this process's own included). */
    void sendControl(byte[] message);

    /** Delivers control messages sent from now on. */
    Subscription subscribeControl(ControlHandler handler);

    /** A short human-readable name for logs and error messages, e.g. {@code jetstream nats://127.0.0.1:4222 KVTIER}. */
    String describe();

    /** Stops every subscription and releases the connection; idempotent. */
    @Override
    void close();
}
