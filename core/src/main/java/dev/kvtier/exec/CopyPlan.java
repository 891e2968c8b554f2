package dev.kvtier.exec;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything one transfer copies: regions from memory of one kind to memory of another, in order.
 * Built by {@link #between} from two run lists, so each region is as long as both sides allow:
 * contiguous runs on both sides become one copy, and no region crosses a run boundary (so none
 * spans two chunks, registrations or mappings).
 *
 * @param sourceKind      device or host memory on the reading side
 * @param destinationKind device or host memory on the writing side
 * @param regions         the copies, in segment order; may be empty
 */
public record CopyPlan(MemoryKind sourceKind, MemoryKind destinationKind, List<CopyRegion> regions) {

    /** @throws IllegalArgumentException for a null argument */
    public CopyPlan {
        if (sourceKind == null || destinationKind == null || regions == null) {
            throw new IllegalArgumentException("sourceKind, destinationKind and regions must not be null");
        }
        regions = List.copyOf(regions);
    }

    /**
     * Pairs the runs of two equally long run lists into the fewest regions that respect both lists'
     * boundaries.
     *
     * @throws IllegalArgumentException if the two lists do not hold the same number of bytes
     */
    public static CopyPlan between(MemoryKind sourceKind, List<MemorySegment> sourceRuns,
                                   MemoryKind destinationKind, List<MemorySegment> destinationRuns) {
        if (sourceRuns.size() == 1 && destinationRuns.size() == 1) {
            // The small-segment case: one region, the runs as they are (no slices, no lists to grow).
            MemorySegment source = sourceRuns.get(0);
            MemorySegment destination = destinationRuns.get(0);
            if (source.byteSize() != destination.byteSize()) {
                throw new IllegalArgumentException("source runs hold " + source.byteSize()
                        + " bytes but destination runs hold " + destination.byteSize());
            }
            return new CopyPlan(sourceKind, destinationKind, source.byteSize() == 0 ? List.of()
                    : List.of(new CopyRegion(source, destination)));
        }
        long sourceBytes = sum(sourceRuns);
        long destinationBytes = sum(destinationRuns);
        if (sourceBytes != destinationBytes) {
            throw new IllegalArgumentException("source runs hold " + sourceBytes
                    + " bytes but destination runs hold " + destinationBytes);
        }
        List<CopyRegion> regions = new ArrayList<>();
        int si = 0;
        int di = 0;
        long sOff = 0;
        long dOff = 0;
        while (si < sourceRuns.size() && di < destinationRuns.size()) {
            MemorySegment s = sourceRuns.get(si);
            MemorySegment d = destinationRuns.get(di);
            long length = Math.min(s.byteSize() - sOff, d.byteSize() - dOff);
            if (length > 0) {
                regions.add(new CopyRegion(s.asSlice(sOff, length), d.asSlice(dOff, length)));
            }
            sOff += length;
            dOff += length;
            if (sOff == s.byteSize()) {
                si++;
                sOff = 0;
            }
            if (dOff == d.byteSize()) {
                di++;
                dOff = 0;
            }
        }
        return new CopyPlan(sourceKind, destinationKind, regions);
    }

    private static long sum(List<MemorySegment> runs) {
        long total = 0;
        for (MemorySegment run : runs) {
            total += run.byteSize();
        }
        return total;
    }

    /** Bytes the whole plan moves. */
    public long totalBytes() {
        long total = 0;
        for (CopyRegion region : regions) {
            total += region.byteSize();
        }
        return total;
    }
}
