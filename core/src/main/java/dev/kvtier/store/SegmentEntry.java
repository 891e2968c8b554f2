package dev.kvtier.store;

/**
 * The store's mutable record of one registered segment; guarded by the store's lock. Its usage
 * ({@link #meta}'s access count, {@link #lastUse}) changes only while it is out of its tier's
 * index, and the link fields belong to whichever {@link TierIndex} holds it.
 */
final class SegmentEntry implements DemotionPolicy.Usage {
    /** The current snapshot; replaced, never mutated, so it can be handed out as is. */
    SegmentMeta meta;
    long lastUse;
    /** The latest move booked for this segment and not rolled back, or null. */
    TierTransfer lastMove;

    // Index bookkeeping (UsageBucketIndex): an intrusive recency list and the bucket holding it.
    SegmentEntry previous;
    SegmentEntry next;
    UsageBucketIndex.Bucket bucket;
    /** The bucket it had on the tier it left last: a hint for when it comes back. */
    UsageBucketIndex.Bucket formerBucket;
    boolean outOfOrder;

    SegmentEntry(SegmentMeta meta, long lastUse) {
        this.meta = meta;
        this.lastUse = lastUse;
    }

    @Override
    public String key() {
        return meta.key();
    }

    @Override
    public long sizeBytes() {
        return meta.sizeBytes();
    }

    @Override
    public long accessCount() {
        return meta.accessCount();
    }

    @Override
    public long lastUse() {
        return lastUse;
    }
}
