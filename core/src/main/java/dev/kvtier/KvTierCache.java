package dev.kvtier;

import dev.kvtier.exec.ExecutionBackend;
import dev.kvtier.exec.PageAllocation;
import dev.kvtier.exec.TransferExecutor;
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
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * A tiered KV cache: keeps each segment's bytes on GPU, CPU (pinned host) or DISK (mapped files),
 * moves them when asked or when room is needed, and hands back device memory with the segment's
 * token positions unchanged. It joins the {@link TieredStore} (what lives where, budgets, policy)
 * with the {@link TransferExecutor} (pages and copies); neither knows of the other.
 *
 * <h2>Promises</h2>
 * <ul>
 *   <li><b>Thread-safe.</b> Every method may be called from any thread. Operations on one key are
 *       serialized (a transfer of a key waits for the one in flight); operations on different keys
 *       run concurrently.</li>
 *   <li><b>Never a wrong byte.</b> Metadata ({@link #get}, {@link #stats}) changes with the bytes:
 *       a move that fails is rolled back, the segment stays whole and readable where it was, and
 *       the error says why ({@link TransferFailedException} with the CUDA or I/O cause). Bytes
 *       written to DISK carry a CRC32C checked when they come back ({@link SegmentCorruptedException}).
 *       (One last resort: if the tier a failed move came from has meanwhile been filled by others and
 *       no room can be made there again, the segment is removed and the exception says so; it is
 *       never left with metadata and bytes apart.)</li>
 *   <li><b>Ownership.</b> The cache owns every byte it allocated and frees it on remove and close.
 *       {@link ResidentSegment#pages()} from {@link #ensureResident} are valid only while the segment
 *       stays on that tier, which another thread making room may end at any time; to use device
 *       pages (launch kernels on them), {@link #pin} the segment and close the pin afterwards.
 *       Adopted device memory stays the caller's: referenced, never freed (see {@link #adopt}).</li>
 *   <li><b>Blocking calls return when the bytes are in place.</b> {@link #ensureResidentAsync}
 *       completes its future then; its dependent stages never run on a driver callback thread.</li>
 *   <li><b>Errors.</b> Bad arguments (null or blank key, null segment, tier or positions, negative
 *       positions, a destination too small) throw {@link IllegalArgumentException} naming the
 *       argument and changing nothing; an unknown key throws {@link SegmentNotFoundException}
 *       (except {@link #get} and {@link #remove}, which answer empty); no room throws
 *       {@link TierFullException}; any call after {@link #close()} throws {@link IllegalStateException}.</li>
 * </ul>
 *
 * <h2>Making room</h2>
 * {@link #put}, {@link #adopt} and {@link #ensureResident} make room on a full GPU or CPU tier by
 * demoting the policy's candidates down the tiers: GPU to CPU, CPU spilling to DISK when it is
 * full, GPU straight to DISK when CPU cannot take it. A segment being moved or made resident by
 * another call is never chosen. The victims chosen in one round are copied together (one
 * {@code cudaMemcpyBatchAsync} and one wait on the CUDA backend), so making room for a large
 * segment among many small ones does not pay a driver call and a round trip per victim. {@link #promote} and {@link #demote} do exactly the one move asked
 * and fail with {@link TierFullException} when the target tier has no room.
 */
public final class KvTierCache implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(KvTierCache.class.getName());
    /** Rounds of making room before a call gives up; between rounds it waits for other moves to finish. */
    private static final int ROOM_ROUNDS = 40;
    private static final long ROOM_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    /** One cached segment's physical side; its mutable fields are guarded by its {@code lock}. */
    private static final class Entry {
        final String key;
        final PositionRange positions;
        final long sizeBytes;
        final ReentrantLock lock = new ReentrantLock();
        PageAllocation placement;
        int diskCrc32c;
        /** False until the first bytes are in place, and again once removed or closed. */
        boolean live;
        /** Open {@link SegmentPin}s: while positive the bytes stay where they are (a removal keeps the placement). */
        int pins;

        Entry(String key, PositionRange positions, long sizeBytes) {
            this.key = key;
            this.positions = positions;
            this.sizeBytes = sizeBytes;
        }
    }

    private record Residency(String key, Tier tier) { }

    private final KvTierConfig config;
    private final TieredStore store;
    private final TransferExecutor executor;
    private final Path createdDiskDirectory;
    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Residency, CompletableFuture<ResidentSegment>> residencies = new ConcurrentHashMap<>();
    private final ExecutorService orchestrator;
    private final LongAdder transfers = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private final AtomicLongArray bytesMoved = new AtomicLongArray(Tier.values().length * Tier.values().length);

    private final ReentrantLock lifecycle = new ReentrantLock();
    private final Condition idle = lifecycle.newCondition();
    private int activeOperations;
    private volatile boolean closed;

    private KvTierCache(KvTierConfig config, TieredStore store, TransferExecutor executor, Path createdDiskDirectory) {
        this.config = config;
        this.store = store;
        this.executor = executor;
        this.createdDiskDirectory = createdDiskDirectory;
        AtomicInteger threads = new AtomicInteger();
        this.orchestrator = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "kvtier-resident-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Opens a cache: picks the backend ({@link Backend#AUTO}: CUDA when a device is usable, else
     * HOST) and logs one line saying which and why.
     *
     * @throws IllegalArgumentException if {@code config} is null
     * @throws IllegalStateException    if {@link Backend#CUDA} was asked for and CUDA is not usable (the reason says why)
     * @throws UncheckedIOException     if the disk directory cannot be created
     */
    public static KvTierCache open(KvTierConfig config) {
        return open(config, UnaryOperator.identity());
    }

    /** As {@link #open(KvTierConfig)}, with the backend wrapped by {@code decorate} (tests inject faults this way). */
    static KvTierCache open(KvTierConfig config, UnaryOperator<ExecutionBackend> decorate) {
        if (config == null) {
            throw new IllegalArgumentException("config must not be null");
        }
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
            throw new UncheckedIOException("cannot create the disk directory for " + config
                    + " (set KvTierConfig.builder().diskDirectory(...) to a writable place)", e);
        }
        ExecutionBackend backend = decorate.apply(BackendSelection.open(config, diskDirectory));
        Map<Tier, Long> chunkBudgets = new EnumMap<>(Tier.class);
        chunkBudgets.put(Tier.GPU, config.gpuBudgetBytes());
        chunkBudgets.put(Tier.CPU, config.cpuBudgetBytes());
        chunkBudgets.put(Tier.DISK, config.diskExtentBytes());
        TransferExecutor executor;
        try {
            executor = new TransferExecutor(backend, config.pageSizeBytes(), chunkBudgets, config.maxBytesInFlight());
        } catch (RuntimeException e) {
            backend.close();
            throw e;
        }
        TieredStore store = new TieredStore(config.gpuBudgetBytes(), config.cpuBudgetBytes(), config.policy());
        LOG.log(System.Logger.Level.INFO, "kvtier backend: " + executor.description());
        return new KvTierCache(config, store, executor, created);
    }

    // ---------------------------------------------------------------- operations

    /**
     * Caches a copy of {@code bytes} as segment {@code key} on {@code tier}, making room on a full
     * GPU or CPU tier first (see the class comment). The segment's size is {@code bytes.byteSize()};
     * {@code positions} travel with it unchanged. Returns when the bytes are in place; the caller's
     * segment is not referenced afterwards.
     *
     * @param bytes host memory (native or heap) holding the segment
     * @throws IllegalArgumentException  naming the argument if one is null, the key is blank, or
     *                                   the key is already cached (remove it first)
     * @throws TierFullException         if no room could be made
     * @throws TransferFailedException   if the bytes could not be copied in (nothing is cached then)
     */
    public void put(String key, PositionRange positions, MemorySegment bytes, Tier tier) {
        requireKey(key);
        requireNonNull(positions, "positions");
        requireNonNull(bytes, "bytes");
        requireNonNull(tier, "tier");
        enter();
        try {
            insert(key, positions, bytes.byteSize(), tier, entry -> {
                PageAllocation pages = allocate(key, tier, bytes.byteSize(), null);
                try {
                    copy(() -> executor.copyIn(bytes, pages), key, null, tier);
                } catch (RuntimeException e) {
                    executor.release(pages);
                    throw e;
                }
                if (tier == Tier.DISK) {
                    entry.diskCrc32c = executor.crc32c(pages);
                }
                return pages;
            });
        } finally {
            exit();
        }
    }

    /**
     * Caches device memory the runtime already holds as segment {@code key} on GPU, without a
     * copy, making room on GPU first. Its size counts against the GPU budget. The cache never
     * frees adopted memory: it stops referencing it when the segment is demoted (its bytes are
     * copied down first) or removed, and the caller must keep it allocated until then. A promoted
     * segment comes back in the cache's own device pages, not in the adopted memory.
     *
     * @param deviceSegment native memory: a device pointer from the CUDA backend, or native host memory on the HOST backend
     * @throws IllegalArgumentException naming the argument if one is null, the key is blank or
     *                                  cached already, or {@code deviceSegment} is a heap segment
     * @throws TierFullException        if no room could be made on GPU
     */
    public void adopt(String key, PositionRange positions, MemorySegment deviceSegment) {
        requireKey(key);
        requireNonNull(positions, "positions");
        requireNonNull(deviceSegment, "deviceSegment");
        if (!deviceSegment.isNative()) {
            throw new IllegalArgumentException("deviceSegment must be native (device) memory, was a heap segment: " + deviceSegment);
        }
        enter();
        try {
            insert(key, positions, deviceSegment.byteSize(), Tier.GPU, entry -> executor.external(Tier.GPU, deviceSegment));
        } finally {
            exit();
        }
    }

    private interface Filler {
        PageAllocation fill(Entry entry);
    }

    /** Registers a new key (making room), fills it, and publishes it; undoes everything on failure. */
    private void insert(String key, PositionRange positions, long sizeBytes, Tier tier, Filler filler) {
        SegmentMeta meta = SegmentMeta.of(key, positions, sizeBytes);
        Entry entry = new Entry(key, positions, sizeBytes);
        entry.lock.lock();
        try {
            if (entries.putIfAbsent(key, entry) != null) {
                throw new IllegalArgumentException("key \"" + key + "\" is already cached; remove it first");
            }
            boolean registered = false;
            try {
                registerMakingRoom(meta, tier);
                registered = true;
                entry.placement = filler.fill(entry);
                entry.live = true;
            } catch (RuntimeException | Error e) {
                if (registered) {
                    store.remove(key);
                }
                entries.remove(key, entry);
                throw e;
            }
        } finally {
            entry.lock.unlock();
        }
    }

    /**
     * Moves segment {@code key} down to the slower tier {@code to}, copying its bytes; returns when
     * they are in place. Does nothing if the segment is already on {@code to}.
     *
     * @throws IllegalArgumentException   if {@code to} is faster than the segment's tier
     * @throws SegmentNotFoundException   if {@code key} is not cached
     * @throws TierFullException          if {@code to} is CPU and has no room
     * @throws TransferFailedException    if the copy failed (the segment stays where it was)
     * @throws SegmentCorruptedException  never: demotion only reads GPU or CPU memory
     */
    public void demote(String key, Tier to) {
        move(key, to, false);
    }

    /**
     * Moves segment {@code key} up to the faster tier {@code to}, copying its bytes; returns when
     * they are in place. Does nothing if it is already on {@code to}. Makes no room: use
     * {@link #ensureResident} for that.
     *
     * @throws IllegalArgumentException   if {@code to} is slower than the segment's tier
     * @throws SegmentNotFoundException   if {@code key} is not cached
     * @throws TierFullException          if {@code to} has no room
     * @throws TransferFailedException    if the copy failed (the segment stays where it was)
     * @throws SegmentCorruptedException  if it came from DISK and its bytes there are corrupted
     */
    public void promote(String key, Tier to) {
        move(key, to, true);
    }

    private void move(String key, Tier to, boolean promotion) {
        requireKey(key);
        requireNonNull(to, "to");
        enter();
        try {
            Entry entry = lockLive(key);
            try {
                Tier from = currentTier(entry);
                if (from == to) {
                    return;
                }
                if (promotion != to.isFasterThan(from)) {
                    throw new IllegalArgumentException("to must be " + (promotion ? "faster" : "slower") + " than "
                            + from + " where segment \"" + key + "\" is, was " + to);
                }
                requireUnpinned(entry, (promotion ? "promote" : "demote") + " it to " + to);
                Optional<TierTransfer> transfer = promotion ? store.promote(key, to) : store.demote(key, to);
                if (transfer.isEmpty()) {
                    throw new TierFullException(key, to, entry.sizeBytes, free(to), "demote or remove segments there first");
                }
                moveBytes(entry, transfer.get());
            } finally {
                entry.lock.unlock();
            }
        } finally {
            exit();
        }
    }

    /**
     * Makes segment {@code key} resident on {@code tier} or a faster one: if it is slower, makes
     * room (demoting the policy's candidates, see the class comment) and promotes it; if it is
     * already there or faster, only counts the access. Returns when the bytes are in place.
     * Concurrent calls for the same key and tier share one transfer.
     *
     * @throws IllegalArgumentException  if an argument is null or the key blank
     * @throws SegmentNotFoundException  if {@code key} is not cached
     * @throws TierFullException         if no room could be made (the segment is larger than the
     *                                   budget, or every candidate is in use)
     * @throws TransferFailedException   if the copy failed (the segment stays where it was)
     * @throws SegmentCorruptedException if it came from DISK and its bytes there are corrupted
     */
    public ResidentSegment ensureResident(String key, Tier tier) {
        ResidencyClaim claim = claimResidency(key, tier);
        // No call for this key and tier was in flight: do the work on this thread (no hand-off).
        return join(claim.owner() ? runResidency(claim.residency(), claim.future()) : claim.future());
    }

    /**
     * {@link #ensureResident} without blocking: the future completes when the bytes are in place,
     * or exceptionally with the exception {@code ensureResident} would throw. Calls for the same
     * key and tier while one is in flight share it. Completing or cancelling the returned future
     * does not affect the transfer. The work runs on a kvtier thread, which also runs dependent
     * stages added before completion.
     *
     * @throws IllegalArgumentException if an argument is null or the key blank
     * @throws IllegalStateException    after {@link #close()}
     */
    public CompletableFuture<ResidentSegment> ensureResidentAsync(String key, Tier tier) {
        ResidencyClaim claim = claimResidency(key, tier);
        if (claim.owner()) {
            try {
                orchestrator.execute(() -> runResidency(claim.residency(), claim.future()));
            } catch (RejectedExecutionException e) {
                residencies.remove(claim.residency(), claim.future());
                exit();
                throw new IllegalStateException("the cache is closed", e);
            }
        }
        return claim.future().copy();
    }

    /**
     * {@link #ensureResident}, then pins the segment where it is (on {@code tier} or a faster one):
     * until the returned pin is closed its pages keep its bytes -- the cache does not demote it to
     * make room, refuses to move it ({@link SegmentPinnedException}), and frees its pages on
     * {@link #remove} only when the last pin closes. Reading ({@link #read}) is unaffected. Pins
     * nest: each must be closed. A tier full of pinned segments makes room nowhere, so hold pins
     * only as long as the bytes are in use.
     *
     * @throws IllegalArgumentException  if an argument is null or the key blank
     * @throws SegmentNotFoundException  if {@code key} is not cached
     * @throws SegmentPinnedException    if it is pinned on a slower tier than {@code tier}
     * @throws TierFullException         if no room could be made, or the segment kept being demoted
     *                                   by other calls before it could be pinned
     * @throws TransferFailedException   if the copy failed (the segment stays where it was)
     * @throws SegmentCorruptedException if it came from DISK and its bytes there are corrupted
     * @throws IllegalStateException     after {@link #close()}
     */
    public SegmentPin pin(String key, Tier tier) {
        for (int round = 0; round < ROOM_ROUNDS; round++) {
            ensureResident(key, tier);
            enter();
            try {
                Entry entry = lockLive(key);
                try {
                    Tier current = currentTier(entry);
                    // Another call may have demoted it between the two steps; then make it resident again.
                    if (!tier.isFasterThan(current)) {
                        entry.pins++;
                        return new SegmentPin(resident(entry, current), () -> unpin(entry));
                    }
                } finally {
                    entry.lock.unlock();
                }
            } finally {
                exit();
            }
        }
        Entry entry = entries.get(key);
        throw new TierFullException(key, tier, entry == null ? 0 : entry.sizeBytes, free(tier),
                "other calls demoted it " + ROOM_ROUNDS + " times before it could be pinned; retry");
    }

    /** A pin closed: the last one frees the pages of a segment removed meanwhile. Nothing after close. */
    private void unpin(Entry entry) {
        lifecycle.lock();
        try {
            if (closed) {
                return; // close() freed everything
            }
            activeOperations++;
        } finally {
            lifecycle.unlock();
        }
        try {
            entry.lock.lock();
            try {
                if (--entry.pins == 0 && !entry.live && entry.placement != null) {
                    executor.release(entry.placement);
                    entry.placement = null;
                }
            } finally {
                entry.lock.unlock();
            }
        } finally {
            exit();
        }
    }

    private static void requireUnpinned(Entry entry, String action) {
        if (entry.pins > 0) {
            throw new SegmentPinnedException(entry.key, entry.pins, action);
        }
    }

    /** A call's part in making a segment resident: it does the work ({@code owner}) or shares the future of the call that does. */
    private record ResidencyClaim(Residency residency, CompletableFuture<ResidentSegment> future, boolean owner) { }

    /**
     * Checks the arguments and enters; then publishes a new future for the key and tier, or takes the
     * one in flight and exits again (only the owner's work keeps the cache busy).
     */
    private ResidencyClaim claimResidency(String key, Tier tier) {
        requireKey(key);
        requireNonNull(tier, "tier");
        enter();
        Residency residency = new Residency(key, tier);
        CompletableFuture<ResidentSegment> mine = new CompletableFuture<>();
        CompletableFuture<ResidentSegment> shared = residencies.putIfAbsent(residency, mine);
        if (shared != null) {
            exit();
            return new ResidencyClaim(residency, shared, false);
        }
        return new ResidencyClaim(residency, mine, true);
    }

    /** Makes the segment resident, then unpublishes and completes the shared future; balances the caller's {@link #enter()}. */
    private CompletableFuture<ResidentSegment> runResidency(Residency residency, CompletableFuture<ResidentSegment> shared) {
        ResidentSegment result = null;
        Throwable failure = null;
        try {
            result = makeResident(residency.key(), residency.tier());
        } catch (Throwable t) {
            failure = t;
        }
        residencies.remove(residency, shared);
        exit();
        if (failure == null) {
            shared.complete(result);
        } else {
            shared.completeExceptionally(failure);
        }
        return shared;
    }

    private static ResidentSegment join(CompletableFuture<ResidentSegment> future) {
        try {
            return future.join();
        } catch (CompletionException e) {
            throw rethrow(e.getCause());
        }
    }

    private ResidentSegment makeResident(String key, Tier tier) {
        Entry entry = lockLive(key);
        try {
            Tier current = currentTier(entry);
            if (!tier.isFasterThan(current)) {
                store.touch(key);
                return resident(entry, current);
            }
            requireUnpinned(entry, "make it resident on " + tier + " (it is pinned on " + current + ")");
            TierTransfer transfer = makingRoomUntil(key, tier, entry.sizeBytes, () -> store.promote(key, tier).orElse(null));
            moveBytes(entry, transfer);
            return resident(entry, tier);
        } finally {
            entry.lock.unlock();
        }
    }

    /**
     * Copies segment {@code key}'s bytes into the start of {@code dst} (host memory, native or
     * heap), wherever the segment is; it does not move the segment or count an access.
     *
     * @throws IllegalArgumentException  if {@code dst} is null, read-only or smaller than the segment
     *                                   (naming both sizes; nothing is written)
     * @throws SegmentNotFoundException  if {@code key} is not cached
     * @throws SegmentCorruptedException if the segment is on DISK and its bytes there are corrupted (nothing is written)
     * @throws TransferFailedException   if the copy failed
     */
    public void read(String key, MemorySegment dst) {
        requireKey(key);
        requireNonNull(dst, "dst");
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("dst must be writable, was read-only: " + dst);
        }
        enter();
        try {
            Entry entry = lockLive(key);
            try {
                if (dst.byteSize() < entry.sizeBytes) {
                    throw new IllegalArgumentException("dst holds " + dst.byteSize() + " bytes but segment \"" + key
                            + "\" has " + entry.sizeBytes);
                }
                Tier tier = currentTier(entry);
                if (tier == Tier.DISK) {
                    verifyDiskChecksum(entry);
                }
                PageAllocation placement = entry.placement;
                copy(() -> executor.copyOut(placement, dst), key, tier, null);
            } finally {
                entry.lock.unlock();
            }
        } finally {
            exit();
        }
    }

    /**
     * Removes segment {@code key} and frees its memory (adopted device memory is only forgotten).
     * Waits for a transfer of the key in flight.
     *
     * @return its metadata as it was, or empty if it was not cached
     * @throws IllegalArgumentException if {@code key} is null or blank
     */
    public Optional<SegmentMeta> remove(String key) {
        return ifCached(key, this::drop);
    }

    /**
     * The segment's current metadata, or empty if it is not cached. Waits for a transfer of the key
     * in flight, so the tier reported is the one holding the bytes.
     *
     * @throws IllegalArgumentException if {@code key} is null or blank
     */
    public Optional<SegmentMeta> get(String key) {
        return ifCached(key, entry -> store.get(entry.key));
    }

    /** Runs {@code action} on {@code key}'s entry, locked and live; empty if {@code key} is not cached. */
    private Optional<SegmentMeta> ifCached(String key, Function<Entry, Optional<SegmentMeta>> action) {
        requireKey(key);
        enter();
        try {
            Entry entry = lockLiveOrNull(key);
            if (entry == null) {
                return Optional.empty();
            }
            try {
                return action.apply(entry);
            } finally {
                entry.lock.unlock();
            }
        } finally {
            exit();
        }
    }

    /** A snapshot of usage per tier, transfers, failures and bytes moved per tier pair. */
    public CacheStats stats() {
        enter();
        try {
            int tiers = Tier.values().length;
            long[] moved = new long[tiers * tiers];
            for (int i = 0; i < moved.length; i++) {
                moved[i] = bytesMoved.get(i);
            }
            long[] allocated = new long[tiers];
            for (Tier tier : Tier.values()) {
                allocated[tier.ordinal()] = executor.bytesInUse(tier);
            }
            return new CacheStats(store.gpuUsed(), store.cpuUsed(), store.diskUsed(), transfers.sum(), failures.sum(),
                    moved, allocated);
        } finally {
            exit();
        }
    }

    /** Which backend moves the bytes and why it was chosen, e.g. {@code "host (no GPU: ...)"}. */
    public String backendDescription() {
        return executor.description();
    }

    /** The configuration this cache was opened with. */
    public KvTierConfig config() {
        return config;
    }

    /**
     * Waits for every operation in flight (transfers finish, queued {@link #ensureResidentAsync}
     * calls run), then frees all memory (adopted memory is only forgotten) and deletes the DISK
     * extents. Idempotent; every other call afterwards throws {@link IllegalStateException}.
     */
    @Override
    public void close() {
        lifecycle.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            while (activeOperations > 0) {
                idle.awaitUninterruptibly();
            }
        } finally {
            lifecycle.unlock();
        }
        orchestrator.shutdown();
        for (Entry entry : entries.values()) {
            entry.lock.lock();
            try {
                entry.live = false;
                entry.placement = null;
            } finally {
                entry.lock.unlock();
            }
        }
        entries.clear();
        try {
            executor.close();
        } finally {
            if (createdDiskDirectory != null) {
                try {
                    Files.deleteIfExists(createdDiskDirectory);
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.WARNING, "could not delete " + createdDiskDirectory + ": " + e);
                }
            }
        }
    }

    // ---------------------------------------------------------------- moving bytes

    /** Carries out a booked transfer for a locked entry; on any failure rolls the store back and rethrows. */
    private void moveBytes(Entry entry, TierTransfer transfer) {
        PageAllocation destination = prepareMove(entry, transfer);
        try {
            copy(() -> executor.transferAndWait(entry.placement, destination), entry.key, transfer.from(), transfer.to());
            checksumArrival(entry, transfer, destination);
        } catch (RuntimeException | Error e) {
            throw undoMove(entry, transfer, destination, e);
        }
        commitMove(entry, transfer, destination);
    }

    /**
     * First half of a booked transfer for a locked entry: checks the bytes it leaves DISK with and
     * allocates their destination. On failure the store is rolled back and the error rethrown.
     */
    private PageAllocation prepareMove(Entry entry, TierTransfer transfer) {
        try {
            if (transfer.from() == Tier.DISK) {
                verifyDiskChecksum(entry);
            }
            return allocate(entry.key, transfer.to(), entry.sizeBytes, transfer.from());
        } catch (RuntimeException | Error e) {
            throw undoMove(entry, transfer, null, e);
        }
    }

    /** Bytes that arrived on DISK get the checksum they are verified against when they leave. */
    private void checksumArrival(Entry entry, TierTransfer transfer, PageAllocation destination) {
        if (transfer.to() == Tier.DISK) {
            entry.diskCrc32c = executor.crc32c(destination);
        }
    }

    /** Last half, once the bytes are in {@code destination}: the entry now lives there. */
    private void commitMove(Entry entry, TierTransfer transfer, PageAllocation destination) {
        executor.release(entry.placement);
        entry.placement = destination;
        transfers.increment();
        bytesMoved.addAndGet(transfer.from().ordinal() * Tier.values().length + transfer.to().ordinal(), entry.sizeBytes);
    }

    /**
     * A booked transfer failed: frees {@code destination} (may be null), puts the segment back where
     * it was in the store (or, when that tier has no room left, removes it), and returns what to throw.
     */
    private RuntimeException undoMove(Entry entry, TierTransfer transfer, PageAllocation destination, Throwable e) {
        if (destination != null) {
            executor.release(destination);
        }
        if (!rollBack(entry, transfer)) {
            drop(entry);
            LOG.log(System.Logger.Level.ERROR, "segment \"" + entry.key + "\" removed: " + transfer
                    + " failed and no room came free on " + transfer.from() + " to roll it back: " + e);
            return new TransferFailedException(entry.key, transfer.from(), transfer.to(), "moving segment \""
                    + entry.key + "\" failed (" + e.getMessage() + ") and " + transfer.from()
                    + " had no room left to take it back, so it was removed", e);
        }
        return rethrow(e);
    }

    /**
     * Puts a locked segment back on the tier its failed move came from. Others may have taken that
     * room meanwhile (the move freed it); then make room there again, as for any arrival.
     */
    private boolean rollBack(Entry entry, TierTransfer transfer) {
        for (int round = 0; round < ROOM_ROUNDS; round++) {
            if (store.rollback(transfer)) {
                return true;
            }
            if (!makeRoom(transfer.from(), entry.sizeBytes, entry.key)) {
                backOff(round);
            }
        }
        return false;
    }

    /**
     * Forgets a locked, live segment entirely and frees its memory (removed, or its bytes could not be
     * kept consistent with the store).
     *
     * @return its metadata as the store had it
     */
    private Optional<SegmentMeta> drop(Entry entry) {
        Optional<SegmentMeta> removed = store.remove(entry.key);
        if (entry.pins == 0) {
            executor.release(entry.placement);
            entry.placement = null;
        } // else the last pin to close frees it (see unpin)
        entry.live = false;
        entries.remove(entry.key, entry);
        return removed;
    }

    private PageAllocation allocate(String key, Tier tier, long bytes, Tier from) {
        try {
            return executor.allocate(tier, bytes);
        } catch (IOException e) {
            failures.increment();
            throw new TransferFailedException(key, from, tier, "cannot allocate " + bytes + " bytes on " + tier
                    + " for segment \"" + key + "\": " + e.getMessage(), e);
        }
    }

    /**
     * Runs a blocking copy; a failure becomes a {@link TransferFailedException} naming the key and
     * tiers, with the CUDA or I/O error as its cause.
     */
    private void copy(Runnable blockingCopy, String key, Tier from, Tier to) {
        try {
            blockingCopy.run();
        } catch (RuntimeException | InternalError e) {
            failures.increment();
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            throw new TransferFailedException(key, from, to, "copying segment \"" + key + "\" "
                    + (from == null ? "in" : "from " + from) + (to == null ? " out" : " to " + to) + " failed: " + cause, cause);
        }
    }

    private void verifyDiskChecksum(Entry entry) {
        int actual = executor.crc32c(entry.placement);
        if (actual != entry.diskCrc32c) {
            failures.increment();
            throw new SegmentCorruptedException(entry.key, entry.diskCrc32c, actual);
        }
    }

    // ---------------------------------------------------------------- making room

    private void registerMakingRoom(SegmentMeta meta, Tier tier) {
        makingRoomUntil(meta.key(), tier, meta.sizeBytes(), () -> {
            if (store.register(meta, tier)) {
                return Boolean.TRUE;
            }
            if (tier == Tier.DISK) {
                throw new IllegalStateException("the store refused segment \"" + meta.key() + "\" on DISK");
            }
            return null;
        });
    }

    /**
     * Runs {@code attempt} until it answers non-null, making room on {@code tier} for segment {@code key}'s
     * {@code bytes} after each miss and backing off when none came free.
     *
     * @throws TierFullException if the segment can never fit, or after {@link #ROOM_ROUNDS} misses
     */
    private <T> T makingRoomUntil(String key, Tier tier, long bytes, Supplier<T> attempt) {
        for (int round = 0; round < ROOM_ROUNDS; round++) {
            T done = attempt.get();
            if (done != null) {
                return done;
            }
            requireFits(key, tier, bytes);
            if (!makeRoom(tier, bytes, key)) {
                backOff(round);
            }
        }
        throw new TierFullException(key, tier, bytes, free(tier), "every segment there is being moved, made resident or pinned; retry");
    }

    /**
     * Demotes the policy's candidates off {@code tier} until {@code needed} bytes are free. Skips
     * {@code excludeKey} and every segment whose lock is held (being moved or made resident). The
     * victims of one round are booked first and their bytes moved together
     * ({@link TransferExecutor#transferAll}: one {@code cudaMemcpyBatchAsync} and one wait on the CUDA
     * backend instead of one call and one wait per victim, which is what makes room for a large
     * segment among many small ones cheap); their locks are held until their bytes are in place.
     *
     * @return whether {@code needed} bytes are free now
     */
    private boolean makeRoom(Tier tier, long needed, String excludeKey) {
        long free = free(tier);
        if (free >= needed) {
            return true;
        }
        Set<String> tried = new HashSet<>();
        long skipped = 0;
        while (true) {
            List<String> candidates = store.candidatesForDemotion(tier, needed - free + skipped);
            boolean fresh = false;
            List<Entry> locked = new ArrayList<>();
            List<BookedMove> booked = new ArrayList<>();
            try {
                try {
                    for (String candidate : candidates) {
                        if (!tried.add(candidate)) {
                            continue;
                        }
                        fresh = true;
                        Entry victim = entries.get(candidate);
                        // A lock this thread holds (reentrantly) marks a segment this very call is moving.
                        if (candidate.equals(excludeKey) || victim == null || victim.lock.isHeldByCurrentThread()
                                || !victim.lock.tryLock()) {
                            skipped += victim == null ? 0 : victim.sizeBytes;
                            continue;
                        }
                        locked.add(victim);
                        BookedMove move = victim.live && victim.pins == 0 && currentTier(victim) == tier
                                ? bookDemotion(victim, tier) : null;
                        if (move == null) {
                            skipped += victim.sizeBytes;
                            continue;
                        }
                        booked.add(move);
                        if (free(tier) >= needed) { // the store counts booked moves as gone
                            break;
                        }
                    }
                } catch (RuntimeException | Error e) {
                    RuntimeException reason = e instanceof RuntimeException r ? r : new CompletionException(e);
                    for (BookedMove move : booked) {
                        undoMove(move.entry, move.transfer, move.destination, reason);
                    }
                    throw e;
                }
                skipped += moveAll(booked, tier);
            } finally {
                for (Entry victim : locked) {
                    victim.lock.unlock();
                }
            }
            free = free(tier);
            if (free >= needed) {
                return true;
            }
            if (!fresh) {
                return false;
            }
        }
    }

    /** A demotion booked in the store, its destination allocated, its bytes not yet moved. */
    private record BookedMove(Entry entry, TierTransfer transfer, PageAllocation destination) { }

    /**
     * Books a locked victim's move one step down -- GPU to CPU (spilling CPU to DISK first if needed,
     * else to DISK), CPU to DISK -- and allocates its destination.
     *
     * @return the booked move, or null when it cannot move (nothing changed)
     */
    private BookedMove bookDemotion(Entry victim, Tier tier) {
        Optional<TierTransfer> transfer;
        if (tier == Tier.GPU) {
            transfer = store.demote(victim.key, Tier.CPU);
            if (transfer.isEmpty() && victim.sizeBytes <= store.cpuBudget() && makeRoom(Tier.CPU, victim.sizeBytes, victim.key)) {
                transfer = store.demote(victim.key, Tier.CPU);
            }
            if (transfer.isEmpty()) {
                transfer = store.demote(victim.key, Tier.DISK);
            }
        } else {
            transfer = store.demote(victim.key, Tier.DISK);
        }
        if (transfer.isEmpty()) {
            return null;
        }
        try {
            return new BookedMove(victim, transfer.get(), prepareMove(victim, transfer.get()));
        } catch (KvTierException e) {
            LOG.log(System.Logger.Level.WARNING, "could not demote \"" + victim.key + "\" to make room on " + tier + ": " + e.getMessage());
            return null;
        }
    }

    /**
     * Moves the bytes of booked demotions together and commits each; if the copy fails, every one is
     * rolled back (or, with no room left to roll back into, removed) and logged.
     *
     * @return the bytes of the victims that did not move
     */
    private long moveAll(List<BookedMove> moves, Tier tier) {
        if (moves.isEmpty()) {
            return 0;
        }
        List<PageAllocation> sources = new ArrayList<>(moves.size());
        List<PageAllocation> destinations = new ArrayList<>(moves.size());
        for (BookedMove move : moves) {
            sources.add(move.entry.placement);
            destinations.add(move.destination);
        }
        Throwable copyFailure = null;
        try {
            executor.transferAll(sources, destinations).join();
        } catch (RuntimeException | InternalError e) {
            // InternalError: a fault while touching a file mapping (the file shrank or the disk failed).
            failures.increment();
            copyFailure = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        }
        long notMoved = 0;
        for (BookedMove move : moves) {
            Entry victim = move.entry;
            TierTransfer transfer = move.transfer;
            Throwable failure = copyFailure;
            if (failure == null) {
                try {
                    checksumArrival(victim, transfer, move.destination);
                } catch (RuntimeException | InternalError e) {
                    failures.increment();
                    failure = e;
                }
            }
            if (failure == null) {
                commitMove(victim, transfer, move.destination);
                continue;
            }
            notMoved += victim.sizeBytes;
            TransferFailedException error = new TransferFailedException(victim.key, transfer.from(), transfer.to(),
                    "copying segment \"" + victim.key + "\" from " + transfer.from() + " to " + transfer.to()
                            + " failed: " + failure, failure);
            RuntimeException outcome = undoMove(victim, transfer, move.destination, error);
            LOG.log(System.Logger.Level.WARNING, "could not demote \"" + victim.key + "\" to make room on " + tier
                    + ": " + outcome.getMessage());
        }
        return notMoved;
    }

    private void requireFits(String key, Tier tier, long bytes) {
        long budget = budget(tier);
        if (bytes > budget) {
            throw new TierFullException(key, tier, bytes, free(tier), "the segment is larger than the " + tier
                    + " budget of " + budget + " bytes");
        }
    }

    private static void backOff(int round) {
        LockSupport.parkNanos(ROOM_BACKOFF_NANOS * Math.min(round + 1, 10));
    }

    private long budget(Tier tier) {
        return switch (tier) {
            case GPU -> store.gpuBudget();
            case CPU -> store.cpuBudget();
            case DISK -> Long.MAX_VALUE;
        };
    }

    private long free(Tier tier) {
        return switch (tier) {
            case GPU -> store.gpuFree();
            case CPU -> store.cpuFree();
            case DISK -> Long.MAX_VALUE;
        };
    }

    // ---------------------------------------------------------------- helpers

    /** The entry for {@code key}, locked and live, or {@link SegmentNotFoundException}. */
    private Entry lockLive(String key) {
        Entry entry = lockLiveOrNull(key);
        if (entry == null) {
            throw new SegmentNotFoundException(key);
        }
        return entry;
    }

    /** The entry for {@code key}, locked and live, or null (nothing locked) if it is not cached. */
    private Entry lockLiveOrNull(String key) {
        Entry entry = entries.get(key);
        if (entry == null) {
            return null;
        }
        entry.lock.lock();
        if (!entry.live) {
            entry.lock.unlock();
            return null;
        }
        return entry;
    }

    /** The tier of a locked, live entry: the store's, which under the lock matches the bytes. */
    private Tier currentTier(Entry entry) {
        return store.get(entry.key).orElseThrow(() -> new SegmentNotFoundException(entry.key)).tier();
    }

    private static ResidentSegment resident(Entry entry, Tier tier) {
        return new ResidentSegment(entry.key, entry.positions, tier, entry.sizeBytes, entry.placement.runs());
    }

    private void enter() {
        lifecycle.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the cache is closed");
            }
            activeOperations++;
        } finally {
            lifecycle.unlock();
        }
    }

    private void exit() {
        lifecycle.lock();
        try {
            if (--activeOperations == 0) {
                idle.signalAll();
            }
        } finally {
            lifecycle.unlock();
        }
    }

    private static void requireKey(String key) {
        if (key == null) {
            throw new IllegalArgumentException("key must not be null");
        }
        if (key.isBlank()) {
            throw new IllegalArgumentException("key must not be blank, was \"" + key + "\"");
        }
    }

    private static void requireNonNull(Object value, String name) {
        if (value == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new CompletionException(t);
    }
}
