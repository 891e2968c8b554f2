package dev.kvtier.cluster;

/** A {@link SyncBus} could not do what was asked (unreachable, closed, message refused); the message names the bus. */
public final class SyncBusException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** With a message naming the bus and what failed, and the low-level cause (kept, may be null). */
    public SyncBusException(String message, Throwable cause) {
        super(message, cause);
    }
}
