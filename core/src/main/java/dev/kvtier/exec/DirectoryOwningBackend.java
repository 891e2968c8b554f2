package dev.kvtier.exec;

/**
 * A backend that also owns its disk directory ({@link DiskDirectoryLock}): closing it closes the
 * backend, then gives the directory up, so the lock is held as long as any extent may be in use.
 * Thread-safe as the backend it wraps.
 */
public final class DirectoryOwningBackend implements ExecutionBackend {
    private final ExecutionBackend inner;
    private final DiskDirectoryLock lock;

    /** @param inner the backend, closed first; @param lock the directory's lock, released after it */
    public DirectoryOwningBackend(ExecutionBackend inner, DiskDirectoryLock lock) {
        this.inner = inner;
        this.lock = lock;
    }

    @Override
    public String description() {
        return inner.description();
    }

    @Override
    public ChunkAllocator chunkAllocator(StorageKind kind) {
        return inner.chunkAllocator(kind);
    }

    @Override
    public CopyEngine copyEngine() {
        return inner.copyEngine();
    }

    @Override
    public long chunkBytes(StorageKind kind, long budgetBytes, long pageSize) {
        return inner.chunkBytes(kind, budgetBytes, pageSize);
    }

    @Override
    public void close() {
        try {
            inner.close();
        } finally {
            lock.close(); // after the executor closed its memories: every extent is deleted by now
        }
    }
}
