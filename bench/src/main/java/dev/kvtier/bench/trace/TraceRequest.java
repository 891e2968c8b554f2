package dev.kvtier.bench.trace;

import java.util.Arrays;

/**
 * One request of a block-level trace (one line of a Mooncake trace). Immutable: the id array is copied in
 * and handed out only as copies or by index; thread-safe.
 *
 * <p>Each hash id names one block of {@link MooncakeTrace#TOKENS_PER_BLOCK} input tokens; two requests whose
 * inputs start with equal tokens start with equal ids (a block's id names its whole prefix, as a chained
 * block hash does). {@code hashIds.length} is normally {@code ceil(inputLength / 512)}: the last id may
 * name a partial block. That relation is not enforced, since published traces do not always keep it.
 *
 * @param timestampMs  arrival time in milliseconds from the trace's start
 * @param inputLength  input (prompt) tokens, at least 0
 * @param outputLength output tokens generated, at least 0
 * @param hashIds      the input's blocks in order; each id at least 0
 */
public record TraceRequest(long timestampMs, int inputLength, int outputLength, long[] hashIds) {

    /**
     * @throws IllegalArgumentException naming the field and value when a length or an id is negative
     */
    public TraceRequest {
        if (inputLength < 0) {
            throw new IllegalArgumentException("input_length must be at least 0, got " + inputLength);
        }
        if (outputLength < 0) {
            throw new IllegalArgumentException("output_length must be at least 0, got " + outputLength);
        }
        hashIds = hashIds.clone();
        for (int i = 0; i < hashIds.length; i++) {
            if (hashIds[i] < 0) {
                throw new IllegalArgumentException("hash_ids[" + i + "] must be at least 0, got " + hashIds[i]);
            }
        }
    }

    /** A copy of the ids. */
    @Override
    public long[] hashIds() {
        return hashIds.clone();
    }

    /** Number of blocks. */
    public int blocks() {
        return hashIds.length;
    }

    /** The id of block {@code i}. */
    public long hashId(int i) {
        return hashIds[i];
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TraceRequest r && r.timestampMs == timestampMs && r.inputLength == inputLength
                && r.outputLength == outputLength && Arrays.equals(r.hashIds, hashIds);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(timestampMs) * 31 * 31 * 31 + inputLength * 31 * 31 + outputLength * 31 + Arrays.hashCode(hashIds);
    }

    @Override
    public String toString() {
        return "TraceRequest[timestamp=" + timestampMs + " ms, input_length=" + inputLength + ", output_length="
                + outputLength + ", hash_ids=" + Arrays.toString(hashIds) + "]";
    }
}
