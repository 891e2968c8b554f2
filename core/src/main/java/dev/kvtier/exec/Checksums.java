package dev.kvtier.exec;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.zip.CRC32C;

/**
 * CRC32C over host memory (hardware accelerated through {@link CRC32C}).
 *
 * <p>Memory-mapped runs (the DISK tier) are never read by the CRC32C intrinsic directly: a mapping
 * whose file was truncated, or whose storage fails, raises SIGBUS on the first access, and inside an
 * intrinsic or a bulk buffer operation that kills the JVM. So a mapped run is first copied, a piece
 * at a time, into a small heap buffer with {@link MemorySegment#copy}, the one access path on which
 * the JVM turns that fault into an {@link InternalError}, and the CRC is taken over the buffer (the
 * cost against the direct path is measured by {@code dev.kvtier.bench.copy.MappedChecksumBenchmark}).
 *
 * <p>Bytes that cannot be read that way (every page of a piece whose copy faulted) are checksummed
 * as zeros, as the kernel shows the hole left by a truncation, and a warning names the fault. The
 * result then no longer matches the checksum taken when the bytes were written, which the cache
 * reports as a corrupted segment; should the lost pages have held only zeros, the guarded copy that
 * follows fails instead. Either way the caller gets an exception, never a dead JVM and never the
 * fault's bytes. Other runs (native memory that cannot vanish, heap arrays) go to the intrinsic as
 * before.
 *
 * <p>Thread-safe. Each call borrows a {@value #BUFFER}-byte heap buffer from a small bounded pool
 * (two per core) and gives it back.
 */
public final class Checksums {
    private static final long MAX_PIECE = 1L << 30;
    /** Big enough that the per-piece cost is noise, small enough to stay in L2 between copy and CRC. */
    static final int BUFFER = 64 << 10;
    /** The granularity at which a faulting piece is retried: a page is what a fault takes away. */
    private static final int PAGE = 4096;
    /** The pool: a slot holds a free buffer or null; taken and given back by one atomic swap each (no lock). */
    private static final AtomicReferenceArray<byte[]> BUFFERS =
            new AtomicReferenceArray<>(2 * Runtime.getRuntime().availableProcessors());

    private Checksums() {
    }

    /**
     * The CRC32C of the runs' bytes taken in order, as if they were one buffer. Mapped runs are read
     * through a guarded copy (see the class comment): a run whose file was truncated or failed gives a
     * checksum that does not describe the lost bytes, never a crash.
     *
     * @throws IllegalArgumentException if a run is not host-readable memory
     */
    public static int crc32c(List<MemorySegment> runs) {
        CRC32C crc = new CRC32C();
        byte[] buffer = null;
        try {
            for (MemorySegment run : runs) {
                if (run.isMapped()) {
                    if (buffer == null) {
                        buffer = takeBuffer();
                    }
                    guardedUpdate(crc, run, buffer);
                    continue;
                }
                for (long offset = 0; offset < run.byteSize(); offset += MAX_PIECE) {
                    crc.update(run.asSlice(offset, Math.min(MAX_PIECE, run.byteSize() - offset)).asByteBuffer());
                }
            }
        } finally {
            if (buffer != null) {
                giveBack(buffer);
            }
        }
        return (int) crc.getValue();
    }

    /**
     * A pooled buffer: allocating (and zeroing) 64 KiB per call cost as much as the checksum itself
     * for small segments (measured by the benchmark named above); the pool is bounded, so it holds at
     * most a few buffers per core however many threads checksum.
     */
    private static byte[] takeBuffer() {
        for (int slot = 0; slot < BUFFERS.length(); slot++) {
            if (BUFFERS.get(slot) != null) {
                byte[] buffer = BUFFERS.getAndSet(slot, null);
                if (buffer != null) {
                    return buffer;
                }
            }
        }
        return new byte[BUFFER];
    }

    /** Puts a buffer back in a free slot; dropped when the pool is full. */
    private static void giveBack(byte[] buffer) {
        for (int slot = 0; slot < BUFFERS.length(); slot++) {
            if (BUFFERS.get(slot) == null && BUFFERS.compareAndSet(slot, null, buffer)) {
                return;
            }
        }
    }

    /** Feeds a mapped run to {@code crc} through {@code buffer}, a piece at a time, never touching the mapping unguarded. */
    private static void guardedUpdate(CRC32C crc, MemorySegment run, byte[] buffer) {
        long size = run.byteSize();
        long unreadable = 0;
        InternalError firstFault = null;
        for (long offset = 0; offset < size; offset += buffer.length) {
            int length = (int) Math.min(buffer.length, size - offset);
            try {
                MemorySegment.copy(run, ValueLayout.JAVA_BYTE, offset, buffer, 0, length);
            } catch (InternalError fault) {
                // Some page of this piece is gone: retry page by page, zeros for those that fault.
                firstFault = firstFault == null ? fault : firstFault;
                unreadable += copyPageByPage(run, offset, buffer, length);
            }
            crc.update(buffer, 0, length);
        }
        if (firstFault != null) {
            System.getLogger(Checksums.class.getName()).log(System.Logger.Level.WARNING, unreadable + " of " + size
                    + " bytes of mapped memory at 0x" + Long.toHexString(run.address()) + " could not be read (the"
                    + " file behind the mapping was truncated or its storage failed: " + firstFault.getMessage()
                    + "); they were checksummed as zeros, so the segment will not verify");
        }
    }

    /** @return the bytes that faulted (left as zeros in {@code buffer}) */
    private static long copyPageByPage(MemorySegment run, long offset, byte[] buffer, int length) {
        long unreadable = 0;
        for (int at = 0; at < length; at += PAGE) {
            int piece = Math.min(PAGE, length - at);
            try {
                MemorySegment.copy(run, ValueLayout.JAVA_BYTE, offset + at, buffer, at, piece);
            } catch (InternalError fault) {
                java.util.Arrays.fill(buffer, at, at + piece, (byte) 0);
                unreadable += piece;
            }
        }
        return unreadable;
    }
}
