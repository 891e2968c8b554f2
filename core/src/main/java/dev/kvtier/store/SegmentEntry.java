package dev.kvtier.store;

/**
 * The store's mutable record of one registered segment; guarded by the store's lock. Its usage
 * ({@link #accessCount}, {@link #lastUse}) changes only while it is out of its tier's index, and
 * the link fields belong to whichever {@link TierIndex} holds it.
 */
final class SegmentEntry implements DemotionPolicy.Usage {
    // Held inline rather than read through a snapshot: a touch then changes two fields of one
    // object and allocates nothing, and reading candidates does not chase a pointer per segment.
    final String key;
    final PositionRange positions;
    final long sizeBytes;
    Tier tier;
    long accessCount;
    long lastUse;
    /** The latest move booked for this segment and not rolled back, or null. */
    TierTransfer lastMove;
    /** The snapshot of the current state, built on first request after a change. */
    private SegmentMeta snapshot;

    // Index bookkeeping (UsageBucketIndex): an intrusive recency list and the bucket holding it.
    SegmentEntry previous;
    SegmentEntry next;
    UsageBucketIndex.Bucket bucket;
    /** The bucket it had on the tier it left last: a hint for when it comes back. */
    UsageBucketIndex.Bucket formerBucket;
    boolean outOfOrder;

    SegmentEntry(SegmentMeta meta, Tier tier, long lastUse) {
        this.key = meta.key();
        this.positions = meta.positions();
        this.sizeBytes = meta.sizeBytes();
        this.tier = tier;
        this.accessCount = meta.accessCount();
        this.lastUse = lastUse;
    }

    /** Puts the segment on {@code newTier} with {@code newAccessCount}; the old snapshot stays valid as history. */
    void place(Tier newTier, long newAccessCount) {
        tier = newTier;
        accessCount = newAccessCount;
        snapshot = null;
    }

    /** The immutable snapshot of the current state; the same object until the next change. */
    SegmentMeta snapshot() {
        SegmentMeta current = snapshot;
        if (current == null) {
            current = SegmentMeta.placed(key, positions, sizeBytes, tier, accessCount);
            snapshot = current;
        }
        return current;
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public long sizeBytes() {
        return sizeBytes;
    }

    @Override
    public long accessCount() {
        return accessCount;
    }

    @Override
    public long lastUse() {
        return lastUse;
    }
}
