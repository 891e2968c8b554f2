package dev.kvtier.cluster;

/**
 * A message {@link WireFormat} refuses. Receivers count it by {@link #reason()}, log it and skip it; the stream goes on.
 */
public final class MalformedMessageException extends Exception {
    private static final long serialVersionUID = 1L;

    /** Why a message was refused; each is counted separately by receivers. */
    public enum Reason {
        /** Shorter than its header, or than its header and body say. */
        TRUNCATED,
        /** Does not start with {@link WireFormat#MAGIC}: not a kvtier message at all. */
        BAD_MAGIC,
        /** A format version this build does not read. */
        BAD_VERSION,
        /** The CRC32C over the message does not match: bytes changed on the way. */
        BAD_CHECKSUM,
        /** Larger than {@link WireFormat#MAX_MESSAGE_BYTES}, or more items than a message may hold. */
        TOO_LARGE,
        /** An unknown message kind, event type or tier code, or bytes left over after the body. */
        BAD_STRUCTURE,
        /** A rank outside {@code [0, worldSize)}. */
        RANK_OUT_OF_RANGE,
        /** A layer outside {@code [0, numLayers)}. */
        LAYER_OUT_OF_RANGE,
        /** A negative epoch, sequence, position or token count. */
        NEGATIVE_VALUE,
        /**
         * An epoch further ahead of the receiver's clock than {@link ClusterState#MAX_EPOCH_AHEAD} (a well-formed
         * message that would otherwise make every later message of the rank look stale).
         */
        EPOCH_AHEAD,
        /** A rank batch whose rank is not the one the bus authenticated as its sender. */
        WRONG_SENDER
    }

    /** Why the message was refused (serialized form of {@link #reason()}). */
    private final Reason reason;

    MalformedMessageException(Reason reason, String detail) {
        super(reason + ": " + detail);
        this.reason = reason;
    }

    /**
     * Why the message was refused.
     *
     * @return the reason receivers count it under, never null
     */
    public Reason reason() {

        return reason;
    }
}
