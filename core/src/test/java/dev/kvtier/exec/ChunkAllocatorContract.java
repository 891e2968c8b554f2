package dev.kvtier.exec;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What every {@link ChunkAllocator} promises (see its Javadoc): a chunk of exactly the size asked,
 * aligned (4096 on the host, 256 on the device, as {@code cudaMalloc} promises), never overlapping another live chunk, freed by an idempotent {@code close()};
 * host-side memory is readable and writable to its last byte; the allocator describes itself.
 * Device memory is never dereferenced.
 *
 * <p>Subclasses only configure: {@link #openAllocator} and whether its memory is on the host.
 */
public abstract class ChunkAllocatorContract {
    @TempDir
    protected Path directory;

    private ChunkAllocator allocator;
    private final List<MemoryChunk> chunks = new ArrayList<>();

    /** The allocator under test; mapped files go in {@code directory}. */
    protected abstract ChunkAllocator openAllocator(Path directory);

    /** Whether the host may read and write the chunks (false for device memory). */
    protected abstract boolean hostAccessible();

    /** Runs after every chunk is closed (a subclass checks nothing native is left). */
    protected void afterChunksClosed() {
    }

    @BeforeEach
    void open() {
        allocator = openAllocator(directory);
    }

    @AfterEach
    void closeChunks() {
        if (allocator == null) {
            return; // skipped before it opened
        }
        chunks.forEach(MemoryChunk::close);
        afterChunksClosed();
    }

    private MemoryChunk allocate(long bytes) throws Exception {
        MemoryChunk chunk = allocator.allocate(bytes);
        chunks.add(chunk);
        return chunk;
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(longs = {4096, 65536, 3 << 20})
    void aChunkIsExactlyAsLargeAsAskedAndAligned(long bytes) throws Exception {
        MemorySegment memory = allocate(bytes).memory();
        assertEquals(bytes, memory.byteSize());
        long alignment = hostAccessible() ? 4096 : 256;
        assertEquals(0, memory.address() % alignment, "aligned to " + alignment + ": " + memory);
    }

    @Test
    void liveChunksNeverOverlap() throws Exception {
        List<MemorySegment> live = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            live.add(allocate(64 << 10).memory());
        }
        for (int i = 0; i < live.size(); i++) {
            for (int j = i + 1; j < live.size(); j++) {
                assertFalse(live.get(i).asOverlappingSlice(live.get(j)).isPresent(), "chunks " + i + " and " + j + " overlap");
            }
        }
    }

    @Test
    void hostMemoryHoldsWhatIsWrittenToItsLastByte() throws Exception {
        if (!hostAccessible()) {
            return; // device memory: the copy-engine contract reads it back through the engine
        }
        MemorySegment memory = allocate(1 << 20).memory();
        memory.set(ValueLayout.JAVA_LONG, 0, 0x0123456789abcdefL);
        memory.set(ValueLayout.JAVA_BYTE, memory.byteSize() - 1, (byte) 0x5a);
        assertEquals(0x0123456789abcdefL, memory.get(ValueLayout.JAVA_LONG, 0));
        assertEquals((byte) 0x5a, memory.get(ValueLayout.JAVA_BYTE, memory.byteSize() - 1));
    }

    @Test
    void closeIsIdempotentAndMemoryCanBeHadAgain() throws Exception {
        MemoryChunk chunk = allocator.allocate(1 << 20);
        chunk.close();
        assertDoesNotThrow(chunk::close);
        for (int i = 0; i < 4; i++) {
            allocator.allocate(1 << 20).close(); // freed memory goes back: this does not grow without bound
        }
    }

    @Test
    void describesWhatItHandsOut() {
        assertTrue(!allocator.description().isBlank());
    }
}
