package dev.kvtier.bench.sim;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import dev.kvtier.TierFullException;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;

/**
 * Plays trace requests through the prefix-block API ({@code --trace-api prefix}), as an inference runtime
 * would: per request, the cached prefix of its blocks made resident on the GPU and pinned in one call
 * ({@code ensurePrefixResident}, one batched transfer per tier pair; it says how many blocks were cached and
 * where it found each, the per-tier hit counts), its blocks checked (GPU, size, token positions) and the pin
 * closed; then the missing suffix stored in one call ({@code storeBlocks}, on the GPU, the first new block's
 * parent being the last cached one). Only a prefix too large to pin needs a {@code lookupPrefix} to be counted. Every
 * {@value SegmentBlockPlayer#VERIFY_EVERY}th reference is read back and compared; a block the simulator wrote
 * that the cache no longer knows is a failure (the disk tier is unbounded).
 *
 * <p>A trace block's hash id names its whole prefix (the Mooncake format's promise), so its
 * {@link BlockHash} is the id under a fixed namespace word ({@link #hashOf}); block {@code i} of a request
 * is at token positions {@code [i * 512, (i + 1) * 512)}. A prefix larger than the GPU budget cannot be
 * pinned there as a whole: then the blocks are used where they are (counted as found there), and the
 * request's new blocks go where their parent is or slower. With a remote block store ({@code --remote}), a cached block
 * this player never stored was fetched from it (by {@code ensurePrefixResident}): it is counted as found remotely, and
 * from then on checked and removed as one stored here, its bytes being those of the same seed and hash id. One thread; owns its buffers (from the arena).
 */
final class PrefixBlockPlayer implements BlockRequestPlayer {
    /** The high word of every trace block's hash: its namespace (any constant would do). */
    static final long TRACE_NAMESPACE = 0x6b76_7472_6163_6531L; // "kvtrace1"

    private final CacheUnderTest.PrefixBlocks cache;
    private final BlockTrace trace;
    private final TraceCounters counters;
    private final int blockBytes;
    private final BlockContents contents;
    private final Arena arena;
    private final boolean[] written;
    /** Blocks in the order they were first written: removed in reverse (children before parents). */
    private final List<Integer> writeOrder = new ArrayList<>();
    private MemorySegment suffix;

    PrefixBlockPlayer(CacheUnderTest.PrefixBlocks cache, BlockTrace trace, TraceCounters counters, long seed,
                      int blockBytes, SimOptions.VerifyMode verify, Arena arena) {
        this.cache = cache;
        this.trace = trace;
        this.counters = counters;
        this.blockBytes = blockBytes;
        this.contents = new BlockContents(trace, seed, blockBytes, verify, arena);
        this.arena = arena;
        int unique = trace.uniqueBlocks();
        this.written = new boolean[unique];
        this.suffix = arena.allocate(16L * blockBytes, 64);
    }

    /** The block hash of trace block {@code block}. */
    BlockHash hashOf(int block) {
        return new BlockHash(TRACE_NAMESPACE, trace.hashId(block));
    }

