package dev.kvtier.tiering;

import dev.kvtier.CacheChangeListener;
import dev.kvtier.CacheStats;
import dev.kvtier.RecoveryReport;
import dev.kvtier.RemoteStoreConfig;
import dev.kvtier.RemoteStoreStats;
import dev.kvtier.KvTierConfig;
import dev.kvtier.ResidentSegment;
import dev.kvtier.SegmentCorruptedException;
import dev.kvtier.SegmentNotFoundException;
import dev.kvtier.TierFullException;
import dev.kvtier.TransferFailedException;
import dev.kvtier.exec.ExecutionBackend;
import dev.kvtier.exec.PageAllocation;
import dev.kvtier.persist.DiskJournal;
import dev.kvtier.persist.RecoveryProgress;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TierTransfer;
import dev.kvtier.store.TieredStore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The join of logical and physical behind {@code dev.kvtier.KvTierCache}: each operation as a
 * sequence of steps over the {@link SegmentTable} (per-key lock and placement), the
 * {@link TieredStore} (what lives where), the {@link RoomMaker} (eviction and rollback), the
 * {@link Mover} (one move's bytes), the {@link TierMemories} and, for a persisted DISK tier, the
 * {@link DiskRecovery}. The door has already checked the arguments; operations marked "entered" run
 * inside {@link #gate()} (the door enters), the others enter themselves.
 *
 * <p>Thread-safe: operations on one key are serialized by its segment's lock; operations on
 * different keys run concurrently.
 */
public final class TieringEngine {
    private static final System.Logger LOG = System.getLogger(TieringEngine.class.getName());

    /** A pin on a resident segment; {@code unpin} releases it (idempotence is the caller's). */
    public record Pinned(ResidentSegment segment, Runnable unpin) { }

    /** Pins on the blocks of a chain's leading run, in chain order; {@code unpin} releases them all (once). */
    public record PinnedChain(List<ResidentSegment> segments, Runnable unpin) { }

    /**
     * A chain restored layer by layer: {@code layers.get(l)} completes with the blocks (their pages on the
     * target tier) once layer {@code l} of every block is in place; {@code pinned} once all are, the blocks
     * are pinned and the restore released its locks and left the gate. Each is completed on a completion
     * thread, never under the restore's locks (see {@link PrefixChains#pinLayered}); whoever completes
     * {@code pinned} first (cancels it) leaves the pins to the restore, which releases them.
     */
    public record LayeredRestore(List<CompletableFuture<List<ResidentSegment>>> layers,
                                 CompletableFuture<PinnedChain> pinned) { }

    private final TieredStore store;
    private final TierMemories memories;
    private final SegmentTable table;
    private final TierCounters counters = new TierCounters();
    private final ChangeListeners listeners = new ChangeListeners();
    private final Mover mover;
    private final RoomMaker roomMaker;
    private final OperationGate gate = new OperationGate(listeners::deliver);
    private final Residencies residencies;
    private final PrefixChains chains;
    private final LayerStreams streams;
    private final Path createdDiskDirectory;
    private final PersistedDisk persisted;
    private final DiskRecovery diskRecovery;
    /** How long {@link #close} waits, at most, for the futures of operations done before it to be completed. */
    private final Duration transferTimeout;
    /** The remote block store's traffic, or null without one (set by {@link #open} before the engine is shared). */
    private RemoteBlocks remote;

    private TieringEngine(TieredStore store, TierMemories memories, Path createdDiskDirectory, PersistedDisk persisted,
                          double roomBatchFraction, Duration transferTimeout) {
        this.store = store;
        this.transferTimeout = transferTimeout;
        this.memories = memories;
        this.createdDiskDirectory = createdDiskDirectory;
        this.persisted = persisted;
        this.table = new SegmentTable(store, memories, persisted);
        this.mover = new Mover(memories, counters, listeners, persisted);
        this.roomMaker = new RoomMaker(store, table, mover, DemotionCascade.STANDARD, listeners, counters,
                roomBatchFraction);
        this.residencies = new Residencies(gate, this::makeResident);
        this.diskRecovery = new DiskRecovery(store, memories, table, persisted, this::dropWithDescendants);
        this.chains = new PrefixChains(this, diskRecovery, store, table, roomMaker, mover, memories, gate);
        this.streams = new LayerStreams(this, chains, store, roomMaker, mover, memories, gate);
    }

    /**
     * Opens the backend {@code config} asks for, wrapped by {@code decorate} (tests inject faults this way).
     *
     * @throws dev.kvtier.CacheOpenException if the disk directory cannot be created, locked or read, or CUDA was
     *                                        asked for and is not usable
     */
    public static TieringEngine open(KvTierConfig config, UnaryOperator<ExecutionBackend> decorate) {
        Path created = null;
        Path diskDirectory;
        try {
            if (config.diskDirectory().isPresent()) {
                diskDirectory = config.diskDirectory().get();
                Files.createDirectories(diskDirectory);
            } else {
                diskDirectory = created = Files.createTempDirectory("kvtier-disk-");
            }
        } catch (IOException e) {
            throw Failures.openFailed(config.diskDirectory().map(d -> "create the disk directory " + d)
                    .orElse("create a temporary disk directory"), e);
        }
        TierMemories memories = null;
        PersistedDisk persisted = PersistedDisk.VOLATILE;
        RemoteBlocks remote = null;
        try {
            // The store first: a bad policy fails before any thread or native memory exists.
            TieredStore store = new TieredStore(config.gpuBudgetBytes(), config.cpuBudgetBytes(), config.diskBudgetBytes(),
                    config.policy());
            ExecutionBackend backend = BackendSelection.open(config, diskDirectory);
            try {
                backend = decorate.apply(backend);
            } catch (RuntimeException | Error e) {
                backend.close();
                throw e;
            }
            memories = TierMemories.open(backend, config);
            long recoveryStart = System.nanoTime();
            RecoveryProgress progress = new RecoveryProgress(diskDirectory.toString(), recoveryStart);
            DiskJournal.Opened journal = null;
            if (config.persistence().isPresent()) {
                try {
                    journal = DiskJournal.open(diskDirectory, config.persistence().get(), config.pageSizeBytes(),
                            memories.diskExtentBytes(), progress);
                } catch (IOException e) {
                    throw Failures.openFailed("read or write the journal of the persisted disk directory "
                            + diskDirectory, e);
                }
                persisted = new PersistedDisk(journal.journal(), store);
            }
            if (config.remote().isPresent()) {
                remote = RemoteBlocks.open(config.remote().get(), config.transferTimeout().toNanos());
            }
            TieringEngine engine = new TieringEngine(store, memories, created, persisted, config.roomBatchFraction(),
                    config.transferTimeout());
            if (remote != null) {
                engine.shareThrough(remote);
            }
            LOG.log(System.Logger.Level.INFO, "kvtier backend: " + memories.description() + "; DISK tier: "
                    + diskWords(config, diskDirectory, created != null));
            if (journal != null) {
                engine.diskRecovery.recover(journal, config.persistence().get(), diskDirectory, recoveryStart, progress);
            }
            return engine;
        } catch (RuntimeException | Error e) {
            // Nothing of a failed open may outlive it: copy threads, native memory, a directory we made.
            if (remote != null) {
                remote.close(System.nanoTime());
            }
            persisted.close(); // before the extents it syncs are unmapped
            if (memories != null) {
                try {
                    memories.close();
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            deleteCreated(created, e);
            throw e;
        }
    }

    /**
     * Where the DISK tier lives and how large it may grow, for the open's log line: a temporary directory and an
     * unbounded tier are said plainly, with the settings that change them, as neither is visible otherwise.
     */
    static String diskWords(KvTierConfig config, Path directory, boolean temporary) {
        return directory + (temporary ? " (a temporary directory, deleted on close: set diskDirectory to choose one)" : "")
                + (config.diskBounded() ? ", budget " + config.diskBudgetBytes() + " bytes"
                : ", unbounded until the file system is full (set diskBudgetBytes to bound it)");
    }

    /**
     * Drops a locked live segment and, for a prefix block, every cached descendant first (children before parents,
     * so no child outlives its parent and none is left pointing to a block that is gone). Locks the descendants
     * parents first, as chains do.
     *
     * @return how many descendants were dropped with it
     */
    int dropWithDescendants(Segment segment) {
        List<Segment> descendants = segment.liveChildren() > 0 ? table.descendantsOf(segment) : List.of();
        List<Segment> locked = new ArrayList<>(descendants.size());
        try {
            for (Segment descendant : descendants) {
                descendant.lock();
                locked.add(descendant);
            }
            for (int i = locked.size() - 1; i >= 0; i--) {
                if (locked.get(i).live) {
                    dropAndTell(locked.get(i));
                }
            }
            dropAndTell(segment);
        } finally {
            for (int i = locked.size() - 1; i >= 0; i--) {
                locked.get(i).unlock();
            }
        }
        return descendants.size();
    }

    /** What the open recovered from the persisted disk directory; empty without persistence. */
    public Optional<RecoveryReport> recovery() {
        return persisted.report();
    }

    /** Deletes a disk directory this cache created, if it did; a failure is kept on {@code failure} or logged. */
    private static void deleteCreated(Path created, Throwable failure) {
        if (created == null) {
            return;
        }
        try {
            Files.deleteIfExists(created);
        } catch (IOException e) {
            if (failure != null) {
                failure.addSuppressed(e);
            } else {
                LOG.log(System.Logger.Level.WARNING, "could not delete " + created + ": " + e);
            }
        }
    }

    /** The lifecycle gate the door enters and exits around each operation. */
    public OperationGate gate() {
        return gate;
    }

    /** Entered: caches a copy of {@code bytes} as {@code key} on {@code tier}, making room first. */
    public void put(String key, PositionRange positions, MemorySegment bytes, Tier tier) {
        counted(() -> insert(key, positions, bytes.byteSize(), tier, copiedIn(bytes, tier, false)));
    }

    /**
     * Fills a new segment with a copy of {@code bytes} on {@code tier} (making room; {@code quickly}: giving up
     * soon), checksummed first.
     */
    Function<Segment, PageAllocation> copiedIn(MemorySegment bytes, Tier tier, boolean quickly) {
        return segment -> {
            // Taken from the caller's bytes, before any copy: what every later DISK arrival must match.
            segment.crc32c = memories.crc32c(bytes);
            segment.crcKnown = true;
            PageAllocation pages = roomMaker.withRoom(segment.key, tier, bytes.byteSize(), quickly ? 0 : RoomMaker.SHORTAGE_PATIENCE,
                    () -> mover.allocate(segment.key, tier, bytes.byteSize(), null));
            try {
                mover.copy(() -> memories.copyIn(bytes, pages), segment.key, null, tier, bytes.byteSize());
                if (tier == Tier.DISK) {
                    mover.checkArrival(segment, pages, null, tier);
                }
            } catch (RuntimeException e) {
                memories.release(pages);
                throw e;
            }
            if (tier == Tier.DISK) {
                persisted.stored(segment, pages); // after its bytes are in place and checked
            }
            return pages;
        };
    }

    /** Entered: caches caller-owned device memory as {@code key} on GPU without a copy, making room first. */
    public void adopt(String key, PositionRange positions, MemorySegment deviceSegment) {
        counted(() -> insert(key, positions, deviceSegment.byteSize(), Tier.GPU,
                segment -> memories.external(Tier.GPU, deviceSegment)));
    }

    /** Registers a new key (making room), fills it, and publishes it; undoes everything on failure. */
    private Void insert(String key, PositionRange positions, long sizeBytes, Tier tier,
                        Function<Segment, PageAllocation> filler) {
        Segment segment = new Segment(key, positions, sizeBytes);
        segment.lock();
        try {
            if (!insertLocked(segment, tier, filler, false)) {
                throw new IllegalArgumentException("key \"" + key + "\" is already cached; remove it first");
            }
            return null;
        } finally {
            segment.unlock();
        }
    }

    /**
     * Publishes a new segment the calling thread has locked, registers it on {@code tier} (making room),
     * fills it and makes it live (a block is counted in its parent's children); undoes everything on
     * failure. The lock stays the caller's. {@code quickly}: making room gives up after a couple of rounds
     * (the caller has a slower tier to try).
     *
     * @return false, having changed nothing, when the key is cached already (perhaps published by another call
     *         just now: the caller decides whether that is an error)
     */
    boolean insertLocked(Segment segment, Tier tier, Function<Segment, PageAllocation> filler, boolean quickly) {
        SegmentMeta meta = SegmentMeta.of(segment.key, segment.positions, segment.sizeBytes);
        if (!table.publish(segment)) {
            return false;
        }
        boolean registered = false;
        try {
            segment.handle = roomMaker.register(meta, tier, quickly ? 2 : RoomMaker.ROUNDS, segment);
            registered = true;
            segment.placement = filler.apply(segment);
            segment.live = true;
            segment.countOn(tier);
            listeners.added(segment.key, tier, segment.sizeBytes);
            return true;
        } catch (RuntimeException | Error e) {
            if (registered) {
                store.discard(segment.handle);
            }
            table.unpublish(segment);
            throw e;
        }
    }

    /** A new segment turned live on {@code tier} (inserted by {@link PrefixChains} as part of a run): tells the listeners. */
    void added(String key, Tier tier, long sizeBytes) {
        listeners.added(key, tier, sizeBytes);
    }

    /** Entered: moves {@code key} to {@code to}, which must be faster ({@code promotion}) or slower than where it is. */
    public void move(String key, Tier to, boolean promotion) {
        counted(() -> moveLocked(key, to, promotion));
    }

    private Void moveLocked(String key, Tier to, boolean promotion) {
        Segment segment = promotion ? lockLiveWithParent(key) : table.lockLive(key);
        try {
            diskRecovery.verifyRecovered(segment);
            Tier from = table.currentTier(segment);
            if (from == to) {
                return null;
            }
            if (promotion != to.isFasterThan(from)) {
                throw new IllegalArgumentException("to must be " + (promotion ? "faster" : "slower") + " than "
                        + from + " where segment \"" + key + "\" is, was " + to);
            }
            SegmentTable.requireUnpinned(segment, (promotion ? "promote" : "demote") + " it to " + to);
            if (promotion) {
                requireNotAboveParent(segment, to, "promote it to " + to);
            }
            if (!promotion && segment.holdsChildFasterThan(to)) {
                throw new IllegalStateException("segment \"" + key + "\" is a prefix block with child blocks on a tier"
                        + " faster than " + to + "; demote them first (a chain leaves a tier from its tail)");
            }
            Optional<TierTransfer> transfer = promotion ? store.promote(segment.handle, to) : store.demote(segment.handle, to);
            if (transfer.isEmpty()) {
                throw new TierFullException(key, to, segment.sizeBytes, roomMaker.free(to), "demote or remove segments there first");
            }
            roomMaker.move(segment, transfer.get());
            return null;
        } finally {
            if (promotion) {
                unlockWithParent(segment);
            } else {
                segment.unlock();
            }
        }
    }

    /**
     * Locks {@code key}'s live segment and, when it is a prefix block with a parent, that parent first (root to tail,
     * the order of every chain call), so the parent's tier holds while the block moves ({@link #requireNotAboveParent}).
     * Unlock with {@link #unlockWithParent}.
     *
     * @throws SegmentNotFoundException if {@code key} is not cached
     */
    private Segment lockLiveWithParent(String key) {
        while (true) {
            Segment peeked = table.peek(key);
            Segment parent = peeked == null ? null : peeked.parent;
            if (parent != null) {
                parent.lock();
            }
            Segment segment;
            try {
                segment = table.lockLive(key);
            } catch (RuntimeException | Error e) {
                if (parent != null) {
                    parent.unlock();
                }
                throw e;
            }
            if (segment.parent == parent) {
                return segment;
            }
            // Replaced meanwhile by a segment of another parent: again, with that one.
            segment.unlock();
            if (parent != null) {
                parent.unlock();
            }
        }
    }

    private static void unlockWithParent(Segment segment) {
        segment.unlock();
        if (segment.parent != null) {
            segment.parent.unlock();
        }
    }

    /**
     * The prefix rule on the segment API: a block (locked, with its parent, by {@link #lockLiveWithParent}) is never
     * made resident on a tier faster than its parent's.
     *
     * @throws IllegalStateException naming both blocks and tiers when {@code to} is faster than the parent's tier
     */
    private void requireNotAboveParent(Segment segment, Tier to, String action) {
        Segment parent = segment.parent;
        if (parent == null || !parent.live) {
            return;
        }
        Tier parentTier = table.currentTier(parent);
        if (to.isFasterThan(parentTier)) {
            throw new IllegalStateException("cannot " + action + ": prefix block \"" + segment.key + "\" would be on "
                    + to + ", faster than its parent \"" + parent.key + "\" on " + parentTier + " (a child is never on"
                    + " a faster tier than its parent); make the prefix resident from its first block"
                    + " (PrefixBlockCache.ensurePrefixResident) instead");
        }
    }

    /**
     * Makes {@code key} resident on {@code tier} or faster; enters itself. When no move of the key is in
     * flight (its lock is free) the work is done right here, under that lock: a hit costs only metadata and a
     * promotion needs no future or single-flight entry, and a call arriving meanwhile waits for the lock and
     * then finds the segment resident, so concurrent calls still share the one transfer. Otherwise the call
     * joins the residency in flight ({@link Residencies}), which also answers a key not cached. Timed for the
     * listeners only when one wants the times ({@link ChangeListeners#anyTimed}).
     */
    public ResidentSegment ensureResident(String key, Tier tier) {
        if (!listeners.anyTimed()) {
            return ensureResidentUntimed(key, tier);
        }
        long start = System.nanoTime();
        Tier foundOn = null;
        try {
            ResidentSegment resident = ensureResidentUntimed(key, tier);
            foundOn = resident.foundOn();
            return resident;
        } finally {
            listeners.ensureResidentCompleted(key, tier, foundOn, System.nanoTime() - start);
            listeners.deliver(); // the call has left the gate: no exit follows to deliver it
        }
    }

    private ResidentSegment ensureResidentUntimed(String key, Tier tier) {
        gate.enter();
        try {
            Segment segment = table.peek(key);
            // A block with a parent takes the residency path: its parent is locked first there.
            if (segment != null && segment.parent == null && segment.tryLock()) {
                try {
                    if (segment.live) {
                        return counted(() -> makeResident(segment, tier));
                    }
                } finally {
                    segment.unlock();
                }
            }
        } finally {
            gate.exit();
        }
        return residencies.ensureResident(key, tier);
    }

    /** {@link #ensureResident} on a kvtier thread; enters itself. */
    public CompletableFuture<ResidentSegment> ensureResidentAsync(String key, Tier tier) {
        if (!listeners.anyTimed()) {
            return residencies.ensureResidentAsync(key, tier);
        }
        long start = System.nanoTime();
        CompletableFuture<ResidentSegment> future = residencies.ensureResidentAsync(key, tier);
        // The caller gets the dependent: listeners hear of the completion before the caller does. It is a
        // copy already (completing or cancelling it never affected the transfer), and listeners never throw.
        return future.whenComplete((resident, failure) -> {
            listeners.ensureResidentCompleted(key, tier, failure == null ? resident.foundOn() : null,
                    System.nanoTime() - start);
            listeners.deliver(); // completed after the residency left the gate and its locks
        });
    }

    /** Registers {@code listener} for every later committed change (see {@link CacheChangeListener}). */
    public void addListener(CacheChangeListener listener) {
        listeners.add(listener);
    }

    /** @return whether {@code listener} was registered; it hears nothing after this returns */
    public boolean removeListener(CacheChangeListener listener) {
        return listeners.remove(listener);
    }

    /** Entered (by {@link Residencies}): the work of one residency, on the calling thread. */
    private ResidentSegment makeResident(String key, Tier tier) {
        return counted(() -> makeResidentLocked(key, tier));
    }

    private ResidentSegment makeResidentLocked(String key, Tier tier) {
        Segment segment = lockLiveWithParent(key);
        try {
            return makeResident(segment, tier);
        } finally {
            unlockWithParent(segment);
        }
    }

    /**
     * For a locked, live segment (a block with a parent: locked with it, {@link #lockLiveWithParent}): counts the
     * access if it is on {@code tier} or faster, else promotes it there.
     */
    private ResidentSegment makeResident(Segment segment, Tier tier) {
        diskRecovery.verifyRecovered(segment);
        String key = segment.key;
        Tier current = table.currentTier(segment);
        if (!tier.isFasterThan(current)) {
            store.touch(segment.handle);
            return segment.resident(current, current);
        }
        if (segment.pins > 0) { // the message is built only when it is needed
            SegmentTable.requireUnpinned(segment, "make it resident on " + tier + " (it is pinned on " + current + ")");
        }
        requireNotAboveParent(segment, tier, "make it resident on " + tier);
        TierTransfer transfer = roomMaker.makingRoomUntil(key, tier, segment.sizeBytes,
                () -> store.promote(segment.handle, tier).orElse(null));
        roomMaker.move(segment, transfer);
        return segment.resident(tier, current);
    }

    /**
     * Makes {@code key} resident on {@code tier} or faster and pins it there; enters itself. Another
     * call may demote it between the two steps; then it is made resident again, for a bounded number
     * of rounds.
     *
     * @throws TierFullException if other calls kept demoting it
     */
    public Pinned pin(String key, Tier tier) {
        Pinned pinned = RoomMaker.retry(() -> {
            // not timed as an ensureResident call: the caller pins
            Tier foundOn = residencies.ensureResident(key, tier).foundOn();
            gate.enter();
            try {
                Segment segment = table.lockLive(key);
                try {
                    Tier current = table.currentTier(segment);
                    if (!tier.isFasterThan(current)) {
                        segment.pins++;
                        return new Pinned(segment.resident(current, foundOn), () -> unpin(segment));
                    }
                    return null;
                } finally {
                    segment.unlock();
                }
            } finally {
                gate.exit();
            }
        }, () -> true);
        if (pinned != null) {
            return pinned;
        }
        Segment segment = table.peek(key);
        throw new TierFullException(key, tier, segment == null ? 0 : segment.sizeBytes, roomMaker.free(tier),
                "other calls demoted it " + RoomMaker.ROUNDS + " times before it could be pinned; retry");
    }

    /** A pin closed: the last one frees the pages of a segment removed meanwhile. Nothing after close. */
    private void unpin(Segment segment) {
        if (!gate.tryEnter()) {
            return; // close() freed everything
        }
        try {
            table.unpin(segment);
        } finally {
            gate.exit();
        }
    }

    // ---------------------------------------------------------------- prefix blocks (see PrefixChains)

    // A chain's blocks are named by their 128-bit hashes, as two arrays of words (block i: high[i], low[i]); each is
    // cached under the key BlockKeys.of(high, low), but the chain calls find blocks by hash, building no key.

    /**
     * Entered: the tiers of the leading run of blocks {@code high[i]}, {@code low[i]} cached as one chain.
     *
     * @throws IllegalArgumentException if a block of that run is not of {@code geometry}
     */
    public List<Tier> lookupChain(long[] high, long[] low, BlockGeometry geometry) {
        List<Tier> tiers = chains.lookup(high, low, geometry);
        listeners.prefixLookedUp(high.length, tiers.size());
        return tiers;
    }

    /** Entered: how many leading blocks are cached as one chain, as {@link #lookupChain} but heard by no listener. */
    public int localChainLength(long[] high, long[] low, BlockGeometry geometry) {
        return chains.lookup(high, low, geometry).size();
    }

    /**
     * Entered: stores blocks continuing block {@code parentHigh}, {@code parentLow} (not a cached block: a chain's
     * start), block {@code i} being hash {@code high[i]}, {@code low[i]} with bytes
     * {@code [i * bytesPerBlock, (i + 1) * bytesPerBlock)} ({@code geometry}'s); a new block goes to {@code tier}, or
     * its parent's tier when slower. Returns how many were new; {@code stored}, when not null (an element per block),
     * is set where a block was new.
     *
     * @throws dev.kvtier.ParentNotCachedException if the parent is neither the root (both words 0) nor cached
     */
    public int storeChain(long parentHigh, long parentLow, long[] high, long[] low, MemorySegment bytes,
                          BlockGeometry geometry, Tier tier, boolean[] stored) {
        return counted(() -> chains.store(parentHigh, parentLow, high, low, bytes, geometry, tier, stored));
    }

    /**
     * Entered: copies block {@code high}, {@code low}'s bytes into the start of {@code dst}, wherever it is.
     *
     * @throws SegmentNotFoundException naming the block's key if it is not cached
     * @throws IllegalArgumentException  if the block is not of {@code geometry}
     */
    public void readBlock(long high, long low, MemorySegment dst, BlockGeometry geometry) {
        counted(() -> {
            Segment block = table.lockLiveBlockOrNull(high, low);
            if (block == null) {
                throw new SegmentNotFoundException(BlockKeys.of(high, low));
            }
            try {
                geometry.requireMatches(block);
            } catch (IllegalArgumentException e) {
                block.unlock();
                throw e;
            }
            return readLocked(block, dst);
        });
    }

    /** Entered: removes a block without cached children; false if not cached; IllegalStateException if it has some. */
    public boolean removeBlock(String key) {
        return chains.remove(key);
    }

    /**
     * Entered: makes the leading run of blocks {@code high[i]}, {@code low[i]} cached as one chain resident on
     * {@code tier} or faster (one batched transfer per tier pair) and pins it; all or nothing.
     *
     * @throws IllegalArgumentException if a block of that run is not of {@code geometry} (nothing moved or pinned)
     */
    public PinnedChain pinChain(long[] high, long[] low, Tier tier, BlockGeometry geometry) {
        if (!listeners.any()) {
            return countedTransfers(() -> chains.pin(high, low, tier, geometry));
        }
        long start = System.nanoTime();
        int blocks = 0;
        boolean succeeded = false;
        try {
            PinnedChain pinned = countedTransfers(() -> chains.pin(high, low, tier, geometry));
            blocks = pinned.segments().size();
            succeeded = true;
            return pinned;
        } finally {
            listeners.prefixRestoreCompleted(tier, blocks, System.nanoTime() - start, succeeded);
        }
    }

    /**
     * Runs a chain restore, counting it as failed when its bytes could not be moved or checked; a prefix that
     * did not fit ({@code TierFullException}) is an answer, not a failed transfer.
     */
    private <T> T countedTransfers(Supplier<T> call) {
        try {
            return call.get();
        } catch (TransferFailedException | SegmentCorruptedException e) {
            counters.failed();
            throw e;
        }
    }

    /** Enters itself: {@link #pinChain} without blocking, one batched transfer per layer (regions per layer). */
    public LayeredRestore pinChainLayered(long[] high, long[] low, Tier tier, long[][] offsets, long[][] lengths) {
        if (!listeners.any()) {
            return chains.pinLayered(high, low, tier, offsets, lengths);
        }
        long start = System.nanoTime();
        LayeredRestore restore = chains.pinLayered(high, low, tier, offsets, lengths);
        // A dependent of the restore's own future, not handed to the caller: the listeners hear of it as it completes.
        restore.pinned().whenComplete((pinned, failure) -> {
            listeners.prefixRestoreCompleted(tier, failure == null ? pinned.segments().size() : 0,
                    System.nanoTime() - start, failure == null);
            listeners.deliver(); // pinned completes after the restore left the gate and its locks
        });
        return restore;
    }

    /**
     * Entered: pins the chain's leading cached run where each block is and streams it layer by layer through a GPU
     * staging area (see {@link LayerStream}); a failure to start (no room for the staging area, corrupted DISK bytes)
     * is counted as a restore's is.
     */
    public LayerStream streamChainByLayer(long[] high, long[] low, BlockGeometry geometry, long[][] offsets,
                                          long[][] lengths) {
        return countedTransfers(() -> streams.open(high, low, geometry, offsets, lengths));
    }

    /** Releases pins taken by {@link #pinChain}; the last pin of a removed block frees its pages. */
    void unpinAll(List<Segment> segments) {
        if (!gate.tryEnter()) {
            return; // close() freed everything
        }
        try {
            for (Segment segment : segments) {
                table.unpin(segment);
            }
        } finally {
            gate.exit();
        }
    }

    /** How a chain restore on another thread is counted (see {@link #pinChain}). */
    <T> T countedCall(Supplier<T> call) {
        return countedTransfers(call);
    }

    /** Entered: copies {@code key}'s bytes into the start of {@code dst}, wherever the segment is. */
    public void read(String key, MemorySegment dst) {
        counted(() -> readLocked(table.lockLive(key), dst));
    }

    /** Copies out the bytes of a segment locked (and live) by the caller; unlocks it. */
    private Void readLocked(Segment segment, MemorySegment dst) {
        String key = segment.key;
        try {
            if (dst.byteSize() < segment.sizeBytes) {
                throw new IllegalArgumentException("dst holds " + dst.byteSize() + " bytes but segment \"" + key
                        + "\" has " + segment.sizeBytes);
            }
            boolean checkedJustNow = !segment.verified;
            diskRecovery.verifyRecovered(segment);
            Tier tier = table.currentTier(segment);
            if (tier == Tier.DISK && !checkedJustNow) { // a recovered segment's first read: checked above
                mover.verifyDiskChecksum(segment);
            }
            PageAllocation placement = segment.placement;
            mover.copy(() -> memories.copyOut(placement, dst), key, tier, null, segment.sizeBytes);
            return null;
        } finally {
            segment.unlock();
        }
    }

    /**
     * Entered: removes {@code key} and frees its memory; empty if it is not cached.
     *
     * @throws IllegalStateException if it is a prefix block with cached children (see {@link #removeLocked})
     */
    public Optional<SegmentMeta> remove(String key) {
        return ifCached(key, this::removeLocked);
    }

    /**
     * Removes a locked live segment, by either API: a prefix block only when no child of it is cached (no parent
     * leaves the cache while a child stays), and the policy's hold on its parent for it released.
     *
     * @throws IllegalStateException naming the block and its number of children when it has cached children
     */
    Optional<SegmentMeta> removeLocked(Segment segment) {
        if (!segment.isBlock()) {
            return dropAndTell(segment);
        }
        int children = segment.liveChildren();
        if (children > 0) {
            throw new IllegalStateException("block \"" + segment.key + "\" has " + children + " cached child block(s):"
                    + " remove them first (a block without its parent is useless)");
        }
        Tier tier = table.currentTier(segment);
        Optional<SegmentMeta> removed = dropAndTell(segment);
        roomMaker.releaseParent(segment, tier);
        return removed;
    }

    /**
     * Removes a locked live segment from the cache and tells the listeners, with the tier it was on: how a
     * remove, a prefix block's remove and a recovered segment failing its first check end.
     */
    Optional<SegmentMeta> dropAndTell(Segment segment) {
        Optional<SegmentMeta> removed = table.drop(segment);
        removed.ifPresent(meta -> listeners.removed(segment.key, meta.tier(), meta.sizeBytes()));
        return removed;
    }

    /** Entered: {@code key}'s metadata once no transfer of it is in flight; empty if it is not cached. */
    public Optional<SegmentMeta> get(String key) {
        return ifCached(key, segment -> store.get(segment.handle));
    }

    /** Runs {@code action} on {@code key}'s segment, locked and live; empty if {@code key} is not cached. */
    private Optional<SegmentMeta> ifCached(String key, Function<Segment, Optional<SegmentMeta>> action) {
        Segment segment = table.lockLiveOrNull(key);
        if (segment == null) {
            return Optional.empty();
        }
        try {
            return action.apply(segment);
        } finally {
            segment.unlock();
        }
    }

    /**
     * Runs a call, counting it as failed once when its bytes could not be moved or checked (however
     * many retries failed inside it).
     */
    private <T> T counted(Supplier<T> call) {
        try {
            return call.get();
        } catch (TransferFailedException | SegmentCorruptedException e) {
            counters.failed();
            throw e;
        } catch (TierFullException e) {
            if (e.getCause() != null) {
                counters.failed();
            }
            throw e;
        }
    }

    /** Entered: usage per tier, transfers, failures and bytes moved per tier pair, and the remote store's traffic. */
    public CacheStats stats() {
        return counters.snapshot(store, memories, remote == null ? RemoteStoreStats.NONE : remote.stats());
    }

    /** The remote block store's traffic, or null when none is configured. */
    public RemoteBlocks remote() {
        return remote;
    }

    /** Connects {@code remote}: it reads blocks demoted to DISK through this engine, and hears of those demotions. */
    private void shareThrough(RemoteBlocks remote) {
        this.remote = remote;
        remote.readDemotedWith(this::readForRemote);
        if (remote.writeThrough() == RemoteStoreConfig.WriteThrough.ON_DEMOTION_TO_DISK) {
            // A block reaches DISK by a demotion, or by a store that found no room on the faster tiers.
            listeners.add(new CacheChangeListener() {
                @Override
                public void segmentAdded(String key, Tier tier, long bytes) {
                    if (tier == Tier.DISK && BlockKeys.isBlockKey(key)) {
                        remote.writeDemoted(BlockKeys.high(key), BlockKeys.low(key), bytes);
                    }
                }

                @Override
                public void segmentMoved(String key, Tier from, Tier to, long bytes) {
                    if (to == Tier.DISK && BlockKeys.isBlockKey(key)) {
                        remote.writeDemoted(BlockKeys.high(key), BlockKeys.low(key), bytes);
                    }
                }
            });
        }
    }

    /** {@link RemoteBlocks.BlockReader}: enters itself, and answers null rather than throw. */
    private long[] readForRemote(long high, long low, long sizeBytes, long tokens, byte[] value, int at) {
        if (!gate.tryEnter()) {
            return null;
        }
        try {
            Segment block = table.lockLiveBlockOrNull(high, low);
            if (block == null) {
                return null;
            }
            if (block.sizeBytes != sizeBytes || block.positions.length() != tokens) {
                block.unlock();
                return null;
            }
            Segment parent = block.parent;
            long[] parentWords = parent == null ? new long[2] : new long[] {parent.blockHigh, parent.blockLow};
            readLocked(block, MemorySegment.ofArray(value).asSlice(at, sizeBytes));
            return parentWords;
        } catch (RuntimeException e) {
            return null; // a block that cannot be read now is not written through; the local copy is untouched
        } finally {
            gate.exit();
        }
    }

    /** Which backend moves the bytes and why it was chosen. */
    public String description() {
        return memories.description();
    }

    /**
     * Closes the gate and waits for the operations inside, then frees all memory and deletes a disk
     * directory it created. Idempotent. The futures of the async operations done before it are completed
     * meanwhile: it waits for their completions at most {@code transferTimeout} after it began (a dependent
     * may block), and not at all when a dependent closes the cache.
     */
    public void close() {
        long deadline = System.nanoTime() + transferTimeout.toNanos();
        if (remote != null) {
            remote.close(deadline); // first: its writer may still read blocks demoted to DISK
        }
        if (!gate.close()) {
            return;
        }
        residencies.shutdown(deadline);
        chains.shutdown(deadline);
        streams.shutdown(deadline);
        table.clear();
        try {
            persisted.close(); // syncs what the policy still owes, before the extents are unmapped
            memories.close();
        } finally {
            deleteCreated(createdDiskDirectory, null);
        }
        listeners.deliver(); // what operations left before the gate closed
    }
}
