package dev.kvtier.tiering;

import dev.kvtier.KvTierException;
import dev.kvtier.ParentNotCachedException;
import dev.kvtier.ResidentSegment;
import dev.kvtier.SegmentPinnedException;
import dev.kvtier.TierFullException;
import dev.kvtier.concurrent.KvTierThreads;
import dev.kvtier.exec.PageAllocation;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentHandle;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TierTransfer;
import dev.kvtier.store.TieredStore;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;

/**
 * Chains of prefix blocks over the segment machinery: each block is a segment linked to its parent
 * ({@link Segment#parent}), and whole leading runs of a chain are looked up, stored, and promoted and pinned
 * together, their bytes moved in one batch per tier pair (or one batch per layer). The engine side of
 * {@code dev.kvtier.prefix.PrefixBlockCache}.
 *
 * <h2>Locks</h2>
 * An operation on a chain locks its blocks root to tail, each lock taken only on a child of the block locked
 * before it (a block whose parent is not the previous one ends the run). Every thread thus locks along a
 * downward path of the block forest, and two such paths cannot wait on each other in a cycle; making room
 * only {@code tryLock}s its victims. The locks are held until the bytes are in place and the blocks pinned.
 *
 * <h2>The prefix rule</h2>
 * A new block is placed on the tier asked for, or on its parent's tier when that is slower; a promotion
 * moves a leading run of a chain; the {@link RoomMaker} never lets a block leave a tier while a child is
 * there or faster. Together: a child is never hotter than its parent, chains leave a tier tail first, and
 * (a block evicted from a bounded DISK tier only once no child of it is cached) no parent leaves the cache while a
 * child stays.
 *
 * <p>Thread-safe.
 */
final class PrefixChains {
    /** Rounds of making room a restore tries before it refuses the prefix ({@link RoomMaker#ROUNDS} for one segment). */
    static final int RESTORE_ROUNDS = 4;
    /** Rounds of making room for a new run of blocks together before they are inserted one by one instead. */
    static final int RUN_ROUNDS = 2;

    private final TieringEngine engine;
    private final DiskRecovery recovery;
    private final TieredStore store;
    private final SegmentTable table;
    private final RoomMaker roomMaker;
    private final Mover mover;
    private final TierMemories memories;
    private final OperationGate gate;
    /** Set on the restore threads: one runs a dependent when the cache closed before it posted its outcome. */
    private static final ThreadLocal<Boolean> ON_RESTORER = ThreadLocal.withInitial(() -> Boolean.FALSE);
    private final ExecutorService restorers;
    private final Completions completers = new Completions("prefix-complete");

    PrefixChains(TieringEngine engine, DiskRecovery recovery, TieredStore store, SegmentTable table, RoomMaker roomMaker,
                 Mover mover, TierMemories memories, OperationGate gate) {
        this.engine = engine;
        this.recovery = recovery;
        this.store = store;
        this.table = table;
        this.roomMaker = roomMaker;
        this.mover = mover;
        this.memories = memories;
        this.gate = gate;
        ThreadFactory threads = KvTierThreads.factory("prefix-restore");
        this.restorers = Executors.newCachedThreadPool(task -> threads.newThread(() -> {
            ON_RESTORER.set(Boolean.TRUE);
            task.run();
        }));
    }

    /**
     * Entered: the tiers of the leading run of blocks {@code high[i]}, {@code low[i]} (their hashes' words) that is
     * cached as one chain; no lock is taken.
     *
     * @throws IllegalArgumentException if a block of that run is not of {@code geometry}
     */
    List<Tier> lookup(long[] high, long[] low, BlockGeometry geometry) {
        List<Tier> tiers = new ArrayList<>();
        Segment previous = null;
        for (int i = 0; i < high.length; i++) {
            Segment segment = table.peekBlock(high[i], low[i]);
            if (segment == null || (i > 0 && segment.parent != previous)) {
                break;
            }
            SegmentHandle handle = segment.handle; // null while it is being registered: not cached yet
            Tier tier = handle == null ? null : store.tierOf(handle);
            if (tier == null) {
                break;
            }
            geometry.requireMatches(segment);
            tiers.add(tier);
            previous = segment;
        }
        return tiers;
    }

