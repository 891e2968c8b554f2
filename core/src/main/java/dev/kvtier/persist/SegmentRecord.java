package dev.kvtier.persist;

/**
 * One persisted DISK segment, as its journal record holds it: key, positions, size, the CRC32C of its
 * bytes as they were put, and where its bytes lie (per run: extent slot, first page, page count, in
 * segment order), and whether it is a prefix block and of which parent. Treat the arrays as read-only.
 *
 * @param key            the segment's key
 * @param positionStart  first token position
 * @param positionEnd    last token position, exclusive
 * @param sizeBytes      the segment's size
 * @param crc32c         CRC32C of its bytes
 * @param accessCount    its uses (promotions and touches) when it arrived on DISK
 * @param runChunk       per run, the extent slot
 * @param runFirstPage   per run, the first page in that extent
 * @param runPageCount   per run, the pages it spans
 * @param block          whether it is a prefix block (stored through the prefix API) rather than a plain segment
 * @param parentKey      a block's parent's key; null for a plain segment and for the first block of a chain
 */
public record SegmentRecord(String key, long positionStart, long positionEnd, long sizeBytes, int crc32c,
                            long accessCount, int[] runChunk, int[] runFirstPage, int[] runPageCount,
                            boolean block, String parentKey) {

    /**
     * Checks the record is consistent; the arrays are kept as given, not copied.
     *
     * @throws IllegalArgumentException if the run arrays differ in length, or a plain segment names a parent
     */
    public SegmentRecord {
        if (parentKey != null && !block) {
            throw new IllegalArgumentException("plain segment \"" + key + "\" cannot have parent \"" + parentKey + "\"");
        }
        if (runChunk.length != runFirstPage.length || runChunk.length != runPageCount.length) {
            throw new IllegalArgumentException("run arrays differ in length: " + runChunk.length + ", "
                    + runFirstPage.length + ", " + runPageCount.length);
        }
    }

    /**
     * How many runs the segment's bytes lie in.
     *
     * @return the number of runs, the common length of the run arrays; {@code >= 0}
     */
    public int runCount() {
        return runChunk.length;
    }
}
