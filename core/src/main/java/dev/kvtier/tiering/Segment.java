package dev.kvtier.tiering;

import dev.kvtier.ResidentSegment;
import dev.kvtier.exec.PageAllocation;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;

import java.util.concurrent.locks.ReentrantLock;

/**
 * One cached segment's physical side: where its bytes are, their DISK checksum, its pins and whether
 * it is live. The mutable fields are guarded by {@link #lock}: every operation on the key holds it
 * while it reads or changes them, which is what serializes operations on one key. The tier is not
 * kept here: under the lock, the store's tier is the one holding the bytes.
 */
final class Segment {
    final String key;
    final PositionRange positions;
    final long sizeBytes;
    final ReentrantLock lock = new ReentrantLock();
    PageAllocation placement;
    /**
     * The CRC32C of the segment's bytes as they were put (taken from the caller's memory before the
     * copy, so a copy that silently delivered nothing can never be blessed), or, for adopted device
     * memory, as they first arrived on a host tier. DISK arrivals are checked against it, and DISK
     * bytes are verified against it when they leave.
     */
    int crc32c;
    /** Whether {@link #crc32c} is known yet (false only for adopted memory that never left the GPU). */
    boolean crcKnown;
    /** False until the first bytes are in place, and again once removed or closed. */
    boolean live;
    /** Open pins: while positive the bytes stay where they are (a removal keeps the placement). */
    int pins;
    /**
     * False only for a segment recovered from a persisted DISK directory whose bytes have not yet been
     * checked against {@link #crc32c}: its first use checks them (and drops it when they do not match).
     */
    boolean verified = true;

    Segment(String key, PositionRange positions, long sizeBytes) {
        this.key = key;
        this.positions = positions;
        this.sizeBytes = sizeBytes;
    }

    /** The segment as handed to the runtime, on {@code tier} (where its placement is). */
    ResidentSegment resident(Tier tier) {
        return new ResidentSegment(key, positions, tier, sizeBytes, placement.runs());
    }
}