    /**
     * Entered: stores new blocks continuing block {@code parentHigh}, {@code parentLow} (both 0, {@code BlockHash.ROOT}:
     * the chain starts here), block {@code i} being hash {@code high[i]}, {@code low[i]} with the bytes
     * {@code bytes[i * bytesPerBlock, (i + 1) * bytesPerBlock)} at the token positions after its parent's. A block
     * already cached is kept as it is (equal hash, equal bytes) and continues the chain, also when another call
     * stored it meanwhile. Each new block goes to {@code tier}, or to its parent's tier when that is slower, or further
     * down when no room can be made there soon. The parent is locked (and so stays cached) from its check to the end.
     *
     * <p>A block cached as a chain start but stored here under a cached parent was misplaced (stored when its parent
     * was missing, by an older version): it is replaced by the block in its place, the blocks continuing it dropped.
     *
     * <p>{@code stored}, when not null, has an element per block and is set where this call stored the block (left as
     * it is where the block was cached already), for whoever passes the new blocks on (the remote store's
     * write-through); a call that throws may have set it for the blocks stored before the failure.
     *
     * @return how many blocks were new
     * @throws ParentNotCachedException  when the parent is not {@code BlockHash.ROOT} and not a cached block (nothing stored)
     * @throws IllegalArgumentException when a block is cached already but not as the child of the one before it, or
     *                                  a block cached already is not of {@code geometry}
     */
    int store(long parentHigh, long parentLow, long[] high, long[] low, MemorySegment bytes, BlockGeometry geometry,
              Tier tier, boolean[] stored) {
        long tokensPerBlock = geometry.tokensPerBlock();
        long bytesPerBlock = geometry.bytesPerBlock();
        Segment parent = table.lockLiveBlockOrNull(parentHigh, parentLow);
        if (parent == null && (parentHigh != 0 || parentLow != 0)) {
            String parentKey = BlockKeys.of(parentHigh, parentLow);
            throw new ParentNotCachedException(parentKey, parentKey.substring(BlockKeys.PREFIX.length()));
        }
        int added = 0;
        try {
            if (parent != null) {
                geometry.requireMatches(parent);
            }
            long position = parent == null ? 0 : parent.positions.end();
            for (int i = 0; i < high.length; i++) {
                Segment next = cachedContinuing(high[i], low[i], parent, i, geometry);
                if (next == null) {
                    Tier parentTier = parent == null ? null : table.currentTier(parent);
                    Tier target = parentTier == null || !tier.isFasterThan(parentTier) ? tier : parentTier;
                    int end = i + 1;
                    while (end < high.length && table.peekBlock(high[end], low[end]) == null) {
                        end++;
                    }
                    next = end - i > 1 && target != Tier.DISK
                            ? insertRun(high, low, i, end, position, tokensPerBlock, bytes, bytesPerBlock, parent, target)
                            : null;
                    if (next != null) {
                        added += end - i;
                        if (stored != null) {
                            java.util.Arrays.fill(stored, i, end, true);
                        }
                        i = end - 1;
                    } else {
                        next = insert(high[i], low[i], PositionRange.of(position, position + tokensPerBlock),
                                bytes.asSlice(i * bytesPerBlock, bytesPerBlock), parent, target);
                        if (next == null) { // cached meanwhile by another call: look at it again
                            i--;
                            continue;
                        }
                        added++;
                        if (stored != null) {
                            stored[i] = true;
                        }
                    }
                }
                if (parent != null) {
                    parent.unlock();
                }
                parent = next;
                position = next.positions.end();
            }
        } finally {
            if (parent != null) {
                parent.unlock();
            }
        }
        return added;
    }

    /**
     * Block {@code high}, {@code low} locked, when it is cached as the child of {@code parent} (locked by the caller,
     * or null); null when it is not cached (or was misplaced and has been removed just now: see {@link #store}).
     *
     * @throws IllegalArgumentException when it is cached as the child of another block, or is not of {@code geometry}
     */
    private Segment cachedContinuing(long high, long low, Segment parent, int index, BlockGeometry geometry) {
        Segment existing = table.lockLiveBlockOrNull(high, low);
        if (existing == null) {
            return null;
        }
        boolean continues = false;
        try {
            geometry.requireMatches(existing);
            if (existing.parent == parent) {
                continues = true;
                return existing;
            }
            if (existing.parent == null && parent != null) {
                // A misplaced chain start: its hash names a parent, and that parent is cached now. Replaced; the blocks
                // continuing it sit at positions shifted as it is, and go with it.
                engine.dropWithDescendants(existing);
                return null;
            }
            throw notContinuing(existing, parent, index);
        } finally {
            if (!continues) {
                existing.unlock();
            }
        }
    }

    /**
     * Inserts one new block on {@code target}, or, when no room can be made there soon (its candidates are the
     * block's own ancestors, or pinned), on the next slower tier: a new block may always be colder than asked.
     *
     * @return the block, live and locked; null, having changed nothing, when another call has published the key
     *         meanwhile (the caller looks at that block instead)
     */
    private Segment insert(long high, long low, PositionRange positions, MemorySegment bytes, Segment parent, Tier target) {
        Tier tier = target;
        while (true) {
            Segment block = Segment.block(high, low, positions, bytes.byteSize(), parent);
            block.lock();
            try {
                if (!engine.insertLocked(block, tier, engine.copiedIn(bytes, tier, tier != Tier.DISK), tier != Tier.DISK)) {
                    block.unlock();
                    return null;
                }
                return block;
            } catch (TierFullException full) {
                block.unlock();
                tier = switch (tier) {
                    case GPU -> Tier.CPU;
                    case CPU -> Tier.DISK;
                    case DISK -> throw full;
                };
            } catch (RuntimeException | Error e) {
                block.unlock();
                throw e;
            }
        }
    }

