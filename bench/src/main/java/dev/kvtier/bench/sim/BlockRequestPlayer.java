package dev.kvtier.bench.sim;

/**
 * Plays one request of a {@link BlockTrace} against a cache and records what it saw in {@link TraceCounters}:
 * the one seam between the trace engine ({@link TraceRun}) and the cache's API. Today's implementation,
 * {@link SegmentBlockPlayer}, speaks the segment API (one segment per block); a player over the prefix-block
 * API (lookup the cached prefix, make it resident in one batch, store the new blocks) replaces it without
 * touching the engine, the counters or the summary. Implementations are used from one thread.
 */
interface BlockRequestPlayer {

    /**
     * Plays request {@code request}: every one of its block references, in order.
     *
     * @return false when it failed; the first failure is in {@link TraceCounters#failure()}
     */
    boolean play(int request);

    /**
     * After the requests: verifies every block written where it lies now, removes it, and records a failure
     * when a block is wrong or missing.
     */
    void verifyAndRemoveEverything();
}
