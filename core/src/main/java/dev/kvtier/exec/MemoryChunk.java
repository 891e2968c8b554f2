package dev.kvtier.exec;

import java.lang.foreign.MemorySegment;

/**
 * One large block of tier memory that a {@code PagedMemory} cuts into pages: a device arena,
 * a pinned host block or a mapped file extent.
 *
 * <p>The chunk owns its memory; {@link #close()} frees, unpins or unmaps it and is idempotent. The
 * {@code PagedMemory} closes a chunk only when no page of it can still be touched by a copy.
 */
public interface MemoryChunk extends AutoCloseable {

    /** The chunk's memory, exactly as large as requested; for device memory an address never dereferenced. */
    MemorySegment memory();

    /** Frees the memory; later calls do nothing. */
    @Override
    void close();
}
