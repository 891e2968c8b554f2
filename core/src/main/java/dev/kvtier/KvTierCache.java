package dev.kvtier;

import dev.kvtier.exec.ExecutionBackend;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;
import dev.kvtier.tiering.EngineViews;
import dev.kvtier.tiering.OperationGate;
import dev.kvtier.tiering.TieringEngine;

import java.lang.foreign.MemorySegment;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * A tiered KV cache: keeps each segment's bytes on GPU, CPU (pinned host) or DISK (mapped files),
 * moves them when asked or when room is needed, and hands back device memory with the segment's
 * token positions unchanged. This class is the door: it checks arguments, enters the cache's
 * lifecycle gate and delegates to the package-private tiering layer, which joins the
 * {@link TieredStore} (what lives where, budgets, policy) with the physical layer (pages and
 * copies); neither knows of the other.
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
 *   <li><b>Errors.</b> Bad arguments (null or blank key, a key longer than {@link #MAX_KEY_LENGTH}, null
 *       segment, tier or positions, negative positions, a destination too small) throw
 *       {@link IllegalArgumentException} naming the argument and changing nothing (a null argument too: see the
 *       package comment); every failure of kvtier's own is a {@link KvTierException}: an unknown key throws
 *       {@link SegmentNotFoundException} (except {@link #get} and {@link #remove}, which answer empty);
 *       no room throws {@link TierFullException} (with the failure that kept room from being made as its
 *       cause, such as a full disk); an open that fails throws {@link CacheOpenException}; any call after
 *       {@link #close()} throws {@link IllegalStateException}.</li>
 *   <li><b>Bounded.</b> No call waits longer than {@link KvTierConfig#transferTimeout()} for one copy:
 *       a copy that has not completed by then fails the call with {@link TransferFailedException}, the
 *       segment stays readable where it was, and memory the late copy may still write is neither
 *       reused nor freed until it has drained. {@link #close()} waits at most that long for copies in
 *       flight. A completion never depends on a driver callback alone.</li>
 *   <li><b>Interrupts.</b> Waits for copies are not abandoned on interrupt (memory could otherwise be
 *       freed under a running copy); the interrupt flag is kept. Creating a DISK extent on an
 *       interrupted thread fails the call with {@link TransferFailedException}, the channel's
 *       {@code ClosedByInterruptException} in its cause chain, the flag still set.</li>
 *   <li><b>Budgets hold physically.</b> The GPU and CPU tiers never hold more memory than their
 *       budgets (chunks are sized to divide them), also while victims booked off a tier still hold
 *       their pages: a call that finds the pages taken makes more room, or, when they belong to moves in
 *       flight, fails with {@link TierFullException} ("retry") instead of growing the tier.</li>
 *   <li><b>One owner per disk directory.</b> An open cache holds a lock file in its disk directory; a
 *       second open of the same directory, in this process or another, fails with
 *       {@link DirectoryInUseException} naming the holder.
 *       Extents a dead owner left there are deleted at open (kept and recovered by a persistent cache).</li>
 *   <li><b>Restarts</b> ({@link KvTierConfig#persistence()}, opt-in): the DISK tier outlives the process
 *       under a user-chosen namespace. Segments on DISK at a clean close or a crash ({@code kill -9})
 *       are registered again on DISK by the next open of the directory and served after their CRC32C is
 *       verified; nothing half-written is ever served; {@link #recovery()} says what was found. GPU and
 *       CPU stay volatile: what was there is gone. See {@link DiskPersistence}.</li>
 *   <li><b>After a device error that does not clear</b> (CUDA's sticky errors, such as
 *       {@code cudaErrorIllegalAddress}): the backend is unusable (logged once); every call that needs
 *       the GPU fails fast with a {@link TransferFailedException} naming the error (as the cause of a
 *       {@link TierFullException} where it was making room on GPU); segments on GPU are lost, those on
 *       CPU and DISK stay readable (and movable between the two); {@link #close()} still returns.
 *       Reopen in a new process, or after a device reset, to use the GPU again.</li>
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
 *
 * <p>The DISK tier is unbounded by default (until its file system is full). With a budget
 * ({@link KvTierConfig#diskBudgetBytes()}) a full DISK tier makes room the same way, for a put there or a
 * victim spilled there, except that its victims leave the cache: they are removed (listeners hear
 * {@link CacheChangeListener#segmentRemoved}), counted in {@link CacheStats#evictions()}, in the policy's order, a
 * prefix chain from its tail (a block with a cached child is never evicted).
 */
public final class KvTierCache implements AutoCloseable {
    /**
     * Longest key a segment may have, in UTF-16 code units ({@code String.length()}): 65,536. A persistent
     * DISK tier records each key in its journal, whose records hold at most 1 MiB; this limit keeps a key to an
     * eighth of that, leaving the rest for the page runs of a large, fragmented segment. Every cache applies
     * it, persistent or not, so a key accepted today is accepted when persistence is turned on.
     */
    public static final int MAX_KEY_LENGTH = 1 << 16;

    private final KvTierConfig config;
    private final TieringEngine engine;
    private final OperationGate gate;

    private KvTierCache(KvTierConfig config, TieringEngine engine) {
        this.config = config;
        this.engine = engine;
        this.gate = engine.gate();
    }

    /**
     * Opens a cache: picks the backend ({@link Backend#AUTO}: CUDA when a device is usable, else
     * HOST) and logs one line saying which and why.
     *
     * @param config what to open: budgets, backend, disk directory and policy
     * @return the open cache, which the caller owns and closes
     * @throws IllegalArgumentException if {@code config} is null
     * @throws CacheOpenException       if {@link Backend#CUDA} was asked for and CUDA is not usable, or the disk
     *                                  directory cannot be created, locked or read (the message says why)
     * @throws DirectoryInUseException  if another cache holds the disk directory (the message names the holder)
     */
    public static KvTierCache open(KvTierConfig config) {
        return open(config, UnaryOperator.identity());
    }

    /** As {@link #open(KvTierConfig)}, with the backend wrapped by {@code decorate} (tests inject faults this way). */
    static KvTierCache open(KvTierConfig config, UnaryOperator<ExecutionBackend> decorate) {
        requireNonNull(config, "config");
        return new KvTierCache(config, TieringEngine.open(config, decorate));
    }

    // ---------------------------------------------------------------- operations

    /**
     * Caches a copy of {@code bytes} as segment {@code key} on {@code tier}, making room on a full
     * GPU or CPU tier first (see the class comment). The segment's size is {@code bytes.byteSize()};
     * {@code positions} travel with it unchanged. Returns when the bytes are in place; the caller's
     * segment is not referenced afterwards.
     *
     * @param key       the segment's key, not blank, at most {@link #MAX_KEY_LENGTH} {@code char}s
     * @param positions the token positions the segment covers, kept with it unchanged
     * @param bytes     host memory (native or heap) holding the segment. It may be empty, on purpose: a 0-byte
     *                  segment (say, a sequence's marker with empty positions) is cached like any other, counts 0
     *                  bytes against the budgets, and is moved, made resident, read and removed as the others are
     * @param tier      the tier to put it on
     * @throws IllegalArgumentException  naming the argument if one is null, the key is blank or longer than
     *                                   {@link #MAX_KEY_LENGTH}, or
     *                                   the key is already cached (remove it first)
     * @throws TierFullException         if no room could be made
     * @throws TransferFailedException   if the bytes could not be copied in (nothing is cached then)
     */
    public void put(String key, PositionRange positions, MemorySegment bytes, Tier tier) {
        requireKey(key);
        requireNonNull(positions, "positions");
        requireNonNull(bytes, "bytes");
        requireNonNull(tier, "tier");
        entered(() -> engine.put(key, positions, bytes, tier));
    }

    /**
     * Caches device memory the runtime already holds as segment {@code key} on GPU, without a
     * copy, making room on GPU first. Its size counts against the GPU budget. The cache never
     * frees adopted memory: it stops referencing it when the segment is demoted (its bytes are
     * copied down first) or removed, and the caller must keep it allocated until then. A promoted
     * segment comes back in the cache's own device pages, not in the adopted memory.
     *
     * @param key           the segment's key, not blank, at most {@link #MAX_KEY_LENGTH} {@code char}s
     * @param positions     the token positions the segment covers, kept with it unchanged
     * @param deviceSegment native memory: a device pointer from the CUDA backend, or native host memory on the HOST
     *                      backend
     * @throws IllegalArgumentException naming the argument if one is null, the key is blank, longer than
     *                                  {@link #MAX_KEY_LENGTH} or
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
        entered(() -> engine.adopt(key, positions, deviceSegment));
    }

    /**
     * Moves segment {@code key} down to the slower tier {@code to}, copying its bytes; returns when
     * they are in place.
     *
     * <p><b>Already on {@code to}: a no-op</b>, not an error, as for {@link #promote}: the call asks for the
     * segment to be on {@code to}, and it is (room making may have moved it there just before). What is an
     * error in both is a move the other way: here, {@code to} faster than where the segment is.
     *
     * @param key the segment's key, not blank, at most {@link #MAX_KEY_LENGTH} {@code char}s
     * @param to  the tier to move it down to
     * @throws IllegalArgumentException   if {@code to} is faster than the segment's tier (use {@link #promote})
     * @throws SegmentNotFoundException   if {@code key} is not cached
     * @throws TierFullException          if {@code to} is CPU and has no room
     * @throws TransferFailedException    if the copy failed (the segment stays where it was)
     * @throws SegmentCorruptedException  never: demotion only reads GPU or CPU memory
     * @throws IllegalStateException      if it is a prefix block ({@link #prefixBlocks}) with child blocks on
     *                                    a tier faster than {@code to} (a chain leaves a tier from its tail)
     */
    public void demote(String key, Tier to) {
        move(key, to, false);
    }

    /**
     * Moves segment {@code key} up to the faster tier {@code to}, copying its bytes; returns when
     * they are in place. A no-op if it is already on {@code to} (see {@link #demote}). Makes no room: use
     * {@link #ensureResident} for that.
     *
     * @param key the segment's key, not blank, at most {@link #MAX_KEY_LENGTH} {@code char}s
     * @param to  the tier to move it up to
     * @throws IllegalArgumentException   if {@code to} is slower than the segment's tier (use {@link #demote})
     * @throws SegmentNotFoundException   if {@code key} is not cached
     * @throws TierFullException          if {@code to} has no room
     * @throws TransferFailedException    if the copy failed (the segment stays where it was)
     * @throws SegmentCorruptedException  if it came from DISK and its bytes there are corrupted
     * @throws IllegalStateException      if it is a prefix block ({@link #prefixBlocks}) whose parent block is on a
     *                                    tier slower than {@code to} (a child is never on a faster tier than its
     *                                    parent: restore the prefix with {@code PrefixBlockCache.ensurePrefixResident})
     */
    public void promote(String key, Tier to) {
        move(key, to, true);
    }

    private void move(String key, Tier to, boolean promotion) {
        requireNonNull(key, "key");
        requireNonNull(to, "to");
        try {
            entered(() -> engine.move(key, to, promotion));
        } catch (SegmentNotFoundException e) {
            throw notFound(key, e);
        }
    }

    /**
     * Makes segment {@code key} resident on {@code tier} or a faster one: if it is slower, makes
     * room (demoting the policy's candidates, see the class comment) and promotes it; if it is
     * already there or faster, only counts the access. Returns when the bytes are in place.
     * Concurrent calls for the same key and tier share one transfer.
     *
     * @param key  the segment's key, not blank, at most {@link #MAX_KEY_LENGTH} {@code char}s
     * @param tier the slowest tier the segment may be on when this returns
     * @return where the segment is now, with its pages; the pages are not held: use {@link #pin} to keep them
     * @throws IllegalArgumentException  if an argument is null or the key blank
     * @throws SegmentNotFoundException  if {@code key} is not cached
     * @throws TierFullException         if no room could be made (the segment is larger than the
     *                                   budget, or every candidate is in use)
     * @throws TransferFailedException   if the copy failed (the segment stays where it was)
     * @throws SegmentCorruptedException if it came from DISK and its bytes there are corrupted
     * @throws IllegalStateException     if it is a prefix block ({@link #prefixBlocks}) whose parent block is on a tier
     *                                   slower than {@code tier} (a child is never on a faster tier than its parent:
     *                                   restore the prefix with {@code PrefixBlockCache.ensurePrefixResident})
     */
    public ResidentSegment ensureResident(String key, Tier tier) {
        requireNonNull(key, "key");
        requireNonNull(tier, "tier");
        try {
            return engine.ensureResident(key, tier);
        } catch (SegmentNotFoundException e) {
            throw notFound(key, e);
        }
    }

    /**
     * {@link #ensureResident} without blocking: the future completes when the bytes are in place,
     * or exceptionally with the exception {@code ensureResident} would throw (also the
     * {@link IllegalStateException} of a prefix block that would be faster than its parent). Calls for the same
     * key and tier while one is in flight share it. Completing or cancelling the returned future
     * does not affect the transfer (it holds nothing: no pin). The work runs on a kvtier thread, which
     * also runs dependent stages added before completion, after the work released every lock and left
     * the cache's operation: a dependent may call the cache on the same key or close it.
     *
     * @param key  the segment's key, not blank, at most {@link #MAX_KEY_LENGTH} {@code char}s
     * @param tier the slowest tier the segment may be on when the future completes
     * @return a future of what {@link #ensureResident} returns; shared with other calls for the same key and tier
     * @throws IllegalArgumentException if an argument is null or the key blank
     * @throws IllegalStateException    after {@link #close()}
     */
    public CompletableFuture<ResidentSegment> ensureResidentAsync(String key, Tier tier) {
        requireKey(key);
        requireNonNull(tier, "tier");
        return engine.ensureResidentAsync(key, tier);
    }

    /**
     * {@link #ensureResident}, then pins the segment where it is (on {@code tier} or a faster one):
     * until the returned pin is closed its pages keep its bytes -- the cache does not demote it to
     * make room, refuses to move it ({@link SegmentPinnedException}), and frees its pages on
     * {@link #remove} only when the last pin closes. Reading ({@link #read}) is unaffected. Pins
     * nest: each must be closed. A tier full of pinned segments makes room nowhere, so hold pins
     * only as long as the bytes are in use.
     *
     * @param key  the segment's key, not blank, at most {@link #MAX_KEY_LENGTH} {@code char}s
     * @param tier the slowest tier the segment may be on when pinned
     * @return the open pin, which the caller owns and closes when the bytes are no longer used
     * @throws IllegalArgumentException  if an argument is null or the key blank
     * @throws SegmentNotFoundException  if {@code key} is not cached
     * @throws SegmentPinnedException    if it is pinned on a slower tier than {@code tier}
     * @throws TierFullException         if no room could be made, or the segment kept being demoted
     *                                   by other calls before it could be pinned
     * @throws TransferFailedException   if the copy failed (the segment stays where it was)
     * @throws SegmentCorruptedException if it came from DISK and its bytes there are corrupted
     * @throws IllegalStateException     after {@link #close()}, or if it is a prefix block ({@link #prefixBlocks})
     *                                   whose parent block is on a tier slower than {@code tier} (a child is never on
     *                                   a faster tier than its parent: pin the prefix with
     *                                   {@code PrefixBlockCache.ensurePrefixResident})
     */
    public SegmentPin pin(String key, Tier tier) {
        requireNonNull(key, "key");
        requireNonNull(tier, "tier");
        TieringEngine.Pinned pinned;
        try {
            pinned = engine.pin(key, tier);
        } catch (SegmentNotFoundException e) {
            throw notFound(key, e);
        }
        return new SegmentPin(pinned.segment(), pinned.unpin());
    }

    /**
     * Copies segment {@code key}'s bytes into the start of {@code dst} (host memory, native or
     * heap), wherever the segment is; it does not move the segment or count an access.
     *
     * @param key the segment's key, not blank, at most {@link #MAX_KEY_LENGTH} {@code char}s
     * @param dst writable host memory of at least the segment's size; only its first {@code sizeBytes} are written
     * @throws IllegalArgumentException  if {@code dst} is null, read-only or smaller than the segment
     *                                   (naming both sizes; nothing is written)
     * @throws SegmentNotFoundException  if {@code key} is not cached
     * @throws SegmentCorruptedException if the segment is on DISK and its bytes there are corrupted (nothing is written)
     * @throws TransferFailedException   if the copy failed
     */
    public void read(String key, MemorySegment dst) {
        requireNonNull(key, "key");
        requireNonNull(dst, "dst");
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("dst must be writable, was read-only: " + dst);
        }
        try {
            entered(() -> engine.read(key, dst));
        } catch (SegmentNotFoundException e) {
            throw notFound(key, e);
        }
    }

    /**
     * Removes segment {@code key} and frees its memory (adopted device memory is only forgotten).
     * Waits for a transfer of the key in flight.
     *
     * @param key the segment's key, not blank, at most {@link #MAX_KEY_LENGTH} {@code char}s
     * @return its metadata as it was, or empty if it was not cached
     * @throws IllegalArgumentException if {@code key} is null or blank
     * @throws IllegalStateException    if it is a prefix block ({@link #prefixBlocks}) with cached child blocks,
     *                                  naming how many (nothing removed: remove a chain from its tail, as
     *                                  {@code PrefixBlockCache.removeBlock} does)
     */
    public Optional<SegmentMeta> remove(String key) {
        requireNonNull(key, "key");
        Optional<SegmentMeta> removed = entered(() -> engine.remove(key));
        if (removed.isEmpty()) {
            requireNotBlank(key);
        }
        return removed;
    }

    /**
     * The segment's current metadata, or empty if it is not cached. Waits for a transfer of the key
     * in flight, so the tier reported is the one holding the bytes.
     *
     * @param key the segment's key, not blank, at most {@link #MAX_KEY_LENGTH} {@code char}s
     * @return a snapshot of the segment's metadata (tier, size, positions, access count), or empty
     * @throws IllegalArgumentException if {@code key} is null or blank
     */
    public Optional<SegmentMeta> get(String key) {
        requireNonNull(key, "key");
        Optional<SegmentMeta> meta = entered(() -> engine.get(key));
        if (meta.isEmpty()) {
            requireNotBlank(key);
        }
        return meta;
    }

    /**
     * A prefix-block view of this cache: chains of fixed-size KV blocks named by {@link BlockHash}, looked
     * up and restored by longest cached prefix, with eviction that keeps parents while children stay (see
     * {@link PrefixBlockCache}). The blocks share this cache's tiers, budgets, policy and lifecycle; each is
     * a segment keyed {@link PrefixBlockCache#keyOf} (leave those keys to the view; where this class's calls are
     * given such a key, they keep the prefix rule: {@link #promote}, {@link #ensureResident} and {@link #pin} never
     * put a block on a tier faster than its parent's, {@link #demote} never a parent below a child's tier, and
     * {@link #remove} never removes a block with cached children; each refuses with {@link IllegalStateException}).
     * Use one layout per cache: a view of another block size is refused ({@link IllegalArgumentException}) by
     * every call meeting a block stored through the other. Cheap: the view holds no state of its own.
     *
     * @param layout the block geometry every block of the view has
     * @return a view sharing this cache's state; closing the cache ends it
     * @throws IllegalArgumentException if {@code layout} is null
     * @throws IllegalStateException    after {@link #close()}
     */
    public PrefixBlockCache prefixBlocks(BlockLayout layout) {
        requireNonNull(layout, "layout");
        return entered(() -> EngineViews.create(PrefixBlockCache.class, engine, layout));
    }

    /**
     * A snapshot of usage per tier, transfers, failures and bytes moved per tier pair.
     *
     * @return a new snapshot, which later changes do not alter
     */
    public CacheStats stats() {
        return entered(engine::stats);
    }

    /**
     * Registers {@code listener} to be told of every change committed from now on (segments added,
     * moved, removed; {@link #ensureResident} calls completed), in order, outside the cache's locks; see
     * {@link CacheChangeListener} for on which thread and what it may do. Registering is cheap but not free (the list is
     * copied); a cache with no listener pays one volatile read per change.
     *
     * @param listener the listener to tell; it stays registered until {@link #removeListener}
     * @throws IllegalArgumentException if {@code listener} is null
     */
    public void addListener(CacheChangeListener listener) {
        requireNonNull(listener, "listener");
        engine.addListener(listener);
    }

    /**
     * Unregisters {@code listener} (by identity); it is told of nothing that starts after this returns.
     * Works after {@link #close()} too.
     *
     * @param listener the listener to unregister; null or one not registered changes nothing
     * @return whether it was registered
     */
    public boolean removeListener(CacheChangeListener listener) {
        return listener != null && engine.removeListener(listener);
    }

    /**
     * Which backend moves the bytes and why it was chosen, e.g. {@code "host (no GPU: ...)"}.
     *
     * @return the backend's name, then why it was chosen, as the open's log line says
     */
    public String backendDescription() {
        return engine.description();
    }

    /**
     * What this cache found in its persisted disk directory when it opened (segments registered again on
     * DISK, discarded with reasons, duration, the keys), with the recovered segments that failed their
     * first check since; empty when the DISK tier is not persistent ({@link KvTierConfig#persistence()}).
     * Works after close too.
     *
     * @return the recovery report, or empty when the DISK tier is not persistent
     */
    public Optional<RecoveryReport> recovery() {
        return engine.recovery();
    }

    /**
     * The configuration this cache was opened with.
     *
     * @return the configuration given to {@link #open}
     */
    public KvTierConfig config() {
        return config;
    }

    /**
     * Waits for every operation in flight (transfers finish, queued {@link #ensureResidentAsync}
     * calls run), then frees all memory (adopted memory is only forgotten) and deletes the DISK
     * extents; a persistent DISK tier ({@link KvTierConfig#persistence()}) is synced as its fsync policy
     * says and kept for the next open instead. Idempotent; every other call afterwards throws
     * {@link IllegalStateException} ({@link #recovery()} still answers). The futures handed out before
     * ({@link #ensureResidentAsync}, a prefix restore's layers and pin) are completed meanwhile; close waits for
     * their dependents at most {@link KvTierConfig#transferTimeout()} after it began, and may be called from
     * one of them.
     */
    @Override
    public void close() {
        engine.close();
    }

    // ---------------------------------------------------------------- the door's own work

    /** Runs {@code operation} inside the lifecycle gate. */
    private <T> T entered(Supplier<T> operation) {
        gate.enter();
        try {
            return operation.get();
        } finally {
            gate.exit();
        }
    }

    private void entered(Runnable operation) {
        gate.enter();
        try {
            operation.run();
        } finally {
            gate.exit();
        }
    }

    /** For calls that may add the key: null, blank and too long keys are refused before anything is done. */
    private static void requireKey(String key) {
        requireNonNull(key, "key");
        if (key.length() > MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("key must be at most " + MAX_KEY_LENGTH + " chars (UTF-16 code units),"
                    + " was " + key.length() + " chars starting \"" + key.substring(0, 32) + "\"");
        }
        requireNotBlank(key);
    }

    private static void requireNotBlank(String key) {
        if (key.isBlank()) {
            throw new IllegalArgumentException("key must not be blank, was \"" + key + "\"");
        }
    }

    /*
     * Calls that only look a key up check its blankness when it was not found: a blank key is never cached (the
     * calls that add keys refuse it first), so the answer for it is always a miss, and checking every key that is
     * found read each key's characters on every hit (a cold cache line per reference: ~4% of the simulator's
     * segment path, issue 11), the only code on a lookup that did. A miss changes nothing, so the caller still
     * gets the IllegalArgumentException, and nothing changed.
     */
    private static RuntimeException notFound(String key, SegmentNotFoundException e) {
        requireNotBlank(key);
        return e;
    }

    private static void requireNonNull(Object value, String name) {
        if (value == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
    }
}
