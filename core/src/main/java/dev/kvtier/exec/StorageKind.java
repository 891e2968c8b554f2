package dev.kvtier.exec;

/**
 * What a block of memory physically is, in the physical layer's own words (it knows no tiers; one
 * bridge in the tiering layer maps each tier to a kind). A backend supplies one
 * {@link ChunkAllocator} per kind; a {@link CopyEngine} only cares which side of the bus a kind is
 * on ({@link #side()}).
 */
public enum StorageKind {
    /** Device memory ({@code cudaMalloc} arenas, or native memory standing in for them). */
    DEVICE(MemoryKind.DEVICE),
    /** Host memory the device reads directly: pinned {@code cudaHostAlloc} blocks (or plain native memory). */
    PINNED_HOST(MemoryKind.HOST),
    /** Extents of files mapped into host memory. */
    MAPPED_FILE(MemoryKind.HOST);

    private final MemoryKind side;

    StorageKind(MemoryKind side) {
        this.side = side;
    }

    /** Which side of the bus this memory is on. */
    public MemoryKind side() {
        return side;
    }
}
