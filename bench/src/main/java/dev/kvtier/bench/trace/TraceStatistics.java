package dev.kvtier.bench.trace;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The statistics by which a block trace is compared with production traces: how many references re-reference a
 * block, how far apart a block's references are, how many blocks are used once, and whether every request starts with
 * the same block. A reuse distance is the number of block references from one reference of a block to its next (a
 * block referenced at positions 10 and 25 of the trace's reference sequence: 15). Immutable.
 *
 * @param requests the requests
 * @param references the block references
 * @param uniqueBlocks the distinct blocks
 * @param reReferenceShare the share of references that reference a block referenced before (1 - unique / references)
 * @param oneUseBlockShare the share of distinct blocks referenced exactly once
 * @param medianReuseDistance the median reuse distance, in references (0 when nothing is re-referenced)
 * @param p90ReuseDistance the 90th percentile reuse distance
 * @param sameFirstBlockShare the share of requests whose first block is the trace's most common first block
 */
public record TraceStatistics(int requests, long references, long uniqueBlocks, double reReferenceShare,
        double oneUseBlockShare, long medianReuseDistance, long p90ReuseDistance, double sameFirstBlockShare) {

    /** The statistics of {@code trace}. */
    public static TraceStatistics of(List<TraceRequest> trace) {
        Map<Long, Long> lastSeen = new HashMap<>();
        Map<Long, Integer> uses = new HashMap<>();
        Map<Long, Integer> firstBlocks = new HashMap<>();
        long references = 0;
        long[] distances = new long[1024];
        int reuses = 0;
        for (TraceRequest r : trace) {
            if (r.blocks() > 0) {
                firstBlocks.merge(r.hashId(0), 1, Integer::sum);
            }
            for (int i = 0; i < r.blocks(); i++) {
                long id = r.hashId(i);
                Long before = lastSeen.put(id, references);
                if (before != null) {
                    if (reuses == distances.length) {
                        distances = Arrays.copyOf(distances, 2 * reuses);
                    }
                    distances[reuses++] = references - before;
                }
                uses.merge(id, 1, Integer::sum);
                references++;
            }
        }
        long[] sorted = Arrays.copyOf(distances, reuses);
        Arrays.sort(sorted);
        long once = uses.values().stream().filter(u -> u == 1).count();
        int sameFirst = firstBlocks.values().stream().mapToInt(Integer::intValue).max().orElse(0);
        long unique = uses.size();
        return new TraceStatistics(trace.size(), references, unique,
                references == 0 ? 0 : 1 - (double) unique / references,
                unique == 0 ? 0 : (double) once / unique,
                reuses == 0 ? 0 : sorted[reuses / 2],
                reuses == 0 ? 0 : sorted[(int) Math.min(reuses - 1, (long) (0.9 * reuses))],
                trace.isEmpty() ? 0 : (double) sameFirst / trace.size());
    }

    /** One line, e.g. for the generator's summary. */
    public String summary() {
        return String.format(Locale.ROOT, "%,d requests, %,d block references, %,d unique blocks; re-references %.1f%%, "
                        + "blocks used once %.1f%%, reuse distance median %,d p90 %,d references; "
                        + "requests starting with the same block %.1f%%",
                requests, references, uniqueBlocks, 100 * reReferenceShare, 100 * oneUseBlockShare, medianReuseDistance,
                p90ReuseDistance, 100 * sameFirstBlockShare);
    }
}
