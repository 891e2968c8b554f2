package dev.kvtier.exec;

/**
 * What a backend supplies to the {@link TransferExecutor}: where each kind of memory comes from and
 * how bytes are copied. Two implementations: {@link dev.kvtier.exec.host.HostExecutionBackend} (device
 * memory emulated by native memory) and the CUDA backend (device arenas, pinned chunks, registered file mappings,
 * copies on streams). Allocation policy, ordering, backpressure and checksums live in the
 * executor, so a backend stays a thin adapter.
 *
 * <p>The executor calls {@link #close()} after it has closed its memories and the copy engine.
 */
public interface ExecutionBackend extends AutoCloseable {

    /** One line for the log: which backend and why, e.g. {@code "host (no GPU: libcudart not found ...)"}. */
    String description();

    /** The allocator for chunks of {@code kind}; the same instance on every call. */
    ChunkAllocator chunkAllocator(StorageKind kind);

    /** The engine that performs every copy; the same instance on every call. */
    CopyEngine copyEngine();

    /**
     * How large each chunk of {@code kind} should be, given the budget of the memory it backs (mapped
     * files: the configured extent size) and the page size. The default: device arenas of a quarter of the budget (at most
     * 1 GiB), pinned chunks of a quarter of the budget but at least 8 MiB (pinning is slow, grow in
     * big steps) and never more than the budget, disk extents as configured; always whole pages.
     */
    default long chunkBytes(StorageKind kind, long budgetBytes, long pageSize) {
        long wanted = switch (kind) {
            case DEVICE -> Math.min(budgetBytes / 4, 1L << 30);
            case PINNED_HOST -> Math.min(Math.min(Math.max(budgetBytes / 4, 8L << 20), budgetBytes), 256L << 20);
            case MAPPED_FILE -> budgetBytes;
        };
        long pages = Math.max(1, (wanted + pageSize - 1) / pageSize);
        return pages * pageSize;
    }

    /** Frees what the backend itself holds (streams, threads); idempotent. */
    @Override
    void close();
}
