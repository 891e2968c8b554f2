package dev.kvtier;

import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Where a segment's bytes are, as returned by {@link KvTierCache#ensureResident}: its tier and the
 * memory holding it, as contiguous runs of pages in segment order (one run when the pages are
 * contiguous; none for a zero-byte segment). On {@link Tier#GPU} the runs are device addresses:
 * never dereference them on the host. With the host backend they are native memory standing in
 * for device memory.
 *
 * <p>The runs stay valid only while the segment stays on that tier: a later demote, remove or
 * close (including a demotion the cache does to make room for another segment) reuses them. A
 * {@link SegmentPin} ({@link KvTierCache#pin}) holds them in place until it is closed.
 *
 * @param key       the segment's key
 * @param positions its token positions, exactly as put
 * @param tier      the tier it is on (the one asked for, or a faster one)
 * @param foundOn   the tier its bytes were on when the call found it: {@code tier} when it was there already (a
 *                  hit there), the slower tier it was promoted from otherwise. What a runtime counts hits per
 *                  tier by, or prices the restore with, without asking where the segment is before every call.
 * @param sizeBytes its size; the runs' lengths add up to it
 * @param pages     the runs of pages, in order
 */
public record ResidentSegment(String key, PositionRange positions, Tier tier, Tier foundOn, long sizeBytes,
                              List<MemorySegment> pages) {

    /** Copies the run list, so the record is immutable. */
    public ResidentSegment {
        pages = List.copyOf(pages);
    }
}
