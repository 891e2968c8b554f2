package dev.kvtier.bench.sim;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;

/**
 * What each trace block holds and how a read-back of it is judged, for every trace player: the bytes come from
 * {@link SegmentContent} seeded by the block's hash id, so any block can be written again or compared without
 * keeping its bytes; under {@link SimOptions.VerifyMode#CHECKSUM} only their CRC32C is kept. Not thread-safe: one
 * per player, which plays on one thread.
 */
final class BlockContents {
    private final BlockTrace trace;
    private final long seed;
    private final int blockBytes;
    private final SimOptions.VerifyMode verify;
    private final long[] checksums;
    private final MemorySegment readBack;
    private final MemorySegment expected;

    BlockContents(BlockTrace trace, long seed, int blockBytes, SimOptions.VerifyMode verify, Arena arena) {
        this.trace = trace;
        this.seed = seed;
        this.blockBytes = blockBytes;
        this.verify = verify;
        this.checksums = new long[trace.uniqueBlocks()];
        this.readBack = arena.allocate(blockBytes, 64);
        this.expected = arena.allocate(blockBytes, 64);
    }

    /** Fills {@code into} ({@code blockBytes} long) with {@code block}'s bytes and remembers what they were. */
    void write(int block, MemorySegment into) {
        SegmentContent.fill(into, SegmentContent.forBlock(seed, trace.hashId(block)));
        if (verify == SimOptions.VerifyMode.CHECKSUM) {
            checksums[block] = SegmentContent.checksum(into);
        }
    }

    /**
     * The buffer to read a block back into, poisoned first: a read that silently copies nothing cannot pass as
     * the previous block's bytes. Valid until the next call.
     */
    MemorySegment readBuffer() {
        readBack.fill((byte) 0x5A);
        return readBack;
    }

    /** How the bytes last read into {@link #readBuffer()} differ from what {@code block} holds; null when they do not. */
    String mismatch(int block) {
        return switch (verify) {
            case CHECKSUM -> {
                long crc = SegmentContent.checksum(readBack);
                yield crc == checksums[block] ? null : String.format(Locale.ROOT,
                        "checksum mismatch: wrote CRC32C 0x%08x, read back 0x%08x", checksums[block], crc);
            }
            case FULL -> {
                SegmentContent.fill(expected, SegmentContent.forBlock(seed, trace.hashId(block)));
                long offset = readBack.mismatch(expected);
                yield offset < 0 ? null : String.format(Locale.ROOT, "byte %d of %d differs: wrote 0x%02x, read back 0x%02x",
                        offset, blockBytes, expected.get(ValueLayout.JAVA_BYTE, offset),
                        readBack.get(ValueLayout.JAVA_BYTE, offset));
            }
        };
    }
}