    /**
     * Inserts the new blocks {@code [from, to)} of {@code high}, {@code low} continuing {@code parent} (locked by the caller, or null) on
     * {@code tier} together: room made once for all of them, registered in the store tail first, filled, and made
     * live root first. Why tail first: a recency- or FIFO-ranking policy then offers the run's tail before its root,
     * and a block may only leave a tier once its children have (registered root first, every block but the tail
     * would be offered, and refused, before the one that can go). All or nothing.
     *
     * @return the run's last block, live and locked (the others unlocked); null, having changed nothing, when room
     *         for the whole run could not be made quickly or a key was cached meanwhile (the caller then inserts
     *         block by block, each where it fits)
     */
    private Segment insertRun(long[] high, long[] low, int from, int to, long position, long tokensPerBlock,
                              MemorySegment bytes, long bytesPerBlock, Segment parent, Tier tier) {
        int n = to - from;
        Segment[] run = new Segment[n];
        SegmentMeta[] metas = new SegmentMeta[n];
        PageAllocation[] pages = new PageAllocation[n];
        int published = 0;
        boolean registered = false;
        boolean done = false;
        try {
            Segment previous = parent;
            for (int k = 0; k < n; k++) {
                long start = position + k * tokensPerBlock;
                Segment block = Segment.block(high[from + k], low[from + k],
                        PositionRange.of(start, start + tokensPerBlock), bytesPerBlock, previous);
                block.lock();
                run[k] = block;
                if (!table.publish(block)) {
                    return null; // cached meanwhile by another call: the caller takes it block by block
                }
                published++;
                metas[k] = SegmentMeta.of(block.key, block.positions, bytesPerBlock);
                previous = block;
            }
            try {
                registered = roomMaker.makingRoomUntil(run[0].key, tier, n * bytesPerBlock, RUN_ROUNDS,
                        () -> registerAll(run, metas, tier, n * bytesPerBlock)) != null;
            } catch (TierFullException notNow) {
                return null;
            }
            for (int k = 0; k < n; k++) {
                pages[k] = engine.copiedIn(bytes.asSlice((from + k) * bytesPerBlock, bytesPerBlock), tier, true)
                        .apply(run[k]);
            }
            for (int k = 0; k < n; k++) {
                Segment block = run[k];
                block.placement = pages[k];
                block.live = true;
                block.countOn(tier);
                engine.added(block.key, tier, block.sizeBytes);
            }
            done = true;
            return run[n - 1];
        } catch (TierFullException notNow) {
            return null; // no pages for all of them soon: undone below
        } finally {
            if (!done) {
                for (PageAllocation allocation : pages) {
                    if (allocation != null) {
                        memories.release(allocation);
                    }
                }
                if (registered) {
                    for (int k = n - 1; k >= 0; k--) {
                        store.discard(run[k].handle);
                    }
                }
                for (int k = 0; k < published; k++) {
                    table.unpublish(run[k]);
                }
            }
            for (int k = 0; k < (done ? n - 1 : n); k++) {
                if (run[k] != null) {
                    run[k].unlock();
                }
            }
        }
    }

    /** Registers every block of a run on {@code tier}, tail first, or none (null) when they do not all fit. */
    private Boolean registerAll(Segment[] run, SegmentMeta[] metas, Tier tier, long bytes) {
        if (roomMaker.free(tier) < bytes) {
            return null; // they cannot all fit: say so before registering some only to take them back
        }
        for (int k = metas.length - 1; k >= 0; k--) {
            run[k].handle = store.registerHandle(metas[k], tier, run[k]);
            if (run[k].handle == null) {
                for (int j = k + 1; j < metas.length; j++) {
                    store.discard(run[j].handle);
                }
                return null;
            }
        }
        return Boolean.TRUE;
    }

    private static IllegalArgumentException notContinuing(Segment existing, Segment parent, int index) {
        return new IllegalArgumentException("key \"" + existing.key + "\" is cached already but not as the block after "
                + (parent == null ? "the chain's start" : "\"" + parent.key + "\"") + " (block " + index
                + " of the keys given)");
    }

