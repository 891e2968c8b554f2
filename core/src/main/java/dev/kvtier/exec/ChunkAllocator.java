package dev.kvtier.exec;

import java.io.IOException;

/**
 * Where a tier's memory comes from: a backend supplies one per tier (device arenas from
 * {@code cudaMalloc}, pinned blocks from {@code cudaHostAlloc}, mapped file extents, or native
 * memory standing in for them). Allocation policy (pages, reuse) is {@code PagedMemory}'s job.
 *
 * <p>Implementations must be safe to call from several threads; {@code PagedMemory} calls them
 * under its own lock.
 */
public interface ChunkAllocator {

    /**
     * Allocates a chunk of exactly {@code bytes} bytes, aligned at least to 4096 for host memory and to
     * 256 for device memory (what {@code cudaMalloc} guarantees).
     *
     * @throws IOException when the memory cannot be had (device out of memory, disk full, mapping
     *                     refused); the message says what ran out and, where there is one, the fix
     */
    MemoryChunk allocate(long bytes) throws IOException;

    /**
     * {@link #allocate(long)} for the chunk that will sit in slot {@code slot} of its {@code PagedMemory}
     * (its page coordinates name the slot). An allocator whose chunks outlive the process (persistent
     * DISK extents) names the chunk by its slot, so that a later process finds the pages a journal
     * record names in the same place; every other allocator ignores the slot. An allocator that
     * wraps another must forward both methods (the default drops the slot).
     *
     * @throws IOException as {@link #allocate(long)}
     */
    default MemoryChunk allocate(long bytes, int slot) throws IOException {
        return allocate(bytes);
    }

    /** For logs and errors: what this allocator hands out, e.g. {@code "mapped extents in /var/kv"}. */
    String description();
}
