package dev.kvtier.bench.sim;

import dev.kvtier.prefix.BlockHash;
import java.util.List;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Optional;

import dev.kvtier.Backend;
import dev.kvtier.RemoteStoreConfig;
import dev.kvtier.RemoteStoreStats;
import dev.kvtier.store.Tier;

/**
 * The few cache operations the simulator drives. One implementation adapts {@code dev.kvtier.KvTierCache};
 * tests use an in-memory fake. Implementations must be thread-safe: the simulator calls them from
 * several request threads at once (never for the same key at the same time).
 */
public interface CacheUnderTest extends AutoCloseable {

    /**
     * Opens a cache; the simulator closes it.
     */
    @FunctionalInterface
    interface Factory {
        CacheUnderTest open(Settings settings);
    }

    /**
     * What a cache is opened with.
     *
     * @param gpuBudgetBytes GPU tier budget
     * @param cpuBudgetBytes pinned host tier budget
     * @param diskDirectory  the disk tier's directory (exists, owned by the caller)
     * @param pageSizeBytes  page size
     * @param policy         demotion policy
     * @param backend        copy backend
     * @param remote         the remote block store prefix blocks are shared through; empty = none
     */
    record Settings(long gpuBudgetBytes, long cpuBudgetBytes, Path diskDirectory, int pageSizeBytes,
                    PolicyChoice policy, Backend backend, Optional<RemoteStoreConfig> remote) {

        /** Settings without a remote store. */
        Settings(long gpuBudgetBytes, long cpuBudgetBytes, Path diskDirectory, int pageSizeBytes, PolicyChoice policy,
                 Backend backend) {
            this(gpuBudgetBytes, cpuBudgetBytes, diskDirectory, pageSizeBytes, policy, backend, Optional.empty());
        }
    }

    /**
     * What {@link #ensureResidentOnGpu} reports back: the simulator checks it against what it wrote.
     *
     * @param startPosition first token position (inclusive)
     * @param endPosition   last token position (exclusive)
     * @param sizeBytes     segment size
     * @param tier          where the segment is now
     * @param foundOn       where the call found it (the tier it was moved up from, or {@code tier} when it was there):
     *                      the simulator counts its hits per tier by this, one call per reference as a runtime makes
     */
    record Resident(long startPosition, long endPosition, long sizeBytes, Tier tier, Tier foundOn) {
    }

    /** Writes a new segment (a copy of {@code bytes}) onto the GPU tier, making room as the cache does; blocks until in place. */
    void putOnGpu(String key, long startPosition, long endPosition, MemorySegment bytes);

    /**
     * Makes the segment resident on the GPU tier, making room first; blocks until the bytes are in place.
     *
     * @return where it is and where it was found, or null when the cache does not know the key
     */
    Resident ensureResidentOnGpu(String key);

    /** Where the segment lives now, or empty if the cache does not know it. */
    Optional<Tier> tierOf(String key);

    /** Copies the segment's bytes, wherever they are, into host memory {@code destination} (exactly its size). */
    void read(String key, MemorySegment destination);

    /** Removes the segment; false if it was not there. */
    boolean remove(String key);

    /**
     * The cache's prefix-block view for blocks of {@code tokensPerBlock} tokens and {@code blockBytes} bytes,
     * or empty when it has none (then only {@code --trace-api segments} can play a trace on it).
     */
    default Optional<PrefixBlocks> prefixBlocks(int tokensPerBlock, int blockBytes) {
        return Optional.empty();
    }

    /**
     * The prefix-block operations the trace mode drives ({@code dev.kvtier.prefix.PrefixBlockCache}), in the
     * simulator's terms. Thread-safe as the cache is.
     */
    interface PrefixBlocks {
        /** The tier of each leading block of {@code hashes} that is cached, in order. */
        List<Tier> lookup(List<BlockHash> hashes);

        /**
         * Makes the longest cached prefix of {@code hashes} resident on the GPU and pins it, returning when the
         * bytes are in place; the result lists each pinned block (its positions, size, tier and the tier it was
         * found on), none when the first block is not cached.
         */
        PinnedPrefix pinOnGpu(List<BlockHash> hashes);

        /** Stores new blocks on the GPU after {@code parent} (block {@code i} at bytes {@code i * blockBytes}); returns how many were new. */
        int store(BlockHash parent, List<BlockHash> hashes, MemorySegment bytes);

        /** Copies a block's bytes, wherever it is, into host memory {@code destination}. */
        void read(BlockHash hash, MemorySegment destination);

        /** Removes a block without cached children; false if it was not there. */
        boolean remove(BlockHash hash);
    }

    /** Blocks held on the GPU until closed. */
    interface PinnedPrefix extends AutoCloseable {
        /** The pinned blocks, in prefix order. */
        List<Resident> blocks();

        @Override
        void close();
    }

    /** Counters since the cache was opened. */
    Counters counters();

    /** The traffic with the remote block store since the cache was opened; {@link RemoteStoreStats#NONE} without one. */
    default RemoteStoreStats remoteStats() {
        return RemoteStoreStats.NONE;
    }

    /** Which backend moves the bytes and why it was chosen, e.g. {@code "host (no GPU: ...)"}. */
    String backendDescription();

    /** Closes the cache and frees every tier's memory; idempotent. */
    @Override
    void close();

    /**
     * A snapshot of the cache's counters.
     *
     * @param usedBytes        bytes used per tier, indexed by {@link Tier#ordinal()}
     * @param transfers        completed tier transfers
     * @param failures         transfers that failed (and were rolled back)
     * @param bytesMovedByPair bytes moved from tier {@code i} to tier {@code j} at {@code [i * 3 + j]}
     */
    record Counters(long[] usedBytes, long transfers, long failures, long[] bytesMovedByPair) {
        public Counters {
            usedBytes = usedBytes.clone();
            bytesMovedByPair = bytesMovedByPair.clone();
            if (usedBytes.length != Tier.values().length || bytesMovedByPair.length != Tier.values().length * Tier.values().length) {
                throw new IllegalArgumentException("usedBytes needs 3 entries and bytesMovedByPair 9");
            }
        }

        /** Bytes used on {@code tier}. */
        public long used(Tier tier) {
            return usedBytes[tier.ordinal()];
        }

        /** Bytes moved from {@code from} to {@code to}. */
        public long bytesMoved(Tier from, Tier to) {
            return bytesMovedByPair[from.ordinal() * Tier.values().length + to.ordinal()];
        }

        /** Every counter of {@code this} minus {@code earlier} (usage stays as now). */
        public Counters since(Counters earlier) {
            long[] moved = bytesMovedByPair.clone();
            for (int i = 0; i < moved.length; i++) {
                moved[i] -= earlier.bytesMovedByPair[i];
            }
            return new Counters(usedBytes, transfers - earlier.transfers, failures - earlier.failures, moved);
        }
    }
}
