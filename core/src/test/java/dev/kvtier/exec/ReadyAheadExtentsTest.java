package dev.kvtier.exec;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DISK extents made ready ahead ({@link MappedFileChunkAllocator#readyAhead}): the same contract as extents made on
 * the calling thread, at most one extent made and not handed out, none left on disk once the allocator and its
 * chunks are closed, and a failure ahead surfacing on the next allocate as it would without ready-ahead.
 */
class ReadyAheadExtentsTest {
    @TempDir
    Path directory;

    private static long files(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.count();
        }
    }

    /** The chunk-allocator contract; afterwards the allocator is closed and nothing is left in the directory. */
    @Nested
    class Contract extends ChunkAllocatorContract {
        private MappedFileChunkAllocator opened;
        private Path dir;

        @Override
        protected ChunkAllocator openAllocator(Path directory) {
            dir = directory;
            opened = MappedFileChunkAllocator.readyAhead(directory);
            return opened;
        }

        @Override
        protected boolean hostAccessible() {
            return true;
        }

        @Override
        protected void afterChunksClosed() {
            opened.close();
            try {
                assertEquals(0, Files.exists(dir) ? files(dir) : 0, "no extent left once chunks and allocator closed");
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }
    }

    @Test
    void theNextExtentOfTheSameSizeIsReadyZeroedAndWritableAndTheSpareGoesOnClose() throws IOException {
        MappedFileChunkAllocator allocator = MappedFileChunkAllocator.readyAhead(directory);
        List<MemoryChunk> chunks = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            MemoryChunk chunk = allocator.allocate(256 * 1024);
            chunks.add(chunk);
            assertEquals(256 * 1024, chunk.memory().byteSize());
            for (long offset = 0; offset < chunk.memory().byteSize(); offset += 4096) {
                assertEquals(0L, chunk.memory().get(ValueLayout.JAVA_LONG, offset), "a new extent holds zeros");
            }
            chunk.memory().set(ValueLayout.JAVA_LONG, 8, 40L + i);
        }
        for (int i = 0; i < 3; i++) {
            assertEquals(40L + i, chunks.get(i).memory().get(ValueLayout.JAVA_LONG, 8), "chunks never share memory");
        }
        assertNotEquals(chunks.get(0).memory().address(), chunks.get(1).memory().address());
        allocator.close();
        assertEquals(3, files(directory), "the extent made ahead and not handed out is deleted on close");
        allocator.close(); // idempotent
        chunks.forEach(MemoryChunk::close);
        assertEquals(0, files(directory));
    }

    @Test
    void anExtentOfAnotherSizeIsMadeOnTheCallingThreadAndTheReadyOneDeleted() throws IOException {
        MappedFileChunkAllocator allocator = MappedFileChunkAllocator.readyAhead(directory);
        MemoryChunk first = allocator.allocate(64 * 1024);
        MemoryChunk second = allocator.allocate(128 * 1024);
        assertEquals(128 * 1024, second.memory().byteSize());
        allocator.close();
        first.close();
        second.close();
        assertEquals(0, files(directory));
    }

    @Test
    void anExtentThatCouldNotBeMadeAheadFailsTheNextAllocateWithItsOwnMessage() throws IOException {
        long[] usable = {Long.MAX_VALUE};
        MappedFileChunkAllocator allocator = MappedFileChunkAllocator.readyAhead(directory, dir -> usable[0]);
        MemoryChunk first = allocator.allocate(64 * 1024);
        allocator.allocate(64 * 1024).close(); // waits for the one made ahead; the next is started meanwhile
        allocator.close(); // stops the maker, deletes what it made
        assertEquals(1, files(directory));

        MappedFileChunkAllocator small = MappedFileChunkAllocator.readyAhead(directory, dir -> usable[0]);
        MemoryChunk fits = small.allocate(64 * 1024);
        usable[0] = 1024; // the disk fills up: the extent made ahead (if started after this) fails, is dropped
        IOException e = assertThrows(IOException.class, () -> small.allocate(128 * 1024));
        assertTrue(e.getMessage().contains("only 1024 bytes are usable"), e.getMessage());
        small.close();
        fits.close();
        first.close();
        assertEquals(0, files(directory));
    }
}
