package dev.kvtier.exec.host;

import dev.kvtier.exec.ChunkAllocator;
import dev.kvtier.exec.MemoryChunk;
import dev.kvtier.exec.OwnedChunk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Chunks of plain native memory, each owned by its own shared {@link Arena}: the host backend's
 * stand-in for device arenas and pinned host blocks. Thread-safe.
 */
public final class NativeChunkAllocator implements ChunkAllocator {
    private final String what;

    /** @param what what the memory stands for, for logs, e.g. {@code "emulated device memory"} */
    public NativeChunkAllocator(String what) {
        this.what = what;
    }

    @Override
    public MemoryChunk allocate(long bytes) {
        Arena arena = Arena.ofShared();
        try {
            MemorySegment memory = arena.allocate(bytes, 4096);
            AtomicBoolean closed = new AtomicBoolean();
            return new OwnedChunk(memory, () -> {
                if (closed.compareAndSet(false, true)) {
                    arena.close();
                }
            });
        } catch (RuntimeException | OutOfMemoryError e) {
            arena.close();
            throw e;
        }
    }

    @Override
    public String description() {
        return what + " (native memory)";
    }
}
