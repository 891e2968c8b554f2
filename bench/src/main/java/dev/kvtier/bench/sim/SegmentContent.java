package dev.kvtier.bench.sim;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The bytes a segment must hold: a xorshift64* stream seeded from the segment's identity, so any
 * segment's expected content can be regenerated at any time without keeping a copy. Stateless and
 * thread-safe.
 */
public final class SegmentContent {
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    /** CRC over at most this many bytes per {@link CRC32C#update(ByteBuffer)}: a ByteBuffer view is capped at 2 GiB. */
    private static final long CRC_CHUNK = 1L << 30;

    private SegmentContent() {
    }

    /** A well-mixed content seed from the run seed and the segment's identity (SplitMix64 finaliser). */
    public static long mix(long runSeed, int session, int conversation, int turn) {
        long z = runSeed;
        z = splitMix(z ^ session);
        z = splitMix(z ^ ((long) conversation << 32 | (turn & 0xFFFF_FFFFL)));
        return z == 0 ? 0x9E37_79B9_7F4A_7C15L : z;
    }

    /**
     * The content seed of a trace block from the run seed and the block's hash id: the same block has the
     * same bytes every time it is written, in every run with the same seed. Session -1 keeps these seeds
     * apart from the chat workload's.
     */
    public static long forBlock(long runSeed, long hashId) {
        return mix(runSeed, -1, (int) (hashId >>> 32), (int) hashId);
    }

    private static long splitMix(long x) {
        long z = x + 0x9E37_79B9_7F4A_7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return z ^ (z >>> 31);
    }

    /** Fills all of {@code destination} with the content for {@code contentSeed}. */
    public static void fill(MemorySegment destination, long contentSeed) {
        long state = contentSeed == 0 ? 1 : contentSeed;
        long size = destination.byteSize();
        long offset = 0;
        for (; offset + Long.BYTES <= size; offset += Long.BYTES) {
            state ^= state >>> 12;
            state ^= state << 25;
            state ^= state >>> 27;
            destination.set(LONG, offset, state * 0x2545_F491_4F6C_DD1DL);
        }
        if (offset < size) {
            state ^= state >>> 12;
            state ^= state << 25;
            state ^= state >>> 27;
            long last = state * 0x2545_F491_4F6C_DD1DL;
            for (int i = 0; offset < size; offset++, i++) {
                destination.set(ValueLayout.JAVA_BYTE, offset, (byte) (last >>> (8 * i)));
            }
        }
    }

    /** CRC32C of the segment's bytes (hardware-accelerated on x86 and ARM). */
    public static long checksum(MemorySegment bytes) {
        CRC32C crc = new CRC32C();
        long size = bytes.byteSize();
        for (long offset = 0; offset < size; offset += CRC_CHUNK) {
            crc.update(bytes.asSlice(offset, Math.min(CRC_CHUNK, size - offset)).asByteBuffer());
        }
        return crc.getValue();
    }
}
