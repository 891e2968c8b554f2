package dev.kvtier.exec;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.zip.CRC32C;

/** CRC32C over host memory (hardware accelerated through {@link CRC32C} on direct buffers). */
final class Checksums {
    private static final long MAX_PIECE = 1L << 30;

    private Checksums() {
    }

    /**
     * The CRC32C of the runs' bytes taken in order, as if they were one buffer.
     *
     * @throws IllegalArgumentException if a run is not host-readable native memory
     */
    static int crc32c(List<MemorySegment> runs) {
        CRC32C crc = new CRC32C();
        for (MemorySegment run : runs) {
            for (long offset = 0; offset < run.byteSize(); offset += MAX_PIECE) {
                crc.update(run.asSlice(offset, Math.min(MAX_PIECE, run.byteSize() - offset)).asByteBuffer());
            }
        }
        return (int) crc.getValue();
    }
}