    @Override
    public boolean play(int request) {
        int start = trace.start(request);
        int length = trace.end(request) - start;
        List<BlockHash> hashes = new ArrayList<>(length);
        for (int i = 0; i < length; i++) {
            hashes.add(hashOf(trace.block(start + i)));
        }
        Tier[] found = restore(request, hashes, start);
        if (found == null) {
            return false;
        }
        int cached = found.length;
        for (int i = cached; i < length; i++) {
            int block = trace.block(start + i);
            if (written[block]) {
                counters.fail("block " + describe(block) + " was lost: request " + request + "'s cached prefix ends at block "
                        + cached + " but the simulator wrote block " + i);
                return false;
            }
        }
        boolean onGpu = true;
        for (int i = 0; i < cached; i++) {
            Tier tier = found[i];
            if (tier == null) {
                counters.foundRemote++;
            } else {
                counters.foundOn[tier.ordinal()]++;
            }
            counters.prefixCached++;
            onGpu &= tier == Tier.GPU;
            counters.prefixOnGpu += onGpu ? 1 : 0;
        }
        counters.missing += length - cached;
        if (cached < length && !store(request, hashes, cached, start)) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            if (counters.references++ % SegmentBlockPlayer.VERIFY_EVERY == 0
                    && !verify(trace.block(start + i), "reference " + (start + i))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Pins the cached prefix of the request's blocks on the GPU, checks what came back, and lets it go.
     *
     * @return where each block of the cached prefix was found, in order (empty: none cached), null for a block fetched
     *     from the remote store; null on a failure
     */
    private Tier[] restore(int request, List<BlockHash> hashes, int start) {
        CacheUnderTest.PinnedPrefix pin;
        long t0 = System.nanoTime();
        try {
            pin = cache.pinOnGpu(hashes);
        } catch (TierFullException e) {
            // Larger than the room that could be made: used where it is. Nothing moved, so the lookup says where.
            counters.prefixesNotPinned++;
            try {
                return cache.lookup(hashes).toArray(new Tier[0]);
            } catch (RuntimeException lookup) {
                counters.fail("lookupPrefix of request " + request + " failed: " + SimulationRun.describe(lookup));
                return null;
            }
        } catch (RuntimeException e) {
            counters.fail("ensurePrefixResident of request " + request + " (" + hashes.size() + " blocks) failed: "
                    + SimulationRun.describe(e));
            return null;
        }
        try (pin) {
            List<CacheUnderTest.Resident> blocks = pin.blocks();
            Tier[] found = new Tier[blocks.size()];
            if (blocks.isEmpty()) {
                return found; // nothing cached: not a restore, not timed
            }
            counters.timeToResident.recordValue(Math.min(TraceCounters.HISTOGRAM_MAX_NANOS, System.nanoTime() - t0));
            counters.prefixesPinned++;
            if (blocks.size() > hashes.size()) {
                counters.fail("ensurePrefixResident of request " + request + " pinned " + blocks.size() + " blocks of "
                        + hashes.size());
                return null;
            }
            for (int i = 0; i < blocks.size(); i++) {
                CacheUnderTest.Resident resident = blocks.get(i);
                long position = (long) i * BlockTrace.tokensPerBlock();
                if (resident.tier() != Tier.GPU || resident.sizeBytes() != blockBytes || resident.startPosition() != position
                        || resident.endPosition() != position + BlockTrace.tokensPerBlock()) {
                    counters.fail("block " + describe(trace.block(start + i)) + " came back as " + resident + ", expected GPU, "
                            + blockBytes + " bytes at positions [" + position + ", " + (position + BlockTrace.tokensPerBlock()) + ")");
                    return null;
                }
                int block = trace.block(start + i);
                if (written[block]) {
                    found[i] = resident.foundOn();
                } else {
                    // Cached here but never stored here: fetched from the remote store by this call. From now on it
                    // is this cache's block like one stored here (verified, removed at the end).
                    adopt(block);
                    found[i] = null;
                }
            }
            return found;
        } catch (RuntimeException e) {
            counters.fail("closing the pin of request " + request + " failed: " + SimulationRun.describe(e));
            return null;
        }
    }

    /** Takes {@code block}, which another cache wrote to the remote store, as one written here. */
    private void adopt(int block) {
        contents.expect(block);
        written[block] = true;
        writeOrder.add(block);
    }

    /** Stores blocks {@code [cached, length)} of the request in one call. */
    private boolean store(int request, List<BlockHash> hashes, int cached, int start) {
        int count = hashes.size() - cached;
        long bytes = (long) count * blockBytes;
        if (suffix.byteSize() < bytes) {
            suffix = arena.allocate(Math.max(bytes, 2 * suffix.byteSize()), 64);
        }
        MemorySegment content = suffix.asSlice(0, bytes);
        for (int i = 0; i < count; i++) {
            int block = trace.block(start + cached + i);
            MemorySegment one = content.asSlice((long) i * blockBytes, blockBytes);
            contents.write(block, one);
        }
        BlockHash parent = cached == 0 ? BlockHash.ROOT : hashes.get(cached - 1);
        int stored;
        try {
            stored = cache.store(parent, hashes.subList(cached, hashes.size()), content);
        } catch (RuntimeException e) {
            counters.fail("storeBlocks of request " + request + " (" + count + " blocks after block " + cached + ") failed: "
                    + SimulationRun.describe(e));
            return false;
        }
        if (stored != count) {
            counters.fail("storeBlocks of request " + request + " stored " + stored + " of " + count
                    + " blocks the lookup did not find (the trace names a block twice in one request?)");
            return false;
        }
        for (int i = 0; i < count; i++) {
            int block = trace.block(start + cached + i);
            written[block] = true;
            writeOrder.add(block);
        }
        counters.blocksWritten += count;
        counters.bytesWritten += bytes;
        return true;
    }

    /** Reads the block back from wherever it is and compares it with what was written. */
    private boolean verify(int block, String after) {
        MemorySegment readBack = contents.readBuffer();
        try {
            cache.read(hashOf(block), readBack);
        } catch (RuntimeException e) {
            counters.fail("read(" + describe(block) + ") after " + after + " failed: " + SimulationRun.describe(e));
            return false;
        }
        String mismatch = contents.mismatch(block);
        if (mismatch != null) {
            counters.fail("block " + describe(block) + " after " + after + ": " + mismatch);
            return false;
        }
        counters.readBacks++;
        counters.bytesVerified += blockBytes;
        return true;
    }

    @Override
    public void verifyAndRemoveEverything() {
        for (int i = writeOrder.size() - 1; i >= 0 && counters.failure() == null; i--) {
            int block = writeOrder.get(i);
            if (!verify(block, "the run (final pass)")) {
                return;
            }
            try {
                if (!cache.remove(hashOf(block))) {
                    counters.fail("block " + describe(block) + " was lost: remove found nothing");
                    return;
                }
            } catch (RuntimeException e) {
                counters.fail("removeBlock(" + describe(block) + ") failed: " + SimulationRun.describe(e));
                return;
            }
            written[block] = false;
            counters.blocksRemoved++;
        }
    }

    private String describe(int block) {
        return hashOf(block) + " (hash id " + trace.hashId(block) + ", depth " + trace.depth(block) + ")";
    }
}
