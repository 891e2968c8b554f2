package dev.kvtier.exec;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MappedFileChunkAllocatorTest {
    @TempDir
    Path directory;

    private long extentFiles() throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.count();
        }
    }

    @Test
    void extentsAreMappedFilesThatGoAwayOnClose() throws IOException {
        MappedFileChunkAllocator allocator = new MappedFileChunkAllocator(directory.resolve("sub"));
        MemoryChunk chunk = allocator.allocate(64 * 1024);
        assertEquals(64 * 1024, chunk.memory().byteSize());
        chunk.memory().set(ValueLayout.JAVA_LONG, 8, 42L);
        assertEquals(42L, chunk.memory().get(ValueLayout.JAVA_LONG, 8));
        Path sub = directory.resolve("sub");
        try (Stream<Path> files = Files.list(sub)) {
            Path file = files.findFirst().orElseThrow();
            assertEquals(64 * 1024, Files.size(file), "preallocated to the full size");
        }
        chunk.close();
        chunk.close();
        try (Stream<Path> files = Files.list(sub)) {
            assertEquals(0, files.count());
        }
        assertEquals(1, extentFiles());
    }

    @Test
    void anUnusableDirectoryFailsWithItsName() throws IOException {
        Path notADirectory = Files.writeString(directory.resolve("file"), "x");
        MappedFileChunkAllocator allocator = new MappedFileChunkAllocator(notADirectory);
        IOException e = assertThrows(IOException.class, () -> allocator.allocate(4096));
        assertTrue(e.getMessage().contains(notADirectory.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("disk directory"), e.getMessage());
    }
}
