package dev.kvtier.bench.sim;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Optional;

import dev.kvtier.store.Tier;

/**
 * Plays trace requests through the segment API ({@code --trace-api segments}): each block is one segment keyed
 * by its hash id. One cache call per reference, as a serving engine makes: a block the simulator has written is
 * made resident on the GPU ({@code ensureResident}, which also says where it found the block: the per-tier hit
 * counts); a block it has not (its first use) is {@code put} on the GPU with content generated from the block's
 * hash id ({@link BlockContents}); every {@value #VERIFY_EVERY}th reference is read back and compared. A block
 * the simulator wrote that the cache no longer knows is a failure (the disk tier is unbounded: nothing may be
 * dropped).
 *
 * <p>A block's token positions are {@code [depth * 512, (depth + 1) * 512)}, its depth being its index in
 * the request that first used it; they must come back unchanged. One thread; owns its buffers (from the
 * arena it is given).
 */
final class SegmentBlockPlayer implements BlockRequestPlayer {
    /** One reference in this many is read back and compared. */
    static final int VERIFY_EVERY = 16;

    private final CacheUnderTest cache;
    private final BlockTrace trace;
    private final TraceCounters counters;
    private final int blockBytes;
    private final BlockContents contents;
    private final String[] keys;
    private final boolean[] written;
    private final byte[] lastSeen;
    private final MemorySegment content;

    SegmentBlockPlayer(CacheUnderTest cache, BlockTrace trace, TraceCounters counters, long seed, int blockBytes,
                       SimOptions.VerifyMode verify, Arena arena) {
        this.cache = cache;
        this.trace = trace;
        this.counters = counters;
        this.blockBytes = blockBytes;
        this.contents = new BlockContents(trace, seed, blockBytes, verify, arena);
        int unique = trace.uniqueBlocks();
        this.keys = new String[unique];
        this.written = new boolean[unique];
        this.lastSeen = new byte[unique];
        this.content = arena.allocate(blockBytes, 64);
    }

    /** The segment key of {@code block}: {@code b} and its hash id in decimal. */
    private String key(int block) {
        String key = keys[block];
        if (key == null) {
            key = keys[block] = "b" + trace.hashId(block);
        }
        return key;
    }

    @Override
    public boolean play(int request) {
        boolean inCachedPrefix = true;
        boolean inGpuPrefix = true;
        for (int i = trace.start(request); i < trace.end(request); i++) {
            int block = trace.block(i);
            Tier found = reference(block);
            if (counters.failure() != null) {
                return false;
            }
            inCachedPrefix &= found != null;
            inGpuPrefix &= found == Tier.GPU;
            counters.prefixCached += inCachedPrefix ? 1 : 0;
            counters.prefixOnGpu += inGpuPrefix ? 1 : 0;
            if (counters.references++ % VERIFY_EVERY == 0 && !verify(block, "reference " + i)) {
                return false;
            }
        }
        return true;
    }

    /**
     * One block reference; returns where the block was found (null: not cached). The disk tier is unbounded, so
     * a block is cached exactly when the simulator has written it: no call is needed to learn that.
     */
    private Tier reference(int block) {
        if (!written[block]) {
            counters.missing++;
            put(block);
            return null;
        }
        String key = key(block);
        CacheUnderTest.Resident resident;
        try {
            long t0 = System.nanoTime();
            resident = cache.ensureResidentOnGpu(key);
            counters.timeToResident.recordValue(Math.min(TraceCounters.HISTOGRAM_MAX_NANOS, System.nanoTime() - t0));
        } catch (RuntimeException e) {
            counters.fail("ensureResident(" + describe(block) + ", GPU) from " + TierLabels.label(Tier.values()[lastSeen[block]])
                    + " (last seen there) failed: " + SimulationRun.describe(e));
            return null;
        }
        if (resident == null) {
            counters.fail("block " + describe(block) + " was lost: the cache no longer knows it (last seen on "
                    + TierLabels.label(Tier.values()[lastSeen[block]]) + ")");
            return null;
        }
        Tier before = resident.foundOn();
        counters.foundOn[before.ordinal()]++;
        long start = (long) trace.depth(block) * BlockTrace.tokensPerBlock();
        if (resident.tier() != Tier.GPU || resident.sizeBytes() != blockBytes || resident.startPosition() != start
                || resident.endPosition() != start + BlockTrace.tokensPerBlock()) {
            counters.fail("block " + describe(block) + " came back from " + TierLabels.label(before) + " as " + resident
                    + ", expected GPU, " + blockBytes + " bytes at positions [" + start + ", "
                    + (start + BlockTrace.tokensPerBlock()) + ")");
        }
        lastSeen[block] = (byte) Tier.GPU.ordinal();
        return before;
    }

    private void put(int block) {
        contents.write(block, content);
        long start = (long) trace.depth(block) * BlockTrace.tokensPerBlock();
        try {
            cache.putOnGpu(key(block), start, start + BlockTrace.tokensPerBlock(), content);
        } catch (RuntimeException e) {
            counters.fail("put(" + describe(block) + ", GPU) failed: " + SimulationRun.describe(e));
            return;
        }
        written[block] = true;
        lastSeen[block] = (byte) Tier.GPU.ordinal();
        counters.blocksWritten++;
        counters.bytesWritten += blockBytes;
    }

    /** Reads the block back from wherever it is and compares it with what was written. */
    private boolean verify(int block, String after) {
        MemorySegment readBack = contents.readBuffer();
        try {
            cache.read(key(block), readBack);
        } catch (RuntimeException e) {
            counters.fail("read(" + describe(block) + ") after " + after + " failed: " + SimulationRun.describe(e));
            return false;
        }
        String mismatch = contents.mismatch(block);
        if (mismatch != null) {
            counters.fail("block " + describe(block) + " after " + after + ": " + mismatch + " (last seen on "
                    + TierLabels.label(Tier.values()[lastSeen[block]]) + ")");
            return false;
        }
        counters.readBacks++;
        counters.bytesVerified += blockBytes;
        return true;
    }

    @Override
    public void verifyAndRemoveEverything() {
        for (int block = 0; block < written.length && counters.failure() == null; block++) {
            if (!written[block]) {
                continue;
            }
            try {
                Optional<Tier> tier = cache.tierOf(key(block));
                if (tier.isEmpty()) {
                    counters.fail("block " + describe(block) + " was lost before the final pass");
                    return;
                }
                lastSeen[block] = (byte) tier.get().ordinal();
            } catch (RuntimeException e) {
                counters.fail("tierOf(" + describe(block) + ") failed: " + SimulationRun.describe(e));
                return;
            }
            if (!verify(block, "the run (final pass)")) {
                return;
            }
            try {
                if (!cache.remove(key(block))) {
                    counters.fail("block " + describe(block) + " was lost: remove found nothing");
                    return;
                }
            } catch (RuntimeException e) {
                counters.fail("remove(" + describe(block) + ") failed: " + SimulationRun.describe(e));
                return;
            }
            written[block] = false;
            counters.blocksRemoved++;
        }
    }

    private String describe(int block) {
        return key(block) + " (hash id " + trace.hashId(block) + ", depth " + trace.depth(block) + ")";
    }
}
