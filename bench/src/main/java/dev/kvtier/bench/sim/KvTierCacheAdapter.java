package dev.kvtier.bench.sim;

import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.prefix.ResidentBlock;
import java.util.ArrayList;
import java.util.List;

import java.lang.foreign.MemorySegment;
import java.util.Optional;

import dev.kvtier.Backend;
import dev.kvtier.CacheStats;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.RemoteStoreStats;
import dev.kvtier.ResidentSegment;
import dev.kvtier.SegmentNotFoundException;
import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;

/**
 * {@link CacheUnderTest} over kvtier's {@link KvTierCache}: a thin translation, nothing more. Thread-safe
 * as the cache is; {@link #close()} closes the cache.
 */
final class KvTierCacheAdapter implements CacheUnderTest {
    private final KvTierCache cache;

    private KvTierCacheAdapter(KvTierCache cache) {
        this.cache = cache;
    }

    /** Opens a {@link KvTierCache} with the simulator's settings. */
    static CacheUnderTest open(Settings settings) {
        return new KvTierCacheAdapter(KvTierCache.open(config(settings)));
    }

    /** The adapter over an open cache (a rank process keeps the cache too, for its cluster bridge); closes it. */
    static KvTierCacheAdapter wrap(KvTierCache cache) {
        return new KvTierCacheAdapter(cache);
    }

    /** The cache this adapter translates to. */
    KvTierCache kvTierCache() {
        return cache;
    }

    /** The cache configuration of the simulator's settings. */
    static KvTierConfig config(Settings settings) {
        KvTierConfig.Builder builder = KvTierConfig.builder();
        settings.remote().ifPresent(builder::remote);
        return builder
                .gpuBudgetBytes(settings.gpuBudgetBytes())
                .cpuBudgetBytes(settings.cpuBudgetBytes())
                .diskDirectory(settings.diskDirectory())
                .pageSizeBytes(settings.pageSizeBytes())
                .policy(switch (settings.policy()) {
                    case LFU -> DemotionPolicy.leastAccessedFirst();
                    case LRU -> DemotionPolicy.leastRecentlyUsed();
                    case S3_FIFO -> DemotionPolicy.s3Fifo();
                    case W_TINYLFU -> DemotionPolicy.wTinyLfu();
                    case LRU_2 -> DemotionPolicy.lru2();
                    case ARC -> DemotionPolicy.arc();
                    case CHAIN_S3_FIFO -> DemotionPolicy.chainAwareS3Fifo();
                    case ADAPTIVE_S3_FIFO -> DemotionPolicy.adaptiveS3Fifo();
                    case ADAPTIVE_CONTINUATION_S3_FIFO -> DemotionPolicy.adaptiveContinuationS3Fifo();
                    case ADAPTIVE_S3_FIFO_LFU -> DemotionPolicy.adaptiveS3FifoLfu();
                })
                .backend(settings.backend())
                .build();
    }

    @Override
    public void putOnGpu(String key, long startPosition, long endPosition, MemorySegment bytes) {
        cache.put(key, PositionRange.of(startPosition, endPosition), bytes, Tier.GPU);
    }

    @Override
    public Resident ensureResidentOnGpu(String key) {
        ResidentSegment resident;
        try {
            resident = cache.ensureResident(key, Tier.GPU);
        } catch (SegmentNotFoundException e) {
            return null;
        }
        return new Resident(resident.positions().start(), resident.positions().end(), resident.sizeBytes(),
                resident.tier(), resident.foundOn());
    }

    @Override
    public Optional<Tier> tierOf(String key) {
        return cache.get(key).map(SegmentMeta::tier);
    }

    @Override
    public void read(String key, MemorySegment destination) {
        cache.read(key, destination);
    }

    @Override
    public boolean remove(String key) {
        return cache.remove(key).isPresent();
    }

    @Override
    public Optional<PrefixBlocks> prefixBlocks(int tokensPerBlock, int blockBytes) {
        PrefixBlockCache blocks = cache.prefixBlocks(BlockLayout.of(tokensPerBlock, blockBytes));
        return Optional.of(new PrefixBlocks() {
            @Override
            public List<Tier> lookup(List<BlockHash> hashes) {
                return blocks.lookupPrefix(hashes).tiers();
            }

            @Override
            public PinnedPrefix pinOnGpu(List<BlockHash> hashes) {
                PrefixPin pin = blocks.ensurePrefixResident(hashes, Tier.GPU);
                List<Resident> resident = new ArrayList<>(pin.size());
                for (ResidentBlock block : pin.blocks()) {
                    long size = 0;
                    for (MemorySegment page : block.pages()) {
                        size += page.byteSize();
                    }
                    resident.add(new Resident(block.positions().start(), block.positions().end(), size, block.tier(),
                            block.foundOn()));
                }
                return new PinnedPrefix() {
                    @Override
                    public List<Resident> blocks() {
                        return resident;
                    }

                    @Override
                    public void close() {
                        pin.close();
                    }
                };
            }

            @Override
            public int store(BlockHash parent, List<BlockHash> hashes, MemorySegment bytes) {
                return blocks.storeBlocks(parent, hashes, bytes, Tier.GPU);
            }

            @Override
            public void read(BlockHash hash, MemorySegment destination) {
                blocks.readBlock(hash, destination);
            }

            @Override
            public boolean remove(BlockHash hash) {
                return blocks.removeBlock(hash);
            }
        });
    }

    @Override
    public Counters counters() {
        CacheStats stats = cache.stats();
        Tier[] tiers = Tier.values();
        long[] used = new long[tiers.length];
        long[] moved = new long[tiers.length * tiers.length];
        for (Tier from : tiers) {
            used[from.ordinal()] = stats.used(from);
            for (Tier to : tiers) {
                moved[from.ordinal() * tiers.length + to.ordinal()] = stats.bytesMoved(from, to);
            }
        }
        return new Counters(used, stats.transfers(), stats.failures(), moved);
    }

    @Override
    public RemoteStoreStats remoteStats() {
        return cache.stats().remote();
    }

    @Override
    public String backendDescription() {
        return cache.backendDescription();
    }

    @Override
    public void close() {
        cache.close();
    }
}