    /**
     * Entered: removes block {@code key} if it has no cached children.
     *
     * @return false if it was not cached
     * @throws IllegalStateException naming the block when children of it are cached (remove them first)
     */
    boolean remove(String key) {
        Segment segment = table.lockLiveOrNull(key);
        if (segment == null) {
            return false;
        }
        try {
            engine.removeLocked(segment);
            return true;
        } finally {
            segment.unlock();
        }
    }

    /**
     * Entered: makes the leading run of blocks {@code high[i]}, {@code low[i]} cached as one chain resident on
     * {@code tier} or faster and pins every block of it; the blocks that move are moved with one batch per tier pair.
     * All or nothing: if any copy fails, every block stays where it was.
     *
     * @throws IllegalArgumentException if a block of that run is not of {@code geometry} (nothing moved or pinned)
     */
    TieringEngine.PinnedChain pin(long[] high, long[] low, Tier tier, BlockGeometry geometry) {
        List<Segment> chain = lockChain(high, low);
        try {
            for (Segment block : chain) {
                geometry.requireMatches(block);
            }
            Tier[] tiers = new Tier[chain.size()];
            List<Mover.Move> moves = bookAndPrepare(chain, tier, tiers);
            if (!moves.isEmpty()) {
                Throwable failure = copyByTierPair(moves);
                if (failure != null) {
                    throw undoAll(moves, failure);
                }
            }
            return commitAndPin(chain, moves, tier, tiers);
        } finally {
            unlockAll(chain);
        }
    }

    /** Blocks pinned where they are: in chain order, each block's tier and pages as pinned; {@code unpin} releases them. */
    record PinnedInPlace(List<Segment> blocks, List<Tier> tiers, List<PageAllocation> placements, Runnable unpin) { }

    /**
     * Entered: pins the leading run of blocks {@code high[i]}, {@code low[i]} cached as one chain on whatever tier each
     * is, moving nothing (a layer stream reads them there), counting an access for each (tail first, as a restore).
     * A pinned block is not demoted or moved, and one removed meanwhile keeps its pages until unpinned, so the pages
     * returned hold its bytes until {@code unpin}. DISK blocks are checked against their CRC32C first: a stream never
     * hands out a layer of a block whose stored bytes changed.
     *
     * @throws IllegalArgumentException  if a block of that run is not of {@code geometry} (nothing pinned)
     * @throws dev.kvtier.SegmentCorruptedException if a DISK block's bytes fail their check (nothing pinned)
     */
    PinnedInPlace pinInPlace(long[] high, long[] low, BlockGeometry geometry) {
        List<Segment> chain = lockChain(high, low);
        try {
            for (Segment block : chain) {
                geometry.requireMatches(block);
            }
            Tier[] tiers = new Tier[chain.size()];
            PageAllocation[] placements = new PageAllocation[chain.size()];
            for (int i = 0; i < chain.size(); i++) {
                Segment block = chain.get(i);
                tiers[i] = table.currentTier(block);
                if (tiers[i] == Tier.DISK && block.crcKnown) {
                    mover.verifyDiskChecksum(block);
                }
                placements[i] = block.placement;
            }
            for (int i = chain.size() - 1; i >= 0; i--) {
                store.touch(chain.get(i).handle);
            }
            for (Segment block : chain) {
                block.pins++;
            }
            List<Segment> pins = List.copyOf(chain);
            return new PinnedInPlace(pins, List.of(tiers), List.of(placements), () -> engine.unpinAll(pins));
        } finally {
            unlockAll(chain);
        }
    }

    /**
     * As {@link #pin}, without blocking and layer by layer: the blocks are locked, booked and given their
     * destinations on a kvtier thread, then layer {@code l}'s regions ({@code offsets[l]}, {@code lengths[l]},
     * the same in every block) of every moving block are copied as one batch, the layers in order; the
     * future of layer {@code l} completes when its bytes are in place, and {@code pinned} once all are, the
     * moves are committed and the blocks pinned. On a failure every block stays where it was and the futures of
     * the layers not yet complete (and {@code pinned}) fail.
     *
     * <p>No dependent runs under the restore's locks or inside the gate: the futures are completed on a completion
     * thread ({@link Completions}), in layer order and {@code pinned} last, while the restore goes on without waiting
     * for them. A layer's future completes as soon as its copy is in place, before the commit, so that attention on
     * layer 0 overlaps the copies of later layers; a dependent calling into the cache meanwhile on these blocks waits
     * for their locks, that is until the commit, and then sees them committed. {@code pinned} completes only after the
     * restore released its locks and left the gate. Whoever takes {@code pinned} owns the pins: if it was completed
     * already (cancelled, timed out) when the restore finishes, the pins are released right there.
     *
     * @throws IllegalStateException after close
     */
    TieringEngine.LayeredRestore pinLayered(long[] high, long[] low, Tier tier, long[][] offsets, long[][] lengths) {
        List<CompletableFuture<List<ResidentSegment>>> layers = new ArrayList<>(offsets.length);
        for (int l = 0; l < offsets.length; l++) {
            layers.add(new CompletableFuture<>());
        }
        CompletableFuture<TieringEngine.PinnedChain> pinned = new CompletableFuture<>();
        LayerCompletions completions = new LayerCompletions(layers, completers.sequence());
        gate.enter();
        try {
            restorers.execute(() -> {
                TieringEngine.PinnedChain chain = null;
                Throwable failure = null;
                try {
                    chain = engine.countedCall(() -> restoreLayers(high, low, tier, offsets, lengths, completions));
                } catch (Throwable t) {
                    failure = t;
                } finally {
                    gate.exit();
                }
                completions.finish(pinned, chain, failure); // outside the gate and every lock
            });
        } catch (RejectedExecutionException e) {
            gate.exit();
            throw new IllegalStateException("the cache is closed", e);
        }
        return new TieringEngine.LayeredRestore(List.copyOf(layers), pinned);
    }

