package dev.kvtier.prefix;

import dev.kvtier.ResidentSegment;
import dev.kvtier.store.Tier;
import dev.kvtier.tiering.BlockKeys;
import dev.kvtier.tiering.EngineViews;
import dev.kvtier.tiering.OperationGate;
import dev.kvtier.tiering.TieringEngine;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Prefix blocks, the API inference runtimes speak (vLLM, SGLang, LMCache, Dynamo): a request's KV cache is a
 * chain of fixed-size blocks, each named by a {@link BlockHash} chained over its parent's
 * ({@link BlockHasher}), so equal prefixes share blocks. Ask how many leading blocks are cached and where
 * ({@link #lookupPrefix}), bring them to the GPU together and hold them there ({@link #ensurePrefixResident},
 * or layer by layer: {@link #ensurePrefixResidentByLayer}), and store the blocks computed after them
 * ({@link #storeBlocks}). Obtained from {@code KvTierCache.prefixBlocks(layout)}: blocks live in that cache's
 * tiers beside its segments, under budgets, policy and lifecycle they share (each block is a segment keyed
 * {@link #keyOf}; leave those keys to this class).
 *
 * <h2>Promises</h2>
 * <ul>
 *   <li><b>Thread-safe.</b> Every method may be called from any thread; calls on the same blocks are
 *       serialized, calls on different chains run concurrently.</li>
 *   <li><b>One batch per tier pair.</b> The blocks a restore moves are copied together: one
 *       {@code cudaMemcpyBatchAsync} (and one wait) per tier pair on the CUDA backend, or one per layer in the
 *       layered form. All or nothing: when a copy fails, every block stays where it was.</li>
 *   <li><b>Prefix-aware eviction.</b> A block without its parent is useless, so: a block is never demoted out
 *       of a tier while a child of it has its bytes on that tier or a faster one (chains leave a tier tail
 *       first); a new block is placed on the tier asked for or its parent's tier, whichever is slower; and so
 *       a child is never on a faster tier than its parent, and no parent leaves the cache while a child of it
 *       stays (eviction never removes from DISK; {@link #removeBlock} refuses a block with children). This
 *       holds however the policy ranks blocks: its candidates are filtered, not reordered.</li>
 *   <li><b>Never a wrong byte, bounded waits, errors</b>: as {@code KvTierCache} (the same exceptions:
 *       {@code TierFullException} when no room can be made for the whole prefix, {@code TransferFailedException},
 *       {@code SegmentCorruptedException}; {@link IllegalArgumentException} naming a bad argument;
 *       {@link IllegalStateException} after the cache was closed).</li>
 * </ul>
 *
 * <h2>Chains and namespaces</h2>
 * A chain starts at a block whose parent is not a cached block: {@link BlockHash#ROOT}, or a namespace root
 * ({@link BlockHasher#namespaceRoot}: one per model or LoRA adapter, so equal token ids under different
 * weights never share blocks). The hashes given to {@link #lookupPrefix} and the restores are a request's
 * blocks from its first; the cached prefix ends at the first block that is not cached as the child of the one
 * before it.
 */
public final class PrefixBlockCache {
    /** Every block's segment key is this followed by its hash's 32 hex digits. */
    public static final String KEY_PREFIX = BlockKeys.PREFIX;

    static {
        // The door builds this view through EngineViews, so no public factory names the internal engine.
        EngineViews.register(PrefixBlockCache.class, BlockLayout.class, PrefixBlockCache::over);
    }

    private final TieringEngine engine;
    private final OperationGate gate;
    private final BlockLayout layout;
    private final long[][] layerOffsets;
    private final long[][] layerLengths;

    private PrefixBlockCache(TieringEngine engine, BlockLayout layout) {
        this.engine = engine;
        this.gate = engine.gate();
        this.layout = layout;
        this.layerOffsets = new long[layout.layers()][];
        this.layerLengths = new long[layout.layers()][];
        for (int l = 0; l < layout.layers(); l++) {
            layerOffsets[l] = layout.layerOffsets(l);
            layerLengths[l] = layout.layerLengths(l);
        }
    }

    /** How {@code KvTierCache.prefixBlocks} builds this view over its engine, through {@link EngineViews}. */
    static PrefixBlockCache over(TieringEngine engine, BlockLayout layout) {
        requireNonNull(engine, "engine");
        requireNonNull(layout, "layout");
        return new PrefixBlockCache(engine, layout);
    }

    /** The geometry of every block. */
    public BlockLayout layout() {
        return layout;
    }

    /**
     * The segment key block {@code hash} is cached under: {@link #KEY_PREFIX} and its hex digits (as
     * {@link BlockHash#toString}). The calls of this class find blocks by their hashes and build no key; the key is
     * how the segment API ({@code KvTierCache}) and its listeners name a block.
     */
    public static String keyOf(BlockHash hash) {
        return BlockKeys.of(hash.high(), hash.low());
    }

    /**
     * How many leading blocks of {@code hashes} are cached, and on which tier each is, now. Takes no lock and
     * moves nothing; counts no access.
     *
     * @throws IllegalArgumentException if {@code hashes} or one of them is null
     */
    public PrefixLookup lookupPrefix(List<BlockHash> hashes) {
        Words words = words(hashes);
        return entered(() -> new PrefixLookup(engine.lookupChain(words.high, words.low)));
    }

    /**
     * Makes every block of the longest cached prefix of {@code hashes} resident on {@code tier} (or a faster
     * one, where a block already is) and pins them there, returning when their bytes are in place. The blocks
     * that move are copied with one batched transfer per tier pair, after room was made for all of them;
     * all or nothing. Close the pin when the bytes have been used.
     *
     * @return the pin; empty ({@link PrefixPin#size()} 0) when the first block is not cached
     * @throws IllegalArgumentException  if an argument or hash is null
     * @throws dev.kvtier.TierFullException        if no room could be made for the whole prefix
     * @throws dev.kvtier.SegmentPinnedException   if a block to move is pinned on a slower tier
     * @throws dev.kvtier.TransferFailedException  if a copy failed (every block stays where it was)
     * @throws dev.kvtier.SegmentCorruptedException if a block's DISK bytes are corrupted
     */
    public PrefixPin ensurePrefixResident(List<BlockHash> hashes, Tier tier) {
        Words words = words(hashes);
        requireNonNull(tier, "tier");
        TieringEngine.PinnedChain chain = entered(() -> engine.pinChain(words.high, words.low, tier));
        return new PrefixPin(blocks(hashes, chain.segments()), chain.unpin());
    }

    /**
     * {@link #ensurePrefixResident} without blocking, completing layer by layer: the blocks that move are
     * copied one batched transfer per layer (the regions of that layer in every block), layer 0 first; see
     * {@link PrefixRestore}. The work runs on a kvtier thread.
     *
     * @throws IllegalArgumentException if an argument or hash is null
     * @throws IllegalStateException    if the layout declares no layers, or after the cache was closed
     */
    public PrefixRestore ensurePrefixResidentByLayer(List<BlockHash> hashes, Tier tier) {
        Words words = words(hashes);
        requireNonNull(tier, "tier");
        if (!layout.isLayered()) {
            throw new IllegalStateException("the layout declares no layers: " + layout
                    + " (open the view with BlockLayout.layered to restore layer by layer)");
        }
        TieringEngine.LayeredRestore restore = engine.pinChainLayered(words.high, words.low, tier, layerOffsets, layerLengths);
        List<CompletableFuture<List<ResidentBlock>>> layers = new ArrayList<>(restore.layers().size());
        for (CompletableFuture<List<ResidentSegment>> layer : restore.layers()) {
            layers.add(layer.thenApply(segments -> blocks(hashes, segments)));
        }
        CompletableFuture<PrefixPin> pinned = restore.pinned()
                .thenApply(chain -> new PrefixPin(blocks(hashes, chain.segments()), chain.unpin()));
        return new PrefixRestore(layers, pinned);
    }

    /**
     * Stores new blocks on the GPU: see {@link #storeBlocks(BlockHash, List, MemorySegment, Tier)}.
     */
    public int storeBlocks(BlockHash parentHash, List<BlockHash> hashes, MemorySegment bytes) {
        return storeBlocks(parentHash, hashes, bytes, Tier.GPU);
    }

    /**
     * Caches a copy of new blocks: block {@code i} is {@code hashes.get(i)} with the bytes
     * {@code [i * bytesPerBlock, (i + 1) * bytesPerBlock)} of {@code bytes}; its parent is block {@code i - 1},
     * and the first block's parent is {@code parentHash}. When {@code parentHash} is not a cached block
     * ({@link BlockHash#ROOT}, a namespace root, or a block no longer cached) the chain starts here. Each block
     * goes to {@code tier}, or to its parent's tier when that is slower (a child is never hotter than its
     * parent), making room there as {@code KvTierCache.put} does; when no room can be made there soon (every
     * candidate is pinned, or an ancestor of the block itself), it goes to the next slower tier instead. A block already cached is left as it is
     * (equal hash, equal bytes). Returns when the bytes are in place; {@code bytes} is not referenced afterwards.
     *
     * @param bytes host memory (native or heap) of exactly {@code hashes.size() * bytesPerBlock} bytes
     * @return how many blocks were new
     * @throws IllegalArgumentException naming the argument if one is null or {@code bytes} has the wrong size,
     *                                  or a hash is cached already as the child of another block
     * @throws dev.kvtier.TransferFailedException if a copy failed (blocks before it may be stored, a run of new blocks
     *                                            together being stored whole or not at all; it and those after it are not)
     */
    public int storeBlocks(BlockHash parentHash, List<BlockHash> hashes, MemorySegment bytes, Tier tier) {
        requireNonNull(parentHash, "parentHash (BlockHash.ROOT or a namespace root for a chain's first block)");
        Words words = words(hashes);
        requireNonNull(bytes, "bytes");
        requireNonNull(tier, "tier");
        long expected = (long) hashes.size() * layout.bytesPerBlock();
        if (bytes.byteSize() != expected) {
            throw new IllegalArgumentException("bytes must hold " + hashes.size() + " blocks of " + layout.bytesPerBlock()
                    + " bytes = " + expected + " bytes, was " + bytes.byteSize());
        }
        return entered(() -> engine.storeChain(parentHash.high(), parentHash.low(), words.high, words.low,
                layout.tokensPerBlock(), bytes, layout.bytesPerBlock(), tier));
    }

    /**
     * Copies block {@code hash}'s bytes into the start of {@code dst} (host memory), wherever it is; moves
     * nothing and counts no access.
     *
     * @throws IllegalArgumentException          if an argument is null or {@code dst} is too small
     * @throws dev.kvtier.SegmentNotFoundException if the block is not cached
     */
    public void readBlock(BlockHash hash, MemorySegment dst) {
        requireNonNull(hash, "hash");
        requireNonNull(dst, "dst");
        entered(() -> {
            engine.readBlock(hash.high(), hash.low(), dst);
            return null;
        });
    }

    /**
     * Removes block {@code hash} and frees its memory, unless blocks continuing it are cached (remove a chain
     * from its tail).
     *
     * @return false if it was not cached
     * @throws IllegalArgumentException if {@code hash} is null
     * @throws IllegalStateException    naming the block and its number of children when it has cached children
     */
    public boolean removeBlock(BlockHash hash) {
        requireNonNull(hash, "hash");
        return entered(() -> engine.removeBlock(keyOf(hash)));
    }

    // ---------------------------------------------------------------- the door's own work

    /** The hashes' words, as the engine takes a chain: block {@code i} is {@code high[i]}, {@code low[i]}. */
    private record Words(long[] high, long[] low) { }

    /** The words of {@code hashes}, checked: the list and every hash non-null. */
    private static Words words(List<BlockHash> hashes) {
        requireNonNull(hashes, "hashes");
        // One bulk copy out of the list, then a loop over a plain array: the loop's shape does not depend on which
        // List class the caller passed (a request's list, a subList of it, List.of), where per-element get calls
        // had C2 hoist profiled checks out of the loop and throw the caller's compiled code away when another class
        // came ("profile_predicate" traps, JFR jdk.Deoptimization, session 8).
        Object[] given = hashes.toArray();
        long[] high = new long[given.length];
        long[] low = new long[high.length];
        for (int i = 0; i < high.length; i++) {
            BlockHash hash = (BlockHash) given[i];
            if (hash == null) {
                throw new IllegalArgumentException("hashes[" + i + "] must not be null");
            }
            high[i] = hash.high();
            low[i] = hash.low();
        }
        return new Words(high, low);
    }

    /** The blocks, immutable (so that {@link PrefixPin} keeps the list as it is instead of copying it). */
    private static List<ResidentBlock> blocks(List<BlockHash> hashes, List<ResidentSegment> segments) {
        ResidentBlock[] blocks = new ResidentBlock[segments.size()];
        for (int i = 0; i < blocks.length; i++) {
            ResidentSegment segment = segments.get(i);
            blocks[i] = new ResidentBlock(hashes.get(i), segment.tier(), segment.foundOn(), segment.positions(), segment.pages());
        }
        return List.of(blocks);
    }

    private <T> T entered(Supplier<T> operation) {
        gate.enter();
        try {
            return operation.get();
        } finally {
            gate.exit();
        }
    }

    private static void requireNonNull(Object value, String name) {
        if (value == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
    }
}
