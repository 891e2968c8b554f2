package dev.kvtier.store;

/**
 * A move the store has booked and the caller must now carry out: copy {@code sizeBytes} bytes of
 * segment {@code key} from tier {@code from} to tier {@code to}, keeping {@code positions} with the
 * data. If the bytes cannot be moved, hand this back to {@link TieredStore#rollback}.
 *
 * <p>Immutable and thread-safe.
 *
 * @param key       the segment's key
 * @param from      where the bytes are now
 * @param to        where they must go; never equal to {@code from}
 * @param sizeBytes how many bytes to move, {@code >= 0}
 * @param positions the segment's token positions, preserved by the move
 */
public record TierTransfer(String key, Tier from, Tier to, long sizeBytes, PositionRange positions) {

    /**
     * Checks the move is one the store can book.
     *
     * @throws IllegalArgumentException naming the argument for a null or blank key, a null tier or
     *                                  positions, {@code from == to} or a negative size
     */
    public TierTransfer {
        SegmentMeta.requireKey(key, "key");
        if (from == null) {
            throw new IllegalArgumentException("from must not be null");
        }
        if (to == null) {
            throw new IllegalArgumentException("to must not be null");
        }
        if (from == to) {
            throw new IllegalArgumentException("to must differ from from, both were " + from);
        }
        if (sizeBytes < 0) {
            throw new IllegalArgumentException("sizeBytes must be >= 0, was " + sizeBytes);
        }
        if (positions == null) {
            throw new IllegalArgumentException("positions must not be null");
        }
    }

    /**
     * Whether this moves the segment to a faster tier (a promotion) rather than a slower one.
     *
     * @return true when {@code to} is faster than {@code from}
     */
    public boolean isPromotion() {
        return to.isFasterThan(from);
    }
}
