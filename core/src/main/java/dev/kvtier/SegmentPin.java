package dev.kvtier;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A segment held in place on a tier, from {@link KvTierCache#pin}: while a pin is open, the memory
 * in {@link #segment()} keeps the segment's bytes. The cache does not demote the segment to make
 * room, refuses to move it ({@link SegmentPinnedException}), and when it is removed forgets the key
 * at once but frees its pages only when its last pin closes. This is what lets a runtime read the
 * device pages (launch kernels on them) while other threads keep using the cache.
 *
 * <p>Thread-safe; {@link #close()} is idempotent. Close every pin before closing the cache:
 * {@link KvTierCache#close()} frees all memory, pinned or not, and a pin closed afterwards does
 * nothing.
 */
public final class SegmentPin implements AutoCloseable {
    private final ResidentSegment segment;
    private final Runnable unpin;
    private final AtomicBoolean closed = new AtomicBoolean();

    SegmentPin(ResidentSegment segment, Runnable unpin) {
        this.segment = segment;
        this.unpin = unpin;
    }

    /**
     * The pinned segment: its tier and pages, valid until this pin is closed.
     *
     * @return the segment as pinned; its pages must not be used once this pin is closed
     */
    public ResidentSegment segment() {
        return segment;
    }

    /**
     * Whether {@link #close()} has been called.
     *
     * @return true once closed
     */
    public boolean isClosed() {
        return closed.get();
    }

    /** Releases the pin; the first call only. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            unpin.run();
        }
    }

    @Override
    public String toString() {
        return "SegmentPin[" + segment.key() + " on " + segment.tier() + (isClosed() ? ", closed]" : "]");
    }
}
