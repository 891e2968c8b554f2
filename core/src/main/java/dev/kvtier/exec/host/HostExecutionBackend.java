package dev.kvtier.exec.host;

import dev.kvtier.exec.ChunkAllocator;
import dev.kvtier.exec.CopyEngine;
import dev.kvtier.exec.ExecutionBackend;
import dev.kvtier.exec.MappedFileChunkAllocator;
import dev.kvtier.exec.StorageKind;

import java.nio.file.Path;

/**
 * The CPU-only backend: device and pinned memory are plain native memory ({@link NativeChunkAllocator}),
 * mapped files are mapped file extents, and every copy is a {@link java.lang.foreign.MemorySegment#copy} on {@link HostCopyEngine}
 * threads, so transfers are asynchronous as on a GPU. Used when no CUDA device is usable, and by
 * the contract tests. Thread-safe.
 *
 * <p>Owns the DISK extents' allocator it is given: {@link #close()} closes it (for a
 * {@link MappedFileChunkAllocator#readyAhead} allocator: stops its maker thread and deletes the extent made ahead).
 */
public final class HostExecutionBackend implements ExecutionBackend {
    /** Emulated device arenas stay small: they are zeroed native memory on a shared host. */
    private static final long MAX_EMULATED_CHUNK = 64L << 20;

    private final String reason;
    private final ChunkAllocator device = new NativeChunkAllocator("emulated device memory");
    private final ChunkAllocator host = new NativeChunkAllocator("host memory");
    private final MappedFileChunkAllocator disk;
    private final HostCopyEngine engine;

    /**
     * @param diskDirectory where DISK extents are created
     * @param copyThreads   copy threads, {@code >= 1}
     * @param reason        why this backend was chosen, for the log line
     */
    public HostExecutionBackend(Path diskDirectory, int copyThreads, String reason) {
        this(new MappedFileChunkAllocator(diskDirectory), copyThreads, reason);
    }

    /**
     * @param diskExtents where DISK extents come from (persistent ones for a DISK tier that outlives the process)
     * @param copyThreads copy threads, {@code >= 1}
     * @param reason      why this backend was chosen, for the log line
     */
    public HostExecutionBackend(MappedFileChunkAllocator diskExtents, int copyThreads, String reason) {
        this.disk = diskExtents;
        this.engine = new HostCopyEngine(copyThreads);
        this.reason = reason;
    }

    @Override
    public String description() {
        return "host (" + reason + "; " + engine.description() + ")";
    }

    @Override
    public ChunkAllocator chunkAllocator(StorageKind kind) {
        return switch (kind) {
            case DEVICE -> device;
            case PINNED_HOST -> host;
            case MAPPED_FILE -> disk;
        };
    }

    @Override
    public CopyEngine copyEngine() {
        return engine;
    }

    @Override
    public long chunkBytes(StorageKind kind, long budgetBytes, long pageSize) {
        long preferred = ExecutionBackend.super.chunkBytes(kind, budgetBytes, pageSize);
        if (kind == StorageKind.MAPPED_FILE || preferred <= MAX_EMULATED_CHUNK) {
            return preferred;
        }
        return Math.max(pageSize, MAX_EMULATED_CHUNK / pageSize * pageSize);
    }

    @Override
    public void close() {
        try {
            engine.close();
        } finally {
            disk.close(); // stops a ready-ahead allocator's maker and deletes the extent it made and did not hand out
        }
    }
}
