package dev.kvtier.prefix;

import dev.kvtier.ResidentSegment;
import dev.kvtier.store.Tier;
import dev.kvtier.tiering.BlockGeometry;
import dev.kvtier.tiering.BlockKeys;
import dev.kvtier.tiering.EngineViews;
import dev.kvtier.tiering.OperationGate;
import dev.kvtier.tiering.RemoteBlockFormat;
import dev.kvtier.tiering.RemoteBlocks;
import dev.kvtier.tiering.TieringEngine;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
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
 *       stays (eviction never removes from DISK; {@link #removeBlock}, and {@code KvTierCache.remove} given a
 *       block's key, refuse a block with children; a store never leaves a block without its parent, see
 *       {@link #storeBlocks}). This holds however the policy ranks blocks: its candidates are filtered, not
 *       reordered; and the segment API keeps it on blocks' keys too (see {@code KvTierCache.prefixBlocks}).</li>
 *   <li><b>One layout per cache.</b> Every block remembers its size and tokens; a call of a view of another
 *       layout meeting it ({@link #lookupPrefix}, the restores, {@link #readBlock}, {@link #storeBlocks}) throws
 *       {@link IllegalArgumentException} naming both, having moved and copied nothing.</li>
 *   <li><b>No caller code under the cache's locks.</b> The futures of {@link #ensurePrefixResidentByLayer} are
 *       completed after the restore left the blocks' locks (its layers on a kvtier thread the restore never waits
 *       for): a dependent may restore, pin, remove or read the same blocks, or close the cache. Cancelling or timing
 *       out {@link PrefixRestore#pinned()} releases the restore's pins.</li>
 *   <li><b>Never a wrong byte, bounded waits, errors</b>: as {@code KvTierCache} (the same exceptions:
 *       {@code TierFullException} when no room can be made for the whole prefix, {@code TransferFailedException},
 *       {@code SegmentCorruptedException}; {@link IllegalArgumentException} naming a bad argument;
 *       {@code ParentNotCachedException} when the block a store continues is gone;
 *       {@link IllegalStateException} after the cache was closed).</li>
 * </ul>
 *
 * <h2>A remote block store</h2>
 * With {@code KvTierConfig.remote()} set, blocks' bytes are shared with caches in other processes or on other hosts
 * through a {@link dev.kvtier.remote.RemoteBlockStore}: {@link #lookupPrefix} extends the local prefix with the blocks
 * the store holds after it ({@link PrefixLookup#remoteBlocks()}; one {@code containsAll}, cut at the first missing
 * block), the restores fetch them (one {@code getAllInto}), check each value's namespace, block, layout, CRC32C and
 * HMAC-SHA256 as it arrives (a value that fails is a miss, and the prefix ends before it), and store them as ordinary
 * local blocks on the tier asked (the same eviction, persistence and events as any other), and {@link #storeBlocks}
 * queues the blocks it stored for writing (their bytes copied out before it returns; never waiting on the store).
 * Remote blocks are fetched only when the cost gate estimates fetching them faster than recomputing them. A store that
 * fails or does not answer within {@code transferTimeout} is a miss: it is marked down and left alone for a backoff,
 * and every call goes on with the local tiers alone. See {@code RemoteStoreConfig}.
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
    /** The layout as the chain calls check the blocks they find against it. */
    private final BlockGeometry geometry;
    private final long[][] layerOffsets;
    private final long[][] layerLengths;
    /** The remote block store's traffic and this layout's value format there; both null without a store. */
    private final RemoteBlocks remote;
    private final RemoteBlockFormat remoteFormat;

    private PrefixBlockCache(TieringEngine engine, BlockLayout layout) {
        this.engine = engine;
        this.gate = engine.gate();
        this.layout = layout;
        this.geometry = new BlockGeometry(layout.bytesPerBlock(), layout.tokensPerBlock(), layout.toString());
        this.layerOffsets = new long[layout.layers()][];
        this.layerLengths = new long[layout.layers()][];
        for (int l = 0; l < layout.layers(); l++) {
            layerOffsets[l] = layout.layerOffsets(l);
            layerLengths[l] = layout.layerLengths(l);
        }
        this.remote = engine.remote();
        this.remoteFormat = remote == null ? null : remote.format(new RemoteBlockFormat.Layout(layout.bytesPerBlock(),
                layout.tokensPerBlock(), layout.layers(), layout.order() == null ? 0 : layout.order().ordinal() + 1));
    }

    /** How {@code KvTierCache.prefixBlocks} builds this view over its engine, through {@link EngineViews}. */
    static PrefixBlockCache over(TieringEngine engine, BlockLayout layout) {
        requireNonNull(engine, "engine");
        requireNonNull(layout, "layout");
        return new PrefixBlockCache(engine, layout);
    }

    /**
     * The geometry of every block.
     *
     * @return the layout given when the cache was built, the same for every block
     */
    public BlockLayout layout() {
        return layout;
    }

    /**
     * The segment key block {@code hash} is cached under: {@link #KEY_PREFIX} and its hex digits (as
     * {@link BlockHash#toString}). The calls of this class find blocks by their hashes and build no key; the key is
     * how the segment API ({@code KvTierCache}) and its listeners name a block.
     *
     * @param hash the block's hash, not null
     * @return the key, {@link #KEY_PREFIX} followed by 32 lower-case hex digits
     */
    public static String keyOf(BlockHash hash) {
        return BlockKeys.of(hash.high(), hash.low());
    }

    /**
     * How many leading blocks of {@code hashes} are cached, and on which tier each is, now. Takes no lock and
     * moves nothing; counts no access. With a remote block store, the blocks after the local prefix are asked of it
     * in one round trip (waiting at most {@code transferTimeout}; not at all while it is marked down), and those it
     * holds as a run, if the cost gate lets them, are {@link PrefixLookup#remoteBlocks()}.
     *
     * @param hashes the request's block hashes in chain order, as {@link BlockHasher#chain} gives them; may be empty
     * @return the tiers of the cached leading blocks, as they were during the call; empty when the first block is not
     *         cached
     * @throws IllegalArgumentException if {@code hashes} or one of them is null, or a block of that prefix was stored
     *                                  through a view of another block size (naming it and both layouts)
     */
    public PrefixLookup lookupPrefix(List<BlockHash> hashes) {
        Words words = words(hashes);
        List<Tier> local = entered(() -> engine.lookupChain(words.high, words.low, geometry));
        if (remote == null || local.size() == hashes.size()) {
            return new PrefixLookup(local);
        }
        // Outside the gate: a wait on the store (bounded by the transfer timeout) never holds up close().
        return new PrefixLookup(local, remote.lookup(remoteFormat, words.high, words.low, local.size()));
    }

    /**
     * Makes every block of the longest cached prefix of {@code hashes} resident on {@code tier} (or a faster
     * one, where a block already is) and pins them there, returning when their bytes are in place. The blocks
     * that move are copied with one batched transfer per tier pair, after room was made for all of them;
     * all or nothing. Close the pin when the bytes have been used. With a remote block store, the blocks after the
     * local prefix are first fetched from it (see the class comment; waiting at most {@code transferTimeout}) and
     * stored on {@code tier} as local blocks; the prefix ends before the first that cannot be fetched or stored or
     * fails a check (even where {@link #lookupPrefix} counted it: the pin is then shorter).
     *
     * @param hashes the request's block hashes in chain order, as {@link BlockHasher#chain} gives them; may be empty
     * @param tier   the slowest tier the blocks may be on when this returns
     * @return the pin; empty ({@link PrefixPin#size()} 0) when the first block is not cached
     * @throws IllegalArgumentException  if an argument or hash is null, or a block of the prefix was stored through a
     *                                   view of another block size (naming it and both layouts; nothing moved)
     * @throws dev.kvtier.TierFullException        if no room could be made for the whole prefix (naming its blocks and
     *                                             their bytes together)
     * @throws dev.kvtier.SegmentPinnedException   if a block to move is pinned on a slower tier
     * @throws dev.kvtier.TransferFailedException  if a copy failed (every block stays where it was)
     * @throws dev.kvtier.SegmentCorruptedException if a block's DISK bytes are corrupted
     */
    public PrefixPin ensurePrefixResident(List<BlockHash> hashes, Tier tier) {
        Words words = words(hashes);
        requireNonNull(tier, "tier");
        if (remote != null) {
            fetchRemote(words, tier, localLength(words));
        }
        TieringEngine.PinnedChain chain = entered(() -> engine.pinChain(words.high, words.low, tier, geometry));
        return new PrefixPin(blocks(hashes, chain.segments()), chain.unpin());
    }

    /**
     * {@link #ensurePrefixResident} without blocking, completing layer by layer: the blocks that move are
     * copied one batched transfer per layer (the regions of that layer in every block), layer 0 first; see
     * {@link PrefixRestore}. The work runs on a kvtier thread; the futures are completed on another kvtier thread,
     * never under the restore's locks or inside the cache's operation (a dependent may call the cache, close it
     * included), and cancelling or timing out {@link PrefixRestore#pinned()} releases the pins.
     *
     * @param hashes the request's block hashes in chain order, as {@link BlockHasher#chain} gives them; may be empty
     * @param tier   the slowest tier the blocks may be on when the restore completes
     * @return the restore under way: one future per layer and one for the pin (take the pin and close it when done)
     * @throws IllegalArgumentException if an argument or hash is null, or a block of the prefix was stored through a
     *                                  view of another block size (naming it and both layouts; nothing is restored,
     *                                  never a block copied in part)
     * @throws IllegalStateException    if the layout declares no layers, or after the cache was closed
     */
    public PrefixRestore ensurePrefixResidentByLayer(List<BlockHash> hashes, Tier tier) {
        Words words = words(hashes);
        requireNonNull(tier, "tier");
        if (!layout.isLayered()) {
            throw new IllegalStateException("the layout declares no layers: " + layout
                    + " (open the view with BlockLayout.layered to restore layer by layer)");
        }
        // Checked here too, to refuse at the door; the restore checks again under the blocks' locks.
        int local = entered(() -> engine.lookupChain(words.high, words.low, geometry)).size();
        CompletableFuture<PrefixPin> pinned = new CompletableFuture<>();
        if (remote == null || local == hashes.size() || !remote.mayAsk()) {
            return new PrefixRestore(restoreLayered(hashes, words, tier, pinned), pinned);
        }
        // Remote blocks to fetch first: on a kvtier thread, so that this call does not wait on the store.
        List<CompletableFuture<List<ResidentBlock>>> layers = new ArrayList<>(layout.layers());
        for (int l = 0; l < layout.layers(); l++) {
            layers.add(new CompletableFuture<>());
        }
        Runnable fetchThenRestore = () -> {
            List<CompletableFuture<List<ResidentBlock>>> restored;
            try {
                fetchRemote(words, tier, local);
                restored = restoreLayered(hashes, words, tier, pinned);
            } catch (RuntimeException | Error e) {
                layers.forEach(layer -> layer.completeExceptionally(e));
                pinned.completeExceptionally(e);
                return;
            }
            for (int l = 0; l < restored.size(); l++) {
                CompletableFuture<List<ResidentBlock>> proxy = layers.get(l);
                restored.get(l).whenComplete((blocks, failure) -> {
                    if (failure != null) {
                        proxy.completeExceptionally(failure);
                    } else {
                        proxy.complete(blocks);
                    }
                });
            }
        };
        try {
            remote.runFetch(fetchThenRestore);
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("the cache is closed", e);
        }
        return new PrefixRestore(layers, pinned);
    }

    /** Starts the layered restore of the local prefix; its pin goes to {@code pinned} (or is released). */
    private List<CompletableFuture<List<ResidentBlock>>> restoreLayered(List<BlockHash> hashes, Words words, Tier tier,
                                                                      CompletableFuture<PrefixPin> pinned) {
        TieringEngine.LayeredRestore restore = engine.pinChainLayered(words.high, words.low, tier, layerOffsets, layerLengths);
        List<CompletableFuture<List<ResidentBlock>>> layers = new ArrayList<>(restore.layers().size());
        for (CompletableFuture<List<ResidentSegment>> layer : restore.layers()) {
            layers.add(layer.thenApply(segments -> blocks(hashes, segments)));
        }
        restore.pinned().whenComplete((chain, failure) -> {
            if (failure != null) {
                pinned.completeExceptionally(failure);
                return;
            }
            PrefixPin pin = null;
            try {
                pin = new PrefixPin(blocks(hashes, chain.segments()), chain.unpin());
            } finally {
                // Cancelled, timed out or completed by its holder meanwhile: nobody can close this pin but us.
                if (pin == null || !pinned.complete(pin)) {
                    chain.unpin().run();
                }
            }
        });
        return layers;
    }

    /** How many leading blocks are cached locally (no listener hears of it: it is part of a restore). */
    private int localLength(Words words) {
        return entered(() -> engine.localChainLength(words.high, words.low, geometry));
    }

    /**
     * Fetches the blocks after the first {@code local} from the remote store (one {@code getAllInto}, checked, cut at the
     * first missing or rejected one) and stores them as ordinary local blocks on {@code tier}. A fetch that finds
     * nothing, fails or times out, or whose blocks cannot be stored now (their parent gone, no room, a failed copy)
     * leaves the local prefix as it is: the restore then serves what is local.
     */
    private void fetchRemote(Words words, Tier tier, int local) {
        if (local >= words.high.length) {
            return;
        }
        long parentHigh = local == 0 ? BlockHash.ROOT.high() : words.high[local - 1];
        long parentLow = local == 0 ? BlockHash.ROOT.low() : words.low[local - 1];
        RemoteBlocks.Fetched fetched = remote.fetch(remoteFormat, words.high, words.low, local, parentHigh, parentLow);
        if (fetched.count() == 0) {
            return;
        }
        long[] high = java.util.Arrays.copyOfRange(words.high, local, local + fetched.count());
        long[] low = java.util.Arrays.copyOfRange(words.low, local, local + fetched.count());
        try {
            entered(() -> engine.storeChain(parentHigh, parentLow, high, low, MemorySegment.ofArray(fetched.bytes()),
                    geometry, tier, null));
        } catch (dev.kvtier.KvTierException | IllegalArgumentException e) {
            // The parent left meanwhile, no room, or a failed copy: the fetched blocks are not kept, a miss.
        }
    }

    /**
     * Streams the longest cached prefix of {@code hashes} to the GPU layer by layer, without promoting its blocks:
     * see {@link PrefixStream}. Why it exists: {@link #ensurePrefixResidentByLayer} holds the whole prefix on the GPU
     * tier at once, so a prefix larger than that tier (a long conversation under a small GPU budget) cannot be restored
     * there; a stream needs GPU room for two layers of it (as layer-wise offload connectors do) and leaves the blocks
     * on the tiers they are on. Returns once the blocks are pinned and the staging area taken; the layers arrive on
     * their futures.
     *
     * @param hashes the request's blocks from its first, in chain order; not null, no null element
     * @return the stream; empty ({@link PrefixStream#size()} 0, every layer complete with no blocks) when the first
     *         block is not cached
     * @throws IllegalArgumentException            if {@code hashes} or a hash is null, or a block of the prefix was
     *                                             stored through a view of another block size (naming both layouts)
     * @throws IllegalStateException               if the layout declares no layers, or after the cache was closed
     * @throws dev.kvtier.TierFullException        if no room could be made on the GPU tier for the staging area
     * @throws dev.kvtier.SegmentCorruptedException if a DISK block's bytes fail their check
     */
    public PrefixStream streamPrefixByLayer(List<BlockHash> hashes) {
        Words words = words(hashes);
        if (!layout.isLayered()) {
            throw new IllegalStateException("the layout declares no layers: " + layout
                    + " (open the view with BlockLayout.layered to stream layer by layer)");
        }
        return new PrefixStream(hashes, entered(() -> engine.streamChainByLayer(words.high, words.low, geometry,
                layerOffsets, layerLengths)));
    }

    /**
     * Stores new blocks on the GPU: see {@link #storeBlocks(BlockHash, List, MemorySegment, Tier)}.
     *
     * @param parentHash the cached block these continue, or {@link BlockHash#ROOT} to start a chain
     * @param hashes     the new blocks' hashes, in chain order
     * @param bytes      host memory of exactly {@code hashes.size() * bytesPerBlock} bytes, block after block; not
     *                   kept
     * @return how many blocks were new (the others were cached already)
     */
    public int storeBlocks(BlockHash parentHash, List<BlockHash> hashes, MemorySegment bytes) {
        return storeBlocks(parentHash, hashes, bytes, Tier.GPU);
    }

    /**
     * Caches a copy of new blocks: block {@code i} is {@code hashes.get(i)} with the bytes
     * {@code [i * bytesPerBlock, (i + 1) * bytesPerBlock)} of {@code bytes}; its parent is block {@code i - 1},
     * and the first block's parent is {@code parentHash}: the cached block these continue (the last block
     * {@link #lookupPrefix} found), or {@link BlockHash#ROOT} to start a chain (also a chain hashed from a
     * namespace root: the namespace is in its blocks' hashes already). Each block
     * goes to {@code tier}, or to its parent's tier when that is slower (a child is never hotter than its
     * parent), making room there as {@code KvTierCache.put} does; when no room can be made there soon (every
     * candidate is pinned, or an ancestor of the block itself), it goes to the next slower tier instead. A block already
     * cached is left as it is (equal hash, equal bytes), also when a concurrent call stored it just now (both calls
     * succeed). Returns when the bytes are in place; {@code bytes} is not referenced afterwards. With a remote block
     * store written through on store, the blocks this call stored are queued for it (not those cached already, nor
     * those this cache sent or fetched before, as far as it remembers), their bytes copied out before this returns (a
     * full queue drops them, counted; nothing waits on the store).
     *
     * <p><b>A parent gone since the look-up.</b> The check that {@code parentHash} is cached and the store are one
     * atomic step (the parent is locked and so stays cached until the blocks continuing it are in place). When
     * {@code parentHash} is not {@link BlockHash#ROOT} and not cached (another call removed it after this caller's
     * {@link #lookupPrefix}), nothing is stored and {@link dev.kvtier.ParentNotCachedException} names it: the blocks
     * are never stored as a chain start that no look-up of their chain would reach. Look the prefix up again and
     * store from its last cached block. A block found cached as a chain start but stored here after a cached parent
     * (such a misplaced block, left by an older version, say) is replaced by the block in its place (the blocks
     * continuing it, at positions as misplaced as its own, are dropped with it).
     *
     * @param parentHash the cached block these continue, or {@link BlockHash#ROOT} to start a chain
     * @param hashes     the new blocks' hashes, in chain order
     * @param bytes      host memory (native or heap) of exactly {@code hashes.size() * bytesPerBlock} bytes
     * @param tier       the tier the blocks should go to (a block goes slower where its parent is, or where no room
     *                   can be made)
     * @return how many blocks were new
     * @throws IllegalArgumentException naming the argument if one is null or {@code bytes} has the wrong size (naming
     *                                  both sizes), a hash is cached already as the child of another block, or the
     *                                  parent or a block cached already was stored through a view of another block
     *                                  size (naming both layouts)
     * @throws dev.kvtier.ParentNotCachedException if {@code parentHash} is not {@link BlockHash#ROOT} and not a cached
     *                                             block (nothing is stored)
     * @throws dev.kvtier.TransferFailedException if a copy failed (blocks before it may be stored, a run of new blocks
     *                                            together being stored whole or not at all; it and those after it are not)
     */
    public int storeBlocks(BlockHash parentHash, List<BlockHash> hashes, MemorySegment bytes, Tier tier) {
        requireNonNull(parentHash, "parentHash (BlockHash.ROOT for a chain's first block)");
        Words words = words(hashes);
        requireNonNull(bytes, "bytes");
        requireNonNull(tier, "tier");
        long bytesPerBlock = layout.bytesPerBlock();
        // Divided, not multiplied: blocks x bytesPerBlock may overflow a long, and a wrapped product could pass.
        if (bytes.byteSize() % bytesPerBlock != 0 || bytes.byteSize() / bytesPerBlock != hashes.size()) {
            long total = hashes.size() * bytesPerBlock;
            boolean fits = Math.multiplyHigh(hashes.size(), bytesPerBlock) == 0 && total >= 0;
            throw new IllegalArgumentException("bytes must hold " + hashes.size() + " blocks of " + bytesPerBlock
                    + " bytes" + (fits ? " = " + total + " bytes" : " (more than a long counts)") + ", was "
                    + bytes.byteSize() + " bytes");
        }
        boolean writesThrough = remote != null && remote.writesThroughOnStore();
        boolean[] stored = writesThrough ? new boolean[hashes.size()] : null;
        int added = entered(() -> engine.storeChain(parentHash.high(), parentHash.low(), words.high, words.low, bytes,
                geometry, tier, stored));
        if (writesThrough && added > 0) {
            // Only the blocks this call stored; copies their bytes out now (the caller may reuse them once this
            // returns); never waits on the store.
            remote.writeStored(remoteFormat, parentHash.high(), parentHash.low(), words.high, words.low, bytes, stored);
        }
        return added;
    }

    /**
     * Copies block {@code hash}'s bytes into the start of {@code dst} (host memory), wherever it is; moves
     * nothing and counts no access.
     *
     * @param hash the block to read
     * @param dst  writable host memory of at least {@code bytesPerBlock} bytes; only its first {@code bytesPerBlock}
     *             are written
     * @throws IllegalArgumentException          if an argument is null, {@code dst} is read-only or too small
     *                                            (nothing is written), or the block was stored through a view of
     *                                            another block size (naming both layouts)
     * @throws dev.kvtier.SegmentNotFoundException if the block is not cached
     */
    public void readBlock(BlockHash hash, MemorySegment dst) {
        requireNonNull(hash, "hash");
        requireNonNull(dst, "dst");
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("dst must be writable, was read-only: " + dst);
        }
        entered(() -> {
            engine.readBlock(hash.high(), hash.low(), dst, geometry);
            return null;
        });
    }

    /**
     * Removes block {@code hash} and frees its memory, unless blocks continuing it are cached (remove a chain
     * from its tail).
     *
     * @param hash the block to remove
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
        // came ("profile_predicate" traps, JFR jdk.Deoptimization).
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
