package dev.kvtier.bench.sim;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;

/**
 * What each trace block holds and how a read-back of it is judged, for every trace player: 8-byte word {@code i}
 * of a block is {@code pattern[i] ^ seed}, {@code seed} being the block's own (from its hash id,
 * {@link SegmentContent#forBlock}) and {@code pattern} a fixed xorshift stream shared by all blocks, so any block
 * can be written again or compared without keeping its bytes; under {@link SimOptions.VerifyMode#CHECKSUM} only
 * their CRC32C is kept. Two blocks differ in every word (their seeds differ), and the words of one block differ
 * from each other (the pattern's do), so a wrong block, a stale one or bytes at the wrong offset all fail the
 * comparison. Filling is one independent load, xor and store per word: generating each block's own xorshift
 * stream, a chain of dependent shifts per word, cost ~5% of the simulator's playing thread (issue 11).
 *
 * <p>Not thread-safe: one per player, which plays on one thread.
 */
final class BlockContents {
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED;
    private final BlockTrace trace;
    private final long seed;
    private final int blockBytes;
    private final SimOptions.VerifyMode verify;
    private final long[] checksums;
    private final MemorySegment readBack;
    private final MemorySegment expected;
    /** The words every block's content is its seed xor-ed into (a tail shorter than a word included). */
    private final MemorySegment pattern;
    /** {@code pattern}'s whole words on the heap, and where a block's words are made before one bulk copy out. */
    private final long[] patternWords;
    private final long[] words;

    BlockContents(BlockTrace trace, long seed, int blockBytes, SimOptions.VerifyMode verify, Arena arena) {
        this.trace = trace;
        this.seed = seed;
        this.blockBytes = blockBytes;
        this.verify = verify;
        this.checksums = new long[trace.uniqueBlocks()];
        this.readBack = arena.allocate(blockBytes, 64);
        this.expected = arena.allocate(blockBytes, 64);
        this.pattern = arena.allocate(blockBytes, 64);
        SegmentContent.fill(pattern, SegmentContent.mix(seed, -2, 0, 0));
        this.patternWords = pattern.asSlice(0, (long) blockBytes / Long.BYTES * Long.BYTES).toArray(WORD);
        this.words = new long[patternWords.length];
    }

    /**
     * Fills {@code into} ({@code blockBytes} long) with the content of the block whose seed is {@code blockSeed}.
     * The words are made in a heap array, then copied out in bulk: a plain array loop is quick even before the
     * JIT has compiled it fully, where a loop of memory-segment accesses is not (this runs from the first block).
     */
    private void fill(MemorySegment into, long blockSeed) {
        for (int i = 0; i < words.length; i++) {
            words[i] = patternWords[i] ^ blockSeed;
        }
        MemorySegment.copy(words, 0, into, WORD, 0, words.length);
        for (int at = words.length * Long.BYTES, i = 0; at < blockBytes; at++, i++) {
            into.set(ValueLayout.JAVA_BYTE, at, (byte) (pattern.get(ValueLayout.JAVA_BYTE, at) ^ (blockSeed >>> (8 * i))));
        }
    }

    /** Fills {@code into} ({@code blockBytes} long) with {@code block}'s bytes and remembers what they were. */
    void write(int block, MemorySegment into) {
        fill(into, SegmentContent.forBlock(seed, trace.hashId(block)));
        if (verify == SimOptions.VerifyMode.CHECKSUM) {
            checksums[block] = SegmentContent.checksum(into);
        }
    }

    /**
     * Remembers what {@code block} holds without writing it: for a block another writer stored (a remote store's
     * block, fetched), so that {@link #mismatch} can check it as one written here.
     */
    void expect(int block) {
        if (verify == SimOptions.VerifyMode.CHECKSUM) {
            fill(expected, SegmentContent.forBlock(seed, trace.hashId(block)));
            checksums[block] = SegmentContent.checksum(expected);
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
                fill(expected, SegmentContent.forBlock(seed, trace.hashId(block)));
                long offset = readBack.mismatch(expected);
                yield offset < 0 ? null : String.format(Locale.ROOT, "byte %d of %d differs: wrote 0x%02x, read back 0x%02x",
                        offset, blockBytes, expected.get(ValueLayout.JAVA_BYTE, offset),
                        readBack.get(ValueLayout.JAVA_BYTE, offset));
            }
        };
    }
}
