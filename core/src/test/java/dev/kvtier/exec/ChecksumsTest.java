package dev.kvtier.exec;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The guarded path for mapped runs (issue 9 item 2) gives exactly the CRC32C of the bytes, across
 * piece boundaries and mixed with native and heap runs. (That a truncated mapping gives an exception
 * instead of a SIGBUS is tested in a child JVM: {@code Issue9RegressionTest}.)
 */
class ChecksumsTest {
    @TempDir
    Path directory;

    private static int reference(byte[]... parts) {
        CRC32C crc = new CRC32C();
        for (byte[] part : parts) {
            crc.update(part);
        }
        return (int) crc.getValue();
    }

    @Test
    void mappedRunsChecksumExactlyTheirBytesAcrossPieceBoundaries() throws IOException {
        int size = 3 * Checksums.BUFFER + 4097;
        byte[] bytes = new byte[size];
        new SplittableRandom(3).nextBytes(bytes);
        Path file = Files.write(directory.resolve("f"), bytes);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
             Arena arena = Arena.ofConfined()) {
            MemorySegment mapping = channel.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            for (int length : new int[] {0, 1, Checksums.BUFFER - 1, Checksums.BUFFER, Checksums.BUFFER + 1, size}) {
                byte[] expected = java.util.Arrays.copyOf(bytes, length);
                assertEquals(reference(expected), Checksums.crc32c(List.of(mapping.asSlice(0, length))), "length " + length);
            }
            byte[] heap = {1, 2, 3};
            MemorySegment native_ = arena.allocate(5000);
            byte[] nativeBytes = new byte[5000];
            new SplittableRandom(4).nextBytes(nativeBytes);
            MemorySegment.copy(MemorySegment.ofArray(nativeBytes), 0, native_, 0, 5000);
            byte[] tail = java.util.Arrays.copyOfRange(bytes, 100, 100 + Checksums.BUFFER + 7);
            assertEquals(reference(heap, nativeBytes, tail, heap), Checksums.crc32c(List.of(MemorySegment.ofArray(heap),
                    native_, mapping.asSlice(100, tail.length), MemorySegment.ofArray(heap))));
        }
    }
}
