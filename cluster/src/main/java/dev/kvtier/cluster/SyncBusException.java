package dev.kvtier.cluster;

/**
 * A {@link SyncBus} could not do what was asked (unreachable, closed, message refused); the message names the bus.
 * {@link #refused()} tells a message the bus will never take (too large for it) from a failure worth retrying.
 */
public final class SyncBusException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Whether the bus will never take the message (serialized form of {@link #refused()}). */
    private final boolean refused;

    /**
     * With a message naming the bus and what failed, and the low-level cause (kept, may be null); worth retrying.
     *
     * @param message names the bus and what failed
     * @param cause   the low-level failure, or null
     */
    public SyncBusException(String message, Throwable cause) {
        this(message, cause, false);
    }

    /**
     * As {@link #SyncBusException(String, Throwable)}; {@code refused} when the bus will never take this message
     * (resending it cannot succeed).
     *
     * @param message names the bus and what failed
     * @param cause   the low-level failure, or null
     * @param refused whether resending the same message can never succeed
     */
    public SyncBusException(String message, Throwable cause, boolean refused) {
        super(message, cause);
        this.refused = refused;
    }

    /**
     * Whether the bus refused the message itself (e.g. larger than the server's {@code max_payload}).
     *
     * @return {@code true} when resending cannot succeed; {@code false} for a failure worth retrying
     */
    public boolean refused() {

        return refused;
    }
}
