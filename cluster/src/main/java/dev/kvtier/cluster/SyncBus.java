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
    /** What {@link EventHandler#onMessage(long, byte[], int)} gets when the bus cannot say which rank sent a message. */
    int UNKNOWN_SENDER = -1;

    /** Receives event-stream messages; called on the subscription's one delivery thread, in sequence order. */
    @FunctionalInterface
    interface EventHandler {
        /**
         * {@code payload} is the handler's own copy; an exception thrown here is logged and delivery goes on.
         *
         * @param streamSequence the message's stream sequence, above every one delivered before on this subscription
         * @param payload        the message's bytes as published
         */
        void onMessage(long streamSequence, byte[] payload);

        /**
         * {@link #onMessage(long, byte[])} for a bus that knows which rank sent the message (its subject carries the
         * rank, and the server lets a rank publish only on its own subject), or {@link #UNKNOWN_SENDER}. The default
         * ignores the sender.
         *
         * @param streamSequence the message's stream sequence, above every one delivered before on this subscription
         * @param payload        the message's bytes as published, the handler's own copy
         * @param senderRank     the rank whose subject the message was published on, or {@link #UNKNOWN_SENDER}
         */
        default void onMessage(long streamSequence, byte[] payload, int senderRank) {
            onMessage(streamSequence, payload);
        }

        /**
         * The stream was recreated (an empty store after a server restart, or deleted and created again): its
         * numbering starts over, and nothing delivered before describes what the new stream holds. The subscription
         * goes on from the new stream's first message; what follows this call is the new stream. Called on a thread
         * of the bus, never while {@link #onMessage} runs. The default does nothing.
         *
         * @param streamIdentity the new stream's {@link SyncBus#streamIdentity()}
         */
        default void onStreamRecreated(String streamIdentity) {
        }

        /**
         * Whether the subscription is receiving: {@code false} while it cannot be reopened (server away, stream
         * missing), so that the receiver can say its view may be stale; {@code true} once it is live again. The
         * default does nothing.
         *
         * @param live whether messages are being received again ({@code true}) or not any more ({@code false})
         */
        default void onSubscriptionLive(boolean live) {
        }
    }

    /** Receives control-channel messages on the subscription's delivery thread. */
    @FunctionalInterface
    interface ControlHandler {
        /**
         * {@code payload} is the handler's own copy; an exception thrown here is logged and delivery goes on.
         *
         * @param payload the control message's bytes as sent ({@link WireFormat}), not yet checked
         */
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
     * @param message the bytes to append (a {@link WireFormat} message); not kept after the call
     * @return its stream sequence ({@code >= 1}, one more than the previous message's)
     * @throws SyncBusException when the bus is closed, unreachable or refuses the message (e.g. larger than it takes)
     */
    long publish(byte[] message);

    /**
     * Appends {@code message} without waiting for the bus to hold it: messages published by one thread are stored in
     * the order of the calls, unless one fails (then later ones may or may not be stored: resend from the first that
     * failed). The future completes with the stream sequence, or fails with {@link SyncBusException}; it never
     * throws here. The default publishes synchronously.
     *
     * @param message the bytes to append; the caller must not change them until the future completes
     * @return a future of the message's stream sequence
     */
    default java.util.concurrent.CompletableFuture<Long> publishAsync(byte[] message) {
        try {
            return java.util.concurrent.CompletableFuture.completedFuture(publish(message));
        } catch (RuntimeException e) {
            return java.util.concurrent.CompletableFuture.failedFuture(e);
        }
    }

    /**
     * The largest message this bus takes, at most {@link WireFormat#MAX_MESSAGE_BYTES}: for JetStream the server's
     * {@code max_payload} as read at connect. Publishers split their messages to fit.
     *
     * @return the limit in bytes, positive
     */
    default int maxMessageBytes() {
        return WireFormat.MAX_MESSAGE_BYTES;
    }

    /**
     * What identifies the stream itself, beyond its name: it changes when the stream is recreated (for JetStream
     * its creation time), so that a consumer holding a position or a snapshot can tell that they refer to another
     * stream. Never null.
     *
     * @return an opaque text, equal for the same stream and different once it is recreated
     */
    String streamIdentity();

    /**
     * The sequence of the oldest retained message; {@code lastSequence() + 1} when none is retained.
     *
     * @return a stream sequence, {@code >= 1}
     */
    long firstSequence();

    /**
     * The sequence of the newest message published; 0 when none was ever published.
     *
     * @return a stream sequence, {@code >= 0}
     */
    long lastSequence();

    /**
     * Delivers every retained message with sequence {@code >= fromSequence}, then every new one, in order.
     *
     * @param fromSequence the first stream sequence wanted, {@code >= 1}; older ones already dropped are skipped
     * @param handler      called on the subscription's one delivery thread
     * @return the subscription, owned by the caller (close it to stop delivery)
     * @throws IllegalArgumentException if {@code fromSequence < 1}
     */
    Subscription subscribe(long fromSequence, EventHandler handler);

    /**
     * Sends {@code message} to the current control subscribers (all of them, this process's own included).
     *
     * @param message the bytes to send (a {@link WireFormat} control message); not kept after the call
     * @throws SyncBusException when the bus cannot send it (for JetStream: the connection is closed or refuses it)
     */
    void sendControl(byte[] message);

    /**
     * Delivers control messages sent from now on.
     *
     * @param handler called on the subscription's delivery thread for each control message
     * @return the subscription, owned by the caller (close it to stop delivery)
     */
    Subscription subscribeControl(ControlHandler handler);

    /**
     * A short human-readable name for logs and error messages, e.g. {@code jetstream nats://127.0.0.1:4222 KVTIER}.
     *
     * @return the name, never null
     */
    String describe();


    /** Stops every subscription and releases the connection; idempotent. */
    @Override
    void close();
}
