package dev.kvtier.exec;

import java.lang.foreign.MemorySegment;

/**
 * One contiguous copy: all of {@code source} into all of {@code destination}, same length.
 *
 * @param source      bytes to read
 * @param destination where they go; {@code destination.byteSize() == source.byteSize()}
 */
public record CopyRegion(MemorySegment source, MemorySegment destination) {

    /** @throws IllegalArgumentException if either side is null or the lengths differ */
    public CopyRegion {
        if (source == null || destination == null) {
            throw new IllegalArgumentException("source and destination must not be null");
        }
        if (source.byteSize() != destination.byteSize()) {
            throw new IllegalArgumentException("source (" + source.byteSize() + " bytes) and destination ("
                    + destination.byteSize() + " bytes) must be the same length");
        }
    }

    /** Bytes this region moves. */
    public long byteSize() {
        return source.byteSize();
    }
}
