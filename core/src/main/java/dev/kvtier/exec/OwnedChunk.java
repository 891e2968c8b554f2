package dev.kvtier.exec;

import java.lang.foreign.MemorySegment;

/**
 * A {@link MemoryChunk} whose memory is owned by {@code release}: closing the chunk runs it. The
 * owner makes it idempotent (the allocation handles' own {@code close()} already is; a bare
 * {@link java.lang.foreign.Arena} needs a once-guard), so a failed release can be retried where the
 * owner allows it.
 */
public record OwnedChunk(MemorySegment memory, Runnable release) implements MemoryChunk {
    @Override
    public void close() {
        release.run();
    }
}