    /**
     * The futures of one layered restore, completed through one {@link Completions.Sequence}: layers in order as their
     * bytes arrive, then the outcome. Only the restore's thread calls it.
     */
    private static final class LayerCompletions {
        private final List<CompletableFuture<List<ResidentSegment>>> layers;
        private final Completions.Sequence sequence;
        /** Layers whose completion was posted. */
        private int posted;

        LayerCompletions(List<CompletableFuture<List<ResidentSegment>>> layers, Completions.Sequence sequence) {
            this.layers = layers;
            this.sequence = sequence;
        }

        /** Layer {@code layer}'s bytes are in place (layers arrive in order). */
        void arrived(int layer, List<ResidentSegment> view) {
            CompletableFuture<List<ResidentSegment>> future = layers.get(layer);
            sequence.post(() -> future.complete(view));
            posted = layer + 1;
        }

        /** Every layer is in place (nothing had to move). */
        void allArrived(List<ResidentSegment> view) {
            for (int l = posted; l < layers.size(); l++) {
                arrived(l, view);
            }
        }

        /**
         * The restore ended, left the gate and released its locks: {@code pinned} completes with {@code chain}, or the
         * layers not yet posted and {@code pinned} fail with {@code failure}. A pin nobody can take any more is
         * released.
         */
        void finish(CompletableFuture<TieringEngine.PinnedChain> pinned, TieringEngine.PinnedChain chain, Throwable failure) {
            if (failure != null) {
                List<CompletableFuture<List<ResidentSegment>>> left = layers.subList(posted, layers.size());
                sequence.post(() -> {
                    for (CompletableFuture<List<ResidentSegment>> layer : left) {
                        layer.completeExceptionally(failure);
                    }
                    pinned.completeExceptionally(failure);
                });
                return;
            }
            sequence.post(() -> {
                if (!pinned.complete(chain)) {
                    chain.unpin().run();
                }
            });
        }
    }

    private TieringEngine.PinnedChain restoreLayers(long[] high, long[] low, Tier tier, long[][] offsets,
                                                    long[][] lengths, LayerCompletions completions) {
        List<Segment> chain = lockChain(high, low);
        try {
            requireLayersCover(chain, lengths);
            Tier[] tiers = new Tier[chain.size()];
            List<Mover.Move> moves = bookAndPrepare(chain, tier, tiers);
            List<ResidentSegment> resident = new ArrayList<>(chain.size());
            int m = 0;
            for (int i = 0; i < chain.size(); i++) {
                Segment segment = chain.get(i);
                if (m < moves.size() && moves.get(m).segment() == segment) {
                    PageAllocation destination = moves.get(m++).destination();
                    resident.add(new ResidentSegment(segment.key, segment.positions, tier, tiers[i], segment.sizeBytes,
                            destination.runs()));
                } else {
                    resident.add(segment.resident(tiers[i], tiers[i]));
                }
            }
            List<ResidentSegment> view = Collections.unmodifiableList(resident);
            if (moves.isEmpty()) {
                completions.allArrived(view);
                return commitAndPin(chain, moves, tier, tiers);
            }
            List<PageAllocation> sources = new ArrayList<>(moves.size());
            List<PageAllocation> destinations = new ArrayList<>(moves.size());
            for (Mover.Move move : moves) {
                if (move.segment().placement.sizeBytes() != move.destination().sizeBytes()) {
                    throw new IllegalStateException("moving " + move.segment().key + ": sizes differ");
                }
                sources.add(move.segment().placement);
                destinations.add(move.destination());
            }
            Throwable failure = memories.copiesWithTheCpu()
                    ? copyLayersHere(sources, destinations, offsets, lengths, completions, view)
                    : copyLayersAhead(sources, destinations, offsets, lengths, completions, view);
            if (failure != null) {
                throw undoAll(moves, failure);
            }
            return commitAndPin(chain, moves, tier, tiers);
        } finally {
            unlockAll(chain);
        }
    }

