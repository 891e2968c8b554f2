package dev.kvtier.store;

/**
 * The token positions {@code [start, end)} a KV segment covers. Positions never change when a
 * segment moves between tiers, so RoPE/ALiBi embeddings stay correct when it comes back.
 *
 * <p>Immutable and thread-safe.
 *
 * @param start first position, inclusive, {@code >= 0}
 * @param end   last position, exclusive, {@code >= start}
 */
public record PositionRange(long start, long end) {

    /**
     * Checks the bounds.
     *
     * @throws IllegalArgumentException if {@code start} is negative or {@code end < start}
     */
    public PositionRange {
        if (start < 0) {
            throw new IllegalArgumentException("start must be >= 0, was " + start);
        }
        if (end < start) {
            throw new IllegalArgumentException(
                    "end must be >= start, was end=" + end + " < start=" + start);
        }
    }

    /**
     * The range {@code [start, end)}.
     *
     * @param start the first position, inclusive, {@code >= 0}
     * @param end   the position after the last one, {@code >= start}
     * @return the range; empty when {@code start == end}
     * @throws IllegalArgumentException if {@code start} is negative or {@code end < start}
     */
    public static PositionRange of(long start, long end) {
        return new PositionRange(start, end);
    }

    /**
     * The number of positions, {@code end - start}.
     *
     * @return the number of positions, {@code >= 0}
     */
    public long length() {
        return end - start;
    }

    /** {@code [start, end)}, the notation used in the Javadoc. */
    @Override
    public String toString() {
        return "[" + start + ", " + end + ")";
    }
}
