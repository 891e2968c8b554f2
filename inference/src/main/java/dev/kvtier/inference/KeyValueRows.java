package dev.kvtier.inference;

import java.lang.foreign.MemorySegment;

/**
 * Where a request's keys and values live, one row per layer and position: {@code kvDim} float32 in native byte
 * order. {@link LlamaModel#forward} writes the rows of the positions it computes and reads the rows of every
 * earlier position; the rows of positions a cache restored are read only. Used by one thread at a time.
 */
public interface KeyValueRows {

    /** The keys of {@code position} in {@code layer}: {@code kvDim * 4} bytes. */
    MemorySegment key(int layer, int position);

    /** The values of {@code position} in {@code layer}: {@code kvDim * 4} bytes. */
    MemorySegment value(int layer, int position);
}