    /**
     * Refuses a chain whose blocks the layers' ranges do not cover exactly: a restore through a view of smaller blocks
     * would copy part of each block and commit it. (The view checks the blocks' size before it asks; this holds the
     * promise also for a block stored again, by another view, between that check and the locks.)
     *
     * @throws IllegalArgumentException naming the first such block and both sizes
     */
    private static void requireLayersCover(List<Segment> chain, long[][] lengths) {
        long covered = 0;
        for (long[] layer : lengths) {
            for (long length : layer) {
                covered += length;
            }
        }
        for (Segment block : chain) {
            if (block.sizeBytes != covered) {
                throw new IllegalArgumentException("block \"" + block.key + "\" holds " + block.sizeBytes
                        + " bytes, but the layers of this view's layout cover " + covered + " bytes per block: open the"
                        + " view with the layout the block was stored with (one layout per cache)");
            }
        }
    }

    /**
     * The copies are the CPU's work: this thread copies each layer itself (no hand-off, no wake-up) and posts its
     * future's completion.
     *
     * @return the first failure, or null
     */
    private Throwable copyLayersHere(List<PageAllocation> sources, List<PageAllocation> destinations, long[][] offsets,
                                     long[][] lengths, LayerCompletions completions, List<ResidentSegment> view) {
        for (int l = 0; l < offsets.length; l++) {
            if (l > 0 && gate.isClosed()) {
                return closing(l);
            }
            try {
                memories.transferRangesAndWait(sources, destinations, offsets[l], lengths[l]);
            } catch (RuntimeException | InternalError e) {
                return Failures.cause(e);
            }
            completions.arrived(l, view);
        }
        return null;
    }

    /**
     * The copies run on a device: layer {@code l + 1} is started before layer {@code l} is waited for, so they run
     * back to back, and each layer's future completes as soon as it is in place (posted from this thread: never
     * from a driver's callback thread).
     *
     * @return the first failure, or null; returns only when no copy started can still write a destination
     */
    private Throwable copyLayersAhead(List<PageAllocation> sources, List<PageAllocation> destinations, long[][] offsets,
                                      long[][] lengths, LayerCompletions completions, List<ResidentSegment> view) {
        List<CompletableFuture<Void>> copies = new ArrayList<>(offsets.length);
        Throwable failure = null;
        for (int l = 0; l < offsets.length; l++) {
            for (int next = copies.size(); next <= Math.min(l + 1, offsets.length - 1) && failure == null; next++) {
                if (next > 0 && gate.isClosed()) {
                    failure = closing(next);
                    break;
                }
                try {
                    copies.add(memories.transferRanges(sources, destinations, offsets[next], lengths[next]));
                } catch (RuntimeException e) {
                    failure = e;
                }
            }
            if (l >= copies.size()) {
                break; // never started: nothing to wait for
            }
            try {
                memories.awaitTransfer(copies.get(l), destinations);
                if (failure == null) {
                    completions.arrived(l, view);
                }
            } catch (RuntimeException | InternalError e) {
                // Keep waiting for the later layers started: their copies still write the destinations.
                failure = failure == null ? Failures.cause(e) : failure;
            }
        }
        return failure;
    }

    /**
     * Why a layered restore stopped before layer {@code layer}: {@code close()} began, and it waits for the restore, so
     * the copies of later layers are not started (each is bounded by the transfer timeout, all of them together are
     * not): the restore is undone and {@code close()} waits at most for the layers already started.
     */
    private static IllegalStateException closing(int layer) {
        return new StoppedByClose("the cache is closing: the layered restore stopped before layer " + layer);
    }

