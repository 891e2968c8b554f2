package dev.kvtier.store;

import java.util.Objects;

/**
 * An immutable snapshot of one segment's metadata: its key, token positions, size, the tier it
 * was on and how often it had been accessed when the snapshot was taken.
 *
 * <p>{@link #of} builds the metadata a caller hands to {@link TieredStore#register}; its tier and
 * access count are placeholders ({@link Tier#GPU}, 0) that registration replaces. Snapshots
 * returned by the store never change afterwards, even when the segment moves: ask the store
 * again for the current state. Thread-safe.
 */
public final class SegmentMeta {
    private final String key;
    private final PositionRange positions;
    private final long sizeBytes;
    private final Tier tier;
    private final long accessCount;

    private SegmentMeta(String key, PositionRange positions, long sizeBytes, Tier tier, long accessCount) {
        this.key = key;
        this.positions = positions;
        this.sizeBytes = sizeBytes;
        this.tier = tier;
        this.accessCount = accessCount;
    }

    /**
     * Metadata for a segment not yet registered (tier {@link Tier#GPU}, access count 0 until
     * {@link TieredStore#register} places it).
     *
     * @param key       unique non-blank key, e.g. {@code "turn-3"}
     * @param positions the token positions the segment covers
     * @param sizeBytes the segment's size, {@code >= 0}
     * @return the metadata, with tier GPU and access count 0
     * @throws IllegalArgumentException naming the argument if {@code key} is null or blank,
     *                                  {@code positions} is null or {@code sizeBytes} is negative
     */
    public static SegmentMeta of(String key, PositionRange positions, long sizeBytes) {
        requireKey(key, "key");
        if (positions == null) {
            throw new IllegalArgumentException("positions must not be null");
        }
        if (sizeBytes < 0) {
            throw new IllegalArgumentException("sizeBytes must be >= 0, was " + sizeBytes);
        }
        return new SegmentMeta(key, positions, sizeBytes, Tier.GPU, 0);
    }

    /**
     * The same not-yet-registered metadata with {@code accessCount} uses, which {@link TieredStore#register}
     * keeps: how a segment recovered from a persisted DISK tier comes back with the uses it had.
     *
     * @param accessCount the uses to keep, {@code >= 0}
     * @return a new metadata equal to this one but for its access count
     * @throws IllegalArgumentException if {@code accessCount} is negative
     */
    public SegmentMeta withAccessCount(long accessCount) {
        if (accessCount < 0) {
            throw new IllegalArgumentException("accessCount must be >= 0, was " + accessCount);
        }
        return new SegmentMeta(key, positions, sizeBytes, tier, accessCount);
    }

    /** A snapshot of a registered segment's state; arguments trusted (the store validated them). */
    static SegmentMeta placed(String key, PositionRange positions, long sizeBytes, Tier tier, long accessCount) {
        return new SegmentMeta(key, positions, sizeBytes, tier, accessCount);
    }

    /** The same segment placed on {@code newTier} with {@code newAccessCount}; arguments trusted. */
    SegmentMeta with(Tier newTier, long newAccessCount) {
        return new SegmentMeta(key, positions, sizeBytes, newTier, newAccessCount);
    }

    /** Rejects a null or blank key with a message naming {@code argumentName} and the value. */
    static String requireKey(String key, String argumentName) {
        if (key == null) {
            throw new IllegalArgumentException(argumentName + " must not be null");
        }
        if (key.isBlank()) {
            throw new IllegalArgumentException(argumentName + " must not be blank, was \"" + key + "\"");
        }
        return key;
    }

    /**
     * The segment's unique key.
     *
     * @return the key, not blank
     */
    public String key() {
        return key;
    }

    /**
     * The token positions; unchanged by every move.
     *
     * @return the positions, never null
     */
    public PositionRange positions() {
        return positions;
    }

    /**
     * The segment's size in bytes.
     *
     * @return the size in bytes, {@code >= 0}
     */
    public long sizeBytes() {
        return sizeBytes;
    }

    /**
     * The tier the segment was on when this snapshot was taken.
     *
     * @return the tier, never null; GPU for metadata not yet registered
     */
    public Tier tier() {
        return tier;
    }

    /**
     * Promotions plus touches when this snapshot was taken.
     *
     * @return the access count, {@code >= 0}
     */
    public long accessCount() {
        return accessCount;
    }

    /**
     * The number of token positions, {@code positions().length()}.
     *
     * @return the number of positions, {@code >= 0}
     */
    public long numPositions() {
        return positions.length();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SegmentMeta m
                && key.equals(m.key)
                && positions.equals(m.positions)
                && sizeBytes == m.sizeBytes
                && tier == m.tier
                && accessCount == m.accessCount;
    }

    @Override
    public int hashCode() {
        return Objects.hash(key, positions, sizeBytes, tier, accessCount);
    }

    @Override
    public String toString() {
        return "SegmentMeta[key=" + key + ", positions=" + positions + ", sizeBytes=" + sizeBytes
                + ", tier=" + tier + ", accessCount=" + accessCount + "]";
    }
}
