package dev.kvtier.store.policy;

import dev.kvtier.store.DemotionPolicy;

/**
 * A built-in tracker's record of one segment, linked into one of its per-tier queues: the part of
 * the store's {@code SegmentEntry} (which extends it) that belongs to the store's tracker when that
 * is {@link S3FifoPolicy}, {@link WTinyLfuPolicy}, {@link LruKPolicy} or {@link ArcPolicy}. Not thread-safe: used under the store's lock.
 *
 * <p>Why inside the entry rather than a separate node in {@link DemotionPolicy.Segment#policyNode}:
 * one object fewer per segment, and a touch then changes one object instead of chasing a pointer
 * to another (a cache miss at 10^6 segments). A store has exactly one tracker, so the fields are
 * never shared.
 */
public abstract class PolicyNode extends LinkedFifo.Link<PolicyNode, PolicyNode.Queue> {
    public final String key;
    public final long sizeBytes;
    /** The key's hash, spread, for frequency sketches. */
    public final int hash;
    /** S3-FIFO's use counter (0..3); also raised without the store's lock (S3FifoTracker#usedConcurrently). */
    public int uses;
    /** W-TinyLFU: entered probation from the window and not used since (an admission candidate). */
    boolean fromWindow;
    /** S3-FIFO: held on its tier by the caller ({@link DemotionPolicy.Tracker#held}): kept in place, not named. */
    boolean held;
    /**
     * LRU-2 ({@link LruKPolicy}): the segment's last use as the tracker last saw it (its place in the tier's order is
     * filed under this and {@link #previousUse}, which only the tracker changes; the store's
     * {@link DemotionPolicy.Usage#lastUse()} changes before the tracker hears of the use).
     */
    long lastUseSeen;
    /** LRU-2: the use before {@link #lastUseSeen}, or {@link Long#MIN_VALUE} if the tracker knows of none. */
    long previousUse = Long.MIN_VALUE;

    protected PolicyNode(String key, long sizeBytes) {
        this.key = key;
        this.sizeBytes = sizeBytes;
        int h = key.hashCode() * 0x9E3779B9;
        this.hash = h ^ (h >>> 16);
    }

    /** The node of {@code segment}: the store's entry itself (only the store calls a tracker). */
    static PolicyNode of(DemotionPolicy.Segment segment) {
        return (PolicyNode) segment;
    }

    @Override
    final long queuedBytes() {
        return sizeBytes;
    }

    /** A tracker's queue of segments (see {@link LinkedFifo}). */
    static final class Queue extends LinkedFifo<PolicyNode, Queue> {
        Queue(String name) {
            super(name);
        }
    }
}