    /** A layered restore stopped because the cache is closing: the caller's failure as is, not a failed copy. */
    private static final class StoppedByClose extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        StoppedByClose(String message) {
            super(message);
        }
    }

    /**
     * The block {@code high}, {@code low} if it is {@code previous}'s last child ({@link Segment#lastChild}: one cold
     * line, the block's own, where the table's look-up reads two more), live or not; else null.
     */
    private static Segment hintedChild(Segment previous, long high, long low) {
        Segment child = previous == null ? null : previous.lastChild;
        return child != null && child.isBlock(high, low) ? child : null;
    }

    /** Locks the leading run of blocks {@code high[i]}, {@code low[i]} that is live and chained (each the child of the one before). */
    private List<Segment> lockChain(long[] high, long[] low) {
        List<Segment> chain = new ArrayList<>(high.length);
        Segment previous = null;
        try {
            for (int i = 0; i < high.length; i++) {
                Segment peeked = hintedChild(previous, high[i], low[i]);
                if (peeked != null) {
                    peeked.lock();
                    if (!peeked.live) { // a child removed since: the table may know a new block of that hash
                        peeked.unlock();
                        peeked = null;
                    }
                }
                if (peeked == null) {
                    peeked = table.peekBlock(high[i], low[i]);
                    if (peeked == null || (i > 0 && peeked.parent != previous)) {
                        break;
                    }
                    // A segment live under its lock is the one the table maps its key to (it is published before it
                    // turns live and turns dead before it is unpublished): no second look-up of the key.
                    peeked.lock();
                    if (!peeked.live) { // removed meanwhile (perhaps replaced by a block of another parent)
                        peeked.unlock();
                        break;
                    }
                    if (previous != null) {
                        previous.lastChild = peeked; // the child asked for last is the likeliest next time
                    }
                }
                if (!recovery.recoveredIntact(peeked)) { // recovered, and its bytes fail their first check: dropped
                    peeked.unlock();
                    break;
                }
                chain.add(peeked);
                previous = peeked;
            }
        } catch (RuntimeException | Error e) {
            unlockAll(chain);
            throw e;
        }
        return chain;
    }

    private static void unlockAll(List<Segment> chain) {
        for (int i = chain.size() - 1; i >= 0; i--) {
            chain.get(i).unlock();
        }
    }

    /**
     * Books the promotion of every locked block slower than {@code tier} (making room for all of them
     * together) and prepares each move. On failure every booking is undone and nothing is allocated.
     *
     * @param tiers filled with each block's tier before the moves (they cannot change: the chain is locked)
     * @return the prepared moves, in chain order
     */
    private List<Mover.Move> bookAndPrepare(List<Segment> chain, Tier tier, Tier[] tiers) {
        List<Segment> moving = null;
        long bytes = 0;
        for (int i = 0; i < chain.size(); i++) {
            Segment segment = chain.get(i);
            Tier current = table.currentTier(segment);
            tiers[i] = current;
            if (tier.isFasterThan(current)) {
                if (segment.pins > 0) { // the message is built only when it is needed: this runs for every block moved
                    SegmentTable.requireUnpinned(segment, "make it resident on " + tier + " (it is pinned on " + current + ")");
                }
                if (moving == null) {
                    moving = new ArrayList<>(chain.size() - i);
                }
                moving.add(segment);
                bytes += segment.sizeBytes;
            }
        }
        if (moving == null) {
            return List.of(); // a hit needing no move costs only its metadata
        }
        List<Segment> toMove = moving;
        long bytesMoving = bytes;
        // Few rounds: a prefix that does not fit now (its tier's pages are fewer than its budget's bytes say, or held
        // by pins) is refused soon, and the caller uses the blocks where they are.
        List<TierTransfer> transfers = roomMaker.makingRoomForAll(moving, tier, bytes, RESTORE_ROUNDS,
                () -> bookAll(toMove, tier, bytesMoving));
        List<Mover.Move> moves = new ArrayList<>(moving.size());
        int i = 0;
        try {
            for (; i < moving.size(); i++) {
                moves.add(roomMaker.prepare(moving.get(i), transfers.get(i), 1)); // undoes its own booking on failure
            }
        } catch (RuntimeException | Error e) {
            for (Mover.Move move : moves) {
                roomMaker.undo(move.segment(), move.transfer(), move.destination(), e);
            }
            for (int j = i + 1; j < moving.size(); j++) {
                roomMaker.undo(moving.get(j), transfers.get(j), null, e);
            }
            throw e;
        }
        return moves;
    }

    /**
     * Books every promotion, tail first (so the chain's root is the most recently used of it, the last a
     * recency-ranking policy offers), or none: when one does not fit, the ones booked are put back.
     *
     * @param bytes the bytes of all of them
     * @return the bookings in chain order, or null when they did not all fit
     */
    private List<TierTransfer> bookAll(List<Segment> moving, Tier tier, long bytes) {
        if (roomMaker.free(tier) < bytes) {
            // They cannot all fit (a promotion only adds to the tier's bytes): say so before booking some of them
            // only to undo those, the first answer of almost every restore onto a full GPU.
            return null;
        }
        TierTransfer[] booked = new TierTransfer[moving.size()];
        for (int i = moving.size() - 1; i >= 0; i--) {
            Optional<TierTransfer> transfer = store.promote(moving.get(i).handle, tier);
            if (transfer.isEmpty()) {
                RuntimeException notNow = new IllegalStateException("no room for the whole prefix yet");
                for (int j = i + 1; j < moving.size(); j++) {
                    roomMaker.undo(moving.get(j), booked[j], null, notNow);
                }
                return null;
            }
            booked[i] = transfer.get();
        }
        return List.of(booked);
    }

    /**
     * Copies the moves' bytes, one batch per tier pair ({@link Mover#copyAll}: one
     * {@code cudaMemcpyBatchAsync} and one wait each).
     *
     * @return the first failure, or null when every byte is in place
     */
    private Throwable copyByTierPair(List<Mover.Move> moves) {
        Tier from = moves.get(0).transfer().from();
        boolean onePair = true;
        for (int i = 1; i < moves.size() && onePair; i++) {
            onePair = moves.get(i).transfer().from() == from;
        }
        Collection<List<Mover.Move>> groups;
        if (onePair) {
            groups = List.of(moves); // the usual restore: every block comes from one tier, no grouping needed
        } else {
            Map<Tier, List<Mover.Move>> byPair = new EnumMap<>(Tier.class);
            for (Mover.Move move : moves) {
                byPair.computeIfAbsent(move.transfer().from(), tier -> new ArrayList<>()).add(move);
            }
            groups = byPair.values();
        }
        Throwable first = null;
        for (List<Mover.Move> group : groups) {
            Throwable[] outcome = mover.copyAll(group);
            for (int i = 0; i < outcome.length && first == null; i++) {
                if (outcome[i] != null) {
                    first = Failures.copyFailed(group.get(i).segment().key, group.get(i).transfer().from(),
                            group.get(i).transfer().to(), outcome[i]);
                }
            }
        }
        return first;
    }

    /**
     * A copy failed: every move is aborted and its booking undone; returns what to throw, a low-level failure (a
     * {@code CudaException}, a transfer timeout, an I/O error) translated by {@link Failures} and kept as its cause.
     */
    private RuntimeException undoAll(List<Mover.Move> moves, Throwable failure) {
        RuntimeException outcome = failure instanceof KvTierException domain ? domain
                : failure instanceof StoppedByClose stopped ? stopped
                : Failures.copyFailed(moves.get(0).segment().key, moves.get(0).transfer().from(),
                moves.get(0).transfer().to(), failure);
        for (Mover.Move move : moves) {
            RuntimeException undone = roomMaker.undo(move.segment(), move.transfer(), move.destination(), outcome);
            if (undone != outcome) {
                outcome.addSuppressed(undone); // no room to roll that one back: it was removed
            }
        }
        return outcome;
    }

    /**
     * Commits every move, counts an access for the blocks that were there already (tail first), pins the
     * whole chain and returns it.
     *
     * @param tier  the tier the chain was made resident on: a block slower than it was moved there (exactly the
     *              blocks {@link #bookAndPrepare} moves), the others stayed where they were found
     * @param tiers each block's tier before the moves (where the restore found it)
     */
    private TieringEngine.PinnedChain commitAndPin(List<Segment> chain, List<Mover.Move> moves, Tier tier, Tier[] tiers) {
        if (!moves.isEmpty()) {
            commitAll(moves);
        }
        // Whether a block moved is read from its own tier, not by walking the moves beside the chain: the loops then
        // have one shape whether or not this restore moved anything. (Walked beside the moves, C2 hoisted checks it
        // had profiled out of these loops and threw the whole restore's compiled code away when a run's restores
        // began to move blocks, "profile_predicate" traps; JFR jdk.Deoptimization.)
        for (int i = chain.size() - 1; i >= 0; i--) {
            if (!tier.isFasterThan(tiers[i])) {
                store.touch(chain.get(i).handle);
            }
        }
        ResidentSegment[] resident = new ResidentSegment[chain.size()];
        Segment[] pinned = new Segment[chain.size()];
        for (int i = 0; i < resident.length; i++) {
            Segment segment = chain.get(i);
            Tier found = tiers[i];
            segment.pins++;
            pinned[i] = segment;
            resident[i] = segment.resident(tier.isFasterThan(found) ? tier : found, found);
        }
        List<Segment> pins = List.of(pinned);
        return new TieringEngine.PinnedChain(List.of(resident), () -> engine.unpinAll(pins));
    }

    /** Commits the moves of a restore: its own method, run only by restores that moved blocks. */
    private void commitAll(List<Mover.Move> moves) {
        for (int i = 0; i < moves.size(); i++) {
            mover.commit(moves.get(i));
        }
    }

    /**
     * After the gate closed (no work in flight): stops the restore threads, letting them and the completion threads
     * complete the futures of the restores that ran, until {@code deadlineNanos} at most (a dependent may block);
     * from one of these threads (a dependent closing the cache) it waits for none.
     */
    void shutdown(long deadlineNanos) {
        restorers.shutdown();
        if (!Completions.onCompleter() && !ON_RESTORER.get()) {
            // The restorers first: the last thing each does is post its outcome to the completion threads.
            Completions.awaitUntil(restorers, deadlineNanos, "layered restores");
        }
        completers.shutdown(deadlineNanos);
    }
}
