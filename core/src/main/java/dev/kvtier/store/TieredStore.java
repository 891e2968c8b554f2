package dev.kvtier.store;

import dev.kvtier.store.policy.CandidateList;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * The logical tier map: which segment lives on which {@link Tier}, with byte budgets for
 * {@link Tier#GPU} and {@link Tier#CPU}, and for {@link Tier#DISK} where one is given (unbounded by
 * default, as in the seed). The store only does the
 * bookkeeping; {@link #demote} and {@link #promote} return a {@link TierTransfer} that the caller
 * must carry out, and hand back to {@link #rollback} if the bytes could not be moved.
 *
 * <pre>{@code
 * TieredStore store = new TieredStore(1_000_000, 8_000_000);       // 1 MB GPU, 8 MB CPU
 * store.register(SegmentMeta.of("turn-1", PositionRange.of(0, 512), 200_000), Tier.GPU);
 * TierTransfer down = store.demote("turn-1", Tier.CPU).orElseThrow(); // GPU -> CPU, now copy the bytes
 * TierTransfer up = store.promote("turn-1", Tier.GPU).orElseThrow();  // CPU -> GPU, accessCount 1
 * }</pre>
 *
 * <h2>Answers</h2>
 * The same as the Rust seed on valid input: {@code register} refuses a duplicate key or a segment
 * the tier's budget cannot hold; {@code demote} / {@code promote} return empty for an unknown key,
 * a target that is not strictly slower / faster than the current tier, or a target without room;
 * {@code promote} and {@code touch} count an access; the free queries never go below zero.
 * A budget check is {@code size <= budget - used}, which cannot overflow; disk usage is capped at
 * {@link Long#MAX_VALUE} the same way.
 *
 * <h2>Demotion order</h2>
 * {@link #candidatesForDemotion} follows the {@link DemotionPolicy} given at construction (default
 * {@link DemotionPolicy#defaultPolicy()}). Ties are broken by least recent use, where a use is
 * a register, touch or promote stamped from a monotonic counter, so one history always gives one
 * list. Each tier keeps an index in that order, so nothing is sorted per call. With the built-in
 * order policies it is the LFU bucket scheme (frequency buckets, each ordered by recency) with lazy
 * repair: a touch only updates the segment's own record, and a demote or promote files nothing
 * either when the segment still has its record from an earlier stay on the target tier (filed at
 * or below its present key); a candidates query drops the records of segments that left the tier
 * and re-files the stale ones it meets before relying on their place. So touch is O(1) with no
 * index writes; get is O(1) expected (a hash lookup); demote, promote and register are O(1)
 * expected and amortised, with an O(log b) directory look-up among the b distinct access counts of
 * the tier when no neighbouring bucket fits, and O(log m) when a record must join a bucket's tree
 * of the m records filed out of recency order (arrivals by demote or rollback); remove drops the
 * segment's records on every tier, O(1) each (one that is its bucket's newest stays there, dead,
 * for the next registration filed there to take over: a register then remove allocates none). k candidates cost O(k) plus the repairs met, each
 * paid for by one earlier touch or move (amortised O(1), O(log m) into a tree). A custom order gets
 * a red-black tree: O(log n) per update, O(k + log n) for k candidates. A tracker policy
 * ({@link DemotionPolicy#newTracker}) costs what it documents ({@link DemotionPolicy#s3Fifo()},
 * {@link DemotionPolicy#chainAwareS3Fifo()}, the default {@link DemotionPolicy#adaptiveS3Fifo()},
 * {@link DemotionPolicy#adaptiveS3FifoLfu()} and {@link DemotionPolicy#wTinyLfu()}: O(1) per event, amortised
 * O(1) per candidate; the S3-FIFO family at most 256 queue moves per candidate).
 * {@link #segments()} is O(n).
 *
 * <h2>Handles</h2>
 * {@link #registerHandle} and {@link #handle} give a {@link SegmentHandle}; {@code touch}, {@code tierOf},
 * {@code get}, {@code demote}, {@code promote}, {@code hold}, {@code release} and {@code remove} take one
 * in place of the key and answer as their key-based twins, treating a stale handle (its segment removed)
 * as an unknown key. Why: a caller that keeps its own record per segment (the tiering layer) then finds the
 * segment with no second hash lookup, which at 10^6 segments is a chain of cache misses per call. For the same
 * reason {@link #candidatesForDemotion(Tier, long, List)} names candidates by handle, and
 * {@link #registerHandle(SegmentMeta, Tier, Object)} keeps the caller's record in the handle
 * ({@link SegmentHandle#attachment()}), so a caller goes from a candidate to its own record with no lookup.
 *
 * <h2>Thread safety</h2>
 * Thread-safe. Every public method is atomic (but touches without the lock, below): other threads see all of its effect or none, and a
 * refused call (false / empty / exception) changes nothing. Every change runs entirely under one
 * exclusive lock (the policy's tracker is called under it, and must not call back into its store:
 * the lock is not reentrant), which costs one compare-and-set (see StoreLock). The changes by key
 * look the key up before taking the lock and check under it that the entry found is still registered
 * (its misses then do not wait for the lock's atomic instruction). The reads
 * {@link #get}, {@link #tierOf}, {@link #numSegments} and the usage queries take no lock in the
 * common case: they read optimistically and keep the answer only if no change ran meanwhile, else
 * they read again under the lock. Why: a lock acquisition is an atomic read-modify-write, a full
 * fence on x86, which also keeps the cache misses of consecutive lookups at 10^6 segments from
 * overlapping; an optimistic read costs two plain reads of the lock's version.
 *
 * <p><b>Touches without the lock.</b> Where the policy's tracker says it can take a use concurrently
 * ({@link DemotionPolicy.Tracker#takesConcurrentUses()}: the built-in least-accessed-first, least-recently-used
 * and S3-FIFO family, not W-TinyLFU or a custom policy unless it says so), {@code touch} by key or handle takes no
 * lock: it raises the segment's count and last use with plain writes and tells the tracker, which takes the lock
 * only for the few uses it cannot record without (the default's sampled keys, every GPU use of the
 * adaptive S3-FIFO with an LFU expert, whose frequency order is re-filed on each; a record of the order index to re-file), so a touch never
 * waits for a change otherwise. The price, as in Caffeine's lossy read buffer: touches of one segment racing each
 * other may count once, two racing touches may get one last-use stamp (or one a little below the newest), and
 * a touch racing the segment's removal or demotion is either applied or lost; such a
 * touch answers true. Nothing else changes: with no touch racing, every answer is what the locked touch gives
 * (the same counts, stamps and candidates), and no race corrupts an index (the order index names a segment whose
 * count a racing touch left below where it was filed in place rather than re-filing it, and re-files at most as
 * many records per query as it holds). A touch's effect is seen by other threads without a happens-before edge:
 * a {@code get} right after may still see the count before it.
 * Separate calls are separate atomic steps: {@code gpuUsed()} then {@code cpuUsed()} may see two
 * different states, and a key returned by {@code candidatesForDemotion} may have been removed by
 * the time it is demoted (demote then simply returns empty).
 *
 * <h2>Errors</h2>
 * Programming errors (null or blank keys, null tiers or metadata, negative budgets) throw
 * {@link IllegalArgumentException} naming the argument and its value, before anything changes.
 */
public final class TieredStore {

    /** Budget and usage of one tier. */
    private static final class TierState {
        final long budget;
        long used;
        /** Segments booked on the tier: with {@link #used}, their mean size, to presize a candidates list. */
        int segments;

        TierState(long budget) {
            this.budget = budget;
        }

        /** {@code used <= budget} always holds, so {@code budget - used} cannot overflow. */
        boolean fits(long bytes) {
            return bytes <= budget - used;
        }

        /**
         * About how many of the tier's segments add up to {@code needed} bytes at their mean size, at most all of
         * them: the capacity for a candidates list, so that naming many small blocks does not grow it step by step.
         */
        int expectedCandidates(long needed) {
            if (segments == 0 || used == 0) {
                return Math.min(segments, 16);
            }
            long meanSize = Math.max(1, used / segments);
            return (int) Math.min(segments, needed / meanSize + 1);
        }
    }

    private final StoreLock lock = new StoreLock();
    private final long gpuBudget;
    private final long cpuBudget;
    private final long diskBudget;
    private final DemotionPolicy policy;
    /** This store's half of the policy: told every event, asked for candidates; under the lock. */
    private final DemotionPolicy.Tracker tracker;
    /** Registration order, so {@link #segments()} is deterministic too. */
    private final EntryTable entries = new EntryTable();
    private final TierState[] tiers = new TierState[Tier.values().length];
    /**
     * The logical clock behind {@link DemotionPolicy.Usage#lastUse()}: written under the lock, and also by touches
     * without it ({@link #touchedWithoutLock}, through {@link #CLOCK}).
     */
    private long clock;
    /** Whether the tracker takes touches without the lock ({@link DemotionPolicy.Tracker#takesConcurrentUses()}). */
    private final boolean concurrentUses;
    private static final VarHandle CLOCK;

    static {
        try {
            CLOCK = MethodHandles.lookup().findVarHandle(TieredStore.class, "clock", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * A store with the default policy, {@link DemotionPolicy#defaultPolicy()}.
     *
     * @param gpuBudget bytes that may live on {@link Tier#GPU}, {@code >= 0}
     * @param cpuBudget bytes that may live on {@link Tier#CPU}, {@code >= 0}
     * @throws IllegalArgumentException if a budget is negative
     */
    public TieredStore(long gpuBudget, long cpuBudget) {
        this(gpuBudget, cpuBudget, DemotionPolicy.defaultPolicy());
    }

    /**
     * A store ordering demotion candidates by {@code policy}.
     *
     * @param gpuBudget bytes that may live on {@link Tier#GPU}, {@code >= 0}
     * @param cpuBudget bytes that may live on {@link Tier#CPU}, {@code >= 0}
     * @param policy    the demotion policy; see {@link DemotionPolicy} for what it must promise
     * @throws IllegalArgumentException if a budget is negative, {@code policy} is null, or it is an
     *                                  order policy with a null order, or its tracker is null
     */
    public TieredStore(long gpuBudget, long cpuBudget, DemotionPolicy policy) {
        this(gpuBudget, cpuBudget, Long.MAX_VALUE, policy, -1);
    }

    /**
     * A store ordering demotion candidates by {@code policy}, with a DISK budget: a segment the DISK tier's
     * budget cannot hold is refused there as on the other tiers, and {@link #candidatesForDemotion} names the
     * DISK tier's segments in the policy's order for a caller that must evict from it.
     *
     * @param gpuBudget  bytes that may live on {@link Tier#GPU}, {@code >= 0}
     * @param cpuBudget  bytes that may live on {@link Tier#CPU}, {@code >= 0}
     * @param diskBudget bytes that may live on {@link Tier#DISK}, {@code >= 0}; {@link Long#MAX_VALUE} for none
     * @param policy     the policy naming demotion candidates; the store asks it for a tracker of its own
     * @throws IllegalArgumentException as {@link #TieredStore(long, long, DemotionPolicy)}, or if {@code diskBudget}
     *                                  is negative
     */
    public TieredStore(long gpuBudget, long cpuBudget, long diskBudget, DemotionPolicy policy) {
        this(gpuBudget, cpuBudget, diskBudget, policy, -1);
    }

    /**
     * For tests: {@code emptyBucketSlack} tunes the built-in order policies' index (see
     * UsageBucketIndex); negative means the policy's own tracker, as the public constructor.
     */
    TieredStore(long gpuBudget, long cpuBudget, DemotionPolicy policy, int emptyBucketSlack) {
        this(gpuBudget, cpuBudget, Long.MAX_VALUE, policy, emptyBucketSlack);
    }

    private TieredStore(long gpuBudget, long cpuBudget, long diskBudget, DemotionPolicy policy, int emptyBucketSlack) {
        if (diskBudget < 0) {
            throw new IllegalArgumentException("diskBudget must be >= 0, was " + diskBudget);
        }
        if (gpuBudget < 0) {
            throw new IllegalArgumentException("gpuBudget must be >= 0, was " + gpuBudget);
        }
        if (cpuBudget < 0) {
            throw new IllegalArgumentException("cpuBudget must be >= 0, was " + cpuBudget);
        }
        if (policy == null) {
            throw new IllegalArgumentException("policy must not be null");
        }
        DemotionPolicy.Tracker newTracker = emptyBucketSlack >= 0 && policy instanceof StandardDemotionPolicy
                ? OrderTracker.of(policy, emptyBucketSlack) : policy.newTracker(gpuBudget, cpuBudget);
        if (newTracker == null) {
            throw new IllegalArgumentException("policy " + policy.name() + " returned a null tracker from newTracker("
                    + gpuBudget + ", " + cpuBudget + ")");
        }
        this.gpuBudget = gpuBudget;
        this.cpuBudget = cpuBudget;
        this.diskBudget = diskBudget;
        this.policy = policy;
        this.tracker = newTracker;
        this.concurrentUses = newTracker.takesConcurrentUses();
        tiers[Tier.GPU.ordinal()] = new TierState(gpuBudget);
        tiers[Tier.CPU.ordinal()] = new TierState(cpuBudget);
        tiers[Tier.DISK.ordinal()] = new TierState(diskBudget);
    }

    /**
     * Registers a new segment on {@code tier}, keeping the access count {@code meta} carries (0 for
     * {@link SegmentMeta#of}); its tier is replaced by {@code tier}. Counts as a use.
     *
     * @param meta the segment's key, positions, size and access count (its tier is ignored)
     * @param tier the tier its bytes are on
     * @return false, changing nothing, if the key is already registered or {@code tier} lacks room
     * @throws IllegalArgumentException if {@code meta} or {@code tier} is null
     */
    public boolean register(SegmentMeta meta, Tier tier) {
        return registerEntry(meta, tier, null) != null;
    }

    /**
     * {@link #register}, answering with the new segment's {@link SegmentHandle} (for the handle-taking
     * methods, which skip the key lookup) instead of true.
     *
     * @param meta the segment's key, positions, size and access count (its tier is ignored)
     * @param tier the tier its bytes are on
     * @return the handle, or null, changing nothing, if the key is already registered or {@code tier} lacks room
     * @throws IllegalArgumentException if {@code meta} or {@code tier} is null
     */
    public SegmentHandle registerHandle(SegmentMeta meta, Tier tier) {
        return registerEntry(meta, tier, null);
    }

    /**
     * {@link #registerHandle(SegmentMeta, Tier)}, keeping {@code attachment} (the caller's own record of the
     * segment, or null) in the handle's {@link SegmentHandle#attachment()} from the start: a caller that keeps
     * one record per segment then gets from a candidate of {@link #candidatesForDemotion(Tier, long, List)} to
     * it without looking the key up. The store only keeps the reference (it never reads the object), as long as
     * the handle is reachable.
     *
     * @param meta       the segment's key, positions, size and access count (its tier is ignored)
     * @param tier       the tier its bytes are on
     * @param attachment the caller's own record of the segment, or null; kept, never read
     * @return the handle, or null, changing nothing, if the key is already registered or {@code tier} lacks room
     * @throws IllegalArgumentException if {@code meta} or {@code tier} is null
     */
    public SegmentHandle registerHandle(SegmentMeta meta, Tier tier, Object attachment) {
        return registerEntry(meta, tier, attachment);
    }

    /** {@link #register}; returns the new entry, or null if refused. */
    private SegmentEntry registerEntry(SegmentMeta meta, Tier tier, Object attachment) {
        if (meta == null) {
            throw new IllegalArgumentException("meta must not be null");
        }
        requireTier(tier, "tier");
        long stamp = lock.lock();
        try {
            TierState target = tiers[tier.ordinal()];
            int slot = entries.slotOf(meta.key()); // one probe finds a duplicate or the free slot
            if (slot >= 0 || !target.fits(meta.sizeBytes())) {
                return null;
            }
            SegmentEntry entry = new SegmentEntry(this, meta, tier, clock + 1);
            entry.attachment = attachment; // before the entry is published (by addAt, under the lock)
            try {
                tracker.registered(entry, tier); // first, so a failing tracker leaves nothing behind
            } catch (RuntimeException e) {
                throw trackerFailed("register", entry, e);
            }
            clock++;
            entries.addAt(slot, entry);
            target.used += meta.sizeBytes();
            target.segments++;
            return entry;
        } finally {
            lock.unlock(stamp);
        }
    }

    /**
     * Books a move of segment {@code key} to the strictly slower tier {@code to}. Does not count as a
     * use. The caller must move the bytes, or {@link #rollback} the transfer.
     *
     * @param key the segment's key, not blank
     * @param to  the tier to move it down to
     * @return the transfer to carry out, or empty, changing nothing, if the key is unknown,
     *         {@code to} is not slower than the segment's tier, or {@code to} lacks room
     * @throws IllegalArgumentException if {@code key} is null or blank or {@code to} is null
     */
    public Optional<TierTransfer> demote(String key, Tier to) {
        return book(key, to, false);
    }

    /**
     * Books a move of segment {@code key} to the strictly faster tier {@code to}, counting an access
     * and a use. The caller must move the bytes, or {@link #rollback} the transfer.
     *
     * @param key the segment's key, not blank
     * @param to  the tier to move it up to
     * @return the transfer to carry out, or empty, changing nothing, if the key is unknown,
     *         {@code to} is not faster than the segment's tier, or {@code to} lacks room
     * @throws IllegalArgumentException if {@code key} is null or blank or {@code to} is null
     */
    public Optional<TierTransfer> promote(String key, Tier to) {
        return book(key, to, true);
    }

    /**
     * {@link #demote(String, Tier)} of the segment {@code handle} names, without the key lookup.
     *
     * @param handle a handle this store handed out; a stale one (its segment removed since) is answered as an unknown
     *               key
     * @param to     the tier to move it down to
     * @return as there; empty, changing nothing, if {@code handle} is stale
     * @throws IllegalArgumentException if {@code handle} is null or from another store, or {@code to} is null
     */
    public Optional<TierTransfer> demote(SegmentHandle handle, Tier to) {
        return book(own(handle), to, false);
    }

    /**
     * {@link #promote(String, Tier)} of the segment {@code handle} names, without the key lookup.
     *
     * @param handle a handle this store handed out; a stale one (its segment removed since) is answered as an unknown
     *               key
     * @param to     the tier to move it up to
     * @return as there; empty, changing nothing, if {@code handle} is stale
     * @throws IllegalArgumentException if {@code handle} is null or from another store, or {@code to} is null
     */
    public Optional<TierTransfer> promote(SegmentHandle handle, Tier to) {
        return book(own(handle), to, true);
    }

    /** {@link #demote} or {@link #promote}: only a promotion counts as an access and a use. */
    private Optional<TierTransfer> book(String key, Tier to, boolean promotion) {
        requireTier(to, "to");
        SegmentEntry found = entries.get(key); // before the lock: see confirmed
        long stamp = lock.lock();
        try {
            return booked(confirmed(found, key), to, promotion);
        } finally {
            lock.unlock(stamp);
        }
    }

    private Optional<TierTransfer> book(SegmentEntry entry, Tier to, boolean promotion) {
        requireTier(to, "to");
        long stamp = lock.lock();
        try {
            return booked(entry.registered() ? entry : null, to, promotion);
        } finally {
            lock.unlock(stamp);
        }
    }

    /** The booking of {@link #book}, under the lock; {@code entry} null (unknown, stale) books nothing. */
    private Optional<TierTransfer> booked(SegmentEntry entry, Tier to, boolean promotion) {
        if (entry == null) {
            return Optional.empty();
        }
        Tier from = entry.tier();
        boolean rightWay = promotion ? to.isFasterThan(from) : from.isFasterThan(to);
        if (!rightWay || !tiers[to.ordinal()].fits(entry.sizeBytes)) {
            return Optional.empty();
        }
        return Optional.of(promotion
                ? move(entry, to, entry.accessCount + 1, clock + 1, MoveKind.PROMOTION)
                : move(entry, to, entry.accessCount, entry.lastUse, MoveKind.DEMOTION));
    }

    /**
     * Undoes the demote or promote that returned {@code transfer}, for a caller whose bytes could
     * not be moved: the segment goes back to {@code transfer.from()}, both tiers' usage is restored
     * and a promotion's access-count increment is taken back. The use a promotion recorded stays:
     * the caller did ask for the segment. Touches made since the transfer are kept.
     *
     * @param transfer a transfer {@link #demote} or {@link #promote} returned, whose bytes did not move
     * @return true if undone; false, changing nothing, unless {@code transfer} is the latest move
     *         booked for a segment still registered under its key and not yet rolled back (so the
     *         segment is on {@code transfer.to()} with that size and those positions), or if
     *         {@code transfer.from()} no longer has room because others took the space meanwhile
     *         (the caller then still holds the bytes on {@code from} and should remove the segment)
     * @throws IllegalArgumentException if {@code transfer} is null
     */
    public boolean rollback(TierTransfer transfer) {
        if (transfer == null) {
            throw new IllegalArgumentException("transfer must not be null");
        }
        long stamp = lock.lock();
        try {
            SegmentEntry entry = entries.get(transfer.key());
            if (entry == null || !entry.isLatestMove(transfer)
                    || !tiers[transfer.from().ordinal()].fits(entry.sizeBytes)) {
                return false;
            }
            long accessCount = entry.accessCount;
            if (transfer.isPromotion() && accessCount > 0) {
                accessCount--;
            }
            move(entry, transfer.from(), accessCount, entry.lastUse, MoveKind.ROLLBACK);
            entry.clearMove();
            return true;
        } finally {
            lock.unlock(stamp);
        }
    }

    /**
     * Removes segment {@code key}, releasing its bytes from its tier's usage.
     *
     * @param key the segment's key, not blank
     * @return its final snapshot, or empty if the key is unknown
     * @throws IllegalArgumentException if {@code key} is null or blank
     */
    public Optional<SegmentMeta> remove(String key) {
        long stamp = lock.lock();
        try {
            int slot = key == null ? -1 : entries.slotOf(key); // one probe, kept for the removal
            if (slot < 0) {
                SegmentMeta.requireKey(key, "key");
                return Optional.empty();
            }
            return Optional.of(removeAt(slot));
        } finally {
            lock.unlock(stamp);
        }
    }

    /**
     * {@link #remove(String)} of the segment {@code handle} names; the handle is stale afterwards. Still one
     * probe of the store's table, to take the entry out of it.
     *
     * @param handle a handle this store handed out; a stale one (its segment removed since) is answered as an unknown
     *               key
     * @return its final snapshot, or empty if {@code handle} is stale
     * @throws IllegalArgumentException if {@code handle} is null or from another store
     */
    public Optional<SegmentMeta> remove(SegmentHandle handle) {
        SegmentEntry entry = own(handle);
        long stamp = lock.lock();
        try {
            return entry.registered() ? Optional.of(removeAt(entries.slotOf(entry.key))) : Optional.empty();
        } finally {
            lock.unlock(stamp);
        }
    }

    /**
     * {@link #remove(String)} answering only whether the key was registered: the same change, without building
     * the final snapshot and its {@code Optional} (56 bytes), for a caller that does not read them.
     *
     * @param key the segment's key, not blank
     * @return false, changing nothing, if the key is unknown
     * @throws IllegalArgumentException if {@code key} is null or blank
     */
    public boolean discard(String key) {
        long stamp = lock.lock();
        try {
            int slot = key == null ? -1 : entries.slotOf(key);
            if (slot < 0) {
                SegmentMeta.requireKey(key, "key");
                return false;
            }
            removedAt(slot);
            return true;
        } finally {
            lock.unlock(stamp);
        }
    }

    /**
     * {@link #discard(String)} of the segment {@code handle} names; the handle is stale afterwards.
     *
     * @param handle a handle this store handed out; a stale one (its segment removed since) is answered as an unknown
     *               key
     * @return false, changing nothing, if {@code handle} is stale
     * @throws IllegalArgumentException if {@code handle} is null or from another store
     */
    public boolean discard(SegmentHandle handle) {
        SegmentEntry entry = own(handle);
        long stamp = lock.lock();
        try {
            if (!entry.registered()) {
                return false;
            }
            removedAt(entries.slotOf(entry.key));
            return true;
        } finally {
            lock.unlock(stamp);
        }
    }

    /** Removes the entry in {@code slot}, just found; under the lock. Returns its final snapshot. */
    private SegmentMeta removeAt(int slot) {
        return removedAt(slot).snapshot();
    }

    /** Removes the entry in {@code slot}, just found; under the lock. Returns the entry, now stale. */
    private SegmentEntry removedAt(int slot) {
        SegmentEntry entry = entries.at(slot);
        Tier on = entry.tier();
        try {
            tracker.removed(entry, on); // first, so a failing tracker leaves nothing changed
        } catch (RuntimeException e) {
            throw trackerFailed("remove", entry, e);
        }
        entries.removeAt(slot);
        TierState state = tiers[on.ordinal()];
        state.used -= entry.sizeBytes;
        state.segments--;
        return entry;
    }

    /**
     * The current snapshot of segment {@code key}. Not a use (reading metadata is not reading KV).
     *
     * @param key the segment's key, not blank
     * @return the snapshot, or empty if the key is unknown
     * @throws IllegalArgumentException if {@code key} is null or blank
     */
    public Optional<SegmentMeta> get(String key) {
        return Optional.ofNullable(readEntry(key, SegmentEntry::snapshot));
    }

    /**
     * The tier segment {@code key} is booked on, or null if the key is unknown: {@link #get}'s tier without
     * building a snapshot (the prefix chains ask it for every block of every request).
     *
     * @param key the segment's key, not blank
     * @return the tier the segment is booked on (the one a booked move goes to), or null if the key is unknown
     * @throws IllegalArgumentException if {@code key} is null or blank
     */
    public Tier tierOf(String key) {
        return readEntry(key, SegmentEntry::tier);
    }

    /**
     * The handle of segment {@code key}'s current registration, or null if the key is unknown: one lookup, for a
     * caller that then keeps the handle (see {@link SegmentHandle}). Not a use.
     *
     * @param key the segment's key, not blank
     * @return the handle, valid until the segment is removed, or null if the key is unknown
     * @throws IllegalArgumentException if {@code key} is null or blank
     */
    public SegmentHandle handle(String key) {
        return readEntry(key, entry -> entry);
    }

    /**
     * {@link #get(String)} of the segment {@code handle} names, without the key lookup.
     *
     * @param handle a handle this store handed out; a stale one (its segment removed since) is answered as an unknown
     *               key
     * @return the snapshot, or empty if {@code handle} is stale
     * @throws IllegalArgumentException if {@code handle} is null or from another store
     */
    public Optional<SegmentMeta> get(SegmentHandle handle) {
        return Optional.ofNullable(readEntry(own(handle), SegmentEntry::snapshot));
    }

    /**
     * {@link #tierOf(String)} of the segment {@code handle} names, without the key lookup.
     *
     * @param handle a handle this store handed out; a stale one (its segment removed since) is answered as an unknown
     *               key
     * @return its tier, or null if {@code handle} is stale
     * @throws IllegalArgumentException if {@code handle} is null or from another store
     */
    public Tier tierOf(SegmentHandle handle) {
        return readEntry(own(handle), SegmentEntry::tier);
    }

    /** {@link #readEntry(String, Function)} of a known entry: null if it was removed. */
    private <T> T readEntry(SegmentEntry entry, Function<SegmentEntry, T> field) {
        long stamp = lock.tryOptimisticRead();
        if (stamp != 0L) {
            T value = entry.registered() ? field.apply(entry) : null;
            if (lock.validate(stamp)) {
                return value;
            }
        }
        stamp = lock.lock();
        try {
            return entry.registered() ? field.apply(entry) : null;
        } finally {
            lock.unlock(stamp);
        }
    }

    /**
     * {@code field} of segment {@code key}'s entry, or null if the key is unknown: read without the lock and
     * kept only if no change ran meanwhile (the lock's stamp still valid), else read again under the lock.
     * {@code field} must not return null for an entry, and must only read it.
     */
    private <T> T readEntry(String key, Function<SegmentEntry, T> field) {
        long stamp = lock.tryOptimisticRead();
        if (stamp != 0L) {
            SegmentEntry entry = entries.get(key);
            T value = entry == null ? null : field.apply(entry);
            if (lock.validate(stamp)) {
                if (value == null) {
                    SegmentMeta.requireKey(key, "key");
                }
                return value;
            }
        }
        stamp = lock.lock();
        try {
            SegmentEntry entry = lookup(key);
            return entry == null ? null : field.apply(entry);
        } finally {
            lock.unlock(stamp);
        }
    }

    /**
     * Counts an access to and a use of segment {@code key} without moving it.
     *
     * @param key the segment's key, not blank
     * @return false if the key is unknown
     * @throws IllegalArgumentException if {@code key} is null or blank
     */
    public boolean touch(String key) {
        SegmentEntry found = entries.get(key); // before the lock: see confirmed
        if (concurrentUses && found != null && found.registered()) {
            return touchedWithoutLock(found);
        }
        long stamp = lock.lock();
        try {
            return touched(confirmed(found, key));
        } finally {
            lock.unlock(stamp);
        }
    }

    /**
     * {@link #touch(String)} of the segment {@code handle} names, without the key lookup.
     *
     * @param handle a handle this store handed out; a stale one (its segment removed since) is answered as an unknown
     *               key
     * @return false if {@code handle} is stale
     * @throws IllegalArgumentException if {@code handle} is null or from another store
     */
    public boolean touch(SegmentHandle handle) {
        SegmentEntry entry = own(handle);
        if (concurrentUses && entry.registered()) {
            return touchedWithoutLock(entry);
        }
        long stamp = lock.lock();
        try {
            return touched(entry.registered() ? entry : null);
        } finally {
            lock.unlock(stamp);
        }
    }

    /**
     * The touch of {@link #touch} without the lock, for a tracker that takes uses concurrently: {@code entry} was
     * registered when looked up (racing any writer). Raises its usage with plain (opaque) writes and a tick of the
     * clock read and written the same way, then offers the use to the tracker; only if the tracker needs the lock
     * for this one (a sampled key, a record to re-file) is it taken, the entry confirmed registered, and the use
     * reported as under the lock ({@link #touched} without raising the usage twice). Single-threaded, the values
     * and the tracker's events are exactly those of {@link #touched}. Racing other calls, the increment or the tick
     * may be lost or shared (two touches stamped alike, or a tick a little below the newest), and a touch racing
     * the segment's removal or move is applied to it or lost; see Thread safety in the class comment for why the
     * indexes tolerate that. Never waits unless the tracker asks for the lock.
     */
    private boolean touchedWithoutLock(SegmentEntry entry) {
        long accessCount = entry.accessCount;
        long lastUse = entry.lastUse;
        long tick = (long) CLOCK.getOpaque(this) + 1;
        CLOCK.setOpaque(this, tick);
        entry.usedWithoutLock(accessCount + 1, tick);
        boolean recorded;
        try {
            recorded = tracker.usedConcurrently(entry, entry.tier());
        } catch (RuntimeException e) {
            entry.usedWithoutLock(accessCount, lastUse);
            CLOCK.compareAndSet(this, tick, tick - 1); // only on this error path: a tick no one else took since
            throw trackerFailed("touch", entry, e);
        }
        if (recorded) {
            return true;
        }
        long stamp = lock.lock();
        try {
            if (!entry.registered()) {
                // Removed since it was looked up: the use, applied to the entry, left with it (a removal's final
                // snapshot may already count it, so the answer is true, as for every touch that raised a count).
                return true;
            }
            try {
                tracker.used(entry, entry.tier());
            } catch (RuntimeException e) {
                entry.accessCount = accessCount;
                entry.lastUse = lastUse;
                if (clock == tick) {
                    clock--;
                }
                throw trackerFailed("touch", entry, e);
            }
            return true;
        } finally {
            lock.unlock(stamp);
        }
    }

    /** The touch of {@link #touch}, under the lock; {@code entry} null (unknown, stale) is false. */
    private boolean touched(SegmentEntry entry) {
        if (entry == null) {
            return false;
        }
        long accessCount = entry.accessCount;
        long lastUse = entry.lastUse;
        entry.accessCount = accessCount + 1;
        entry.lastUse = ++clock;
        try {
            tracker.used(entry, entry.tier());
        } catch (RuntimeException e) {
            entry.accessCount = accessCount;
            entry.lastUse = lastUse;
            clock--;
            throw trackerFailed("touch", entry, e);
        }
        return true;
    }

    /**
     * Tells the policy that segment {@code key} cannot leave its tier until {@link #release}d, for a reason that
     * lasts (a prefix block whose children are on its tier): the policy keeps its rank but names others meanwhile
     * ({@link DemotionPolicy.Tracker#held}). Not an access or a use; nothing the store counts changes.
     *
     * @param key the segment's key, not blank
     * @return false if the key is unknown
     */
    public boolean hold(String key) {
        return holding(key, true);
    }

    /**
     * Ends {@link #hold}: segment {@code key} may leave its tier again.
     *
     * @param key the segment's key, not blank
     * @return false if the key is unknown
     */
    public boolean release(String key) {
        return holding(key, false);
    }

    /**
     * {@link #hold(String)} of the segment {@code handle} names, without the key lookup.
     *
     * @param handle a handle this store handed out; a stale one (its segment removed since) is answered as an unknown
     *               key
     * @return false if {@code handle} is stale
     * @throws IllegalArgumentException if {@code handle} is null or from another store
     */
    public boolean hold(SegmentHandle handle) {
        return holding(own(handle), true);
    }

    /**
     * {@link #release(String)} of the segment {@code handle} names, without the key lookup.
     *
     * @param handle a handle this store handed out; a stale one (its segment removed since) is answered as an unknown
     *               key
     * @return false if {@code handle} is stale
     * @throws IllegalArgumentException if {@code handle} is null or from another store
     */
    public boolean release(SegmentHandle handle) {
        return holding(own(handle), false);
    }

    private boolean holding(String key, boolean held) {
        SegmentEntry found = entries.get(key); // before the lock: see confirmed
        long stamp = lock.lock(); // the tracker's state is guarded by the store's lock, as for every event
        try {
            return held(confirmed(found, key), held);
        } finally {
            lock.unlock(stamp);
        }
    }

    private boolean holding(SegmentEntry entry, boolean held) {
        long stamp = lock.lock();
        try {
            return held(entry.registered() ? entry : null, held);
        } finally {
            lock.unlock(stamp);
        }
    }

    /** The hold or release of {@link #holding}, under the lock; {@code entry} null (unknown, stale) is false. */
    private boolean held(SegmentEntry entry, boolean held) {
        if (entry == null) {
            return false;
        }
        try {
            if (held) {
                tracker.held(entry, entry.tier());
            } else {
                tracker.released(entry, entry.tier());
            }
        } catch (RuntimeException e) {
            throw trackerFailed(held ? "hold" : "release", entry, e);
        }
        return true;
    }

    /**
     * The keys to demote from {@code tier} to free {@code needed} bytes, first to demote first (in
     * the policy's order, ties by least recent use), stopping as soon as their sizes add up to at
     * least {@code needed}; all of the tier's segments if they do not. Changes nothing.
     *
     * @param tier   the tier to free bytes on
     * @param needed how many bytes to free; nothing is named when {@code <= 0}
     * @return a new list the caller owns; empty if {@code needed <= 0}
     * @throws IllegalArgumentException if {@code tier} is null
     */
    public List<String> candidatesForDemotion(Tier tier, long needed) {
        requireTier(tier, "tier");
        if (needed <= 0) {
            return new ArrayList<>();
        }
        long stamp = lock.lock(); // not a read: the policy reorganises its queues or index
        try {
            List<String> keys = new ArrayList<>(tiers[tier.ordinal()].expectedCandidates(needed));
            collectCandidates(tier, needed, keys);
            return keys;
        } finally {
            lock.unlock(stamp);
        }
    }

    /**
     * {@link #candidatesForDemotion(Tier, long)}, appending the candidates' handles to {@code out} instead of
     * answering their keys: the same segments in the same order. Why: a caller that keeps its own record per
     * segment reaches it through {@link SegmentHandle#attachment()} rather than by a lookup of each key (a
     * hash, a probe and a cold key compare at 10^5-10^6 segments). A handle may be stale by the time it is
     * used, exactly as a key may have been removed (see Thread safety): the handle-taking methods then
     * answer as for an unknown key.
     *
     * @param tier   the tier to free bytes on
     * @param needed how many bytes to free; nothing is appended when {@code <= 0}
     * @param out    the list to append to; the caller's, not kept
     * @throws IllegalArgumentException if {@code tier} or {@code out} is null
     */
    public void candidatesForDemotion(Tier tier, long needed, List<SegmentHandle> out) {
        requireTier(tier, "tier");
        if (out == null) {
            throw new IllegalArgumentException("out must not be null");
        }
        if (needed <= 0) {
            return;
        }
        long stamp = lock.lock(); // not a read: the policy reorganises its queues or index
        try {
            if (out instanceof ArrayList<SegmentHandle> list) {
                list.ensureCapacity(out.size() + tiers[tier.ordinal()].expectedCandidates(needed));
            }
            collectCandidates(tier, needed, new CandidateList(out, this::lookup));
        } finally {
            lock.unlock(stamp);
        }
    }

    /** Asks the tracker for {@code tier}'s candidates into {@code keys}, under the lock; its failure named as such. */
    private void collectCandidates(Tier tier, long needed, List<String> keys) {
        try {
            tracker.collectCandidates(tier, needed, keys);
        } catch (RuntimeException e) {
            throw new IllegalStateException("demotion policy " + policy.name()
                    + " failed to name candidates on " + tier + " for " + needed + " bytes: " + e, e);
        }
    }

    /**
     * The GPU byte budget given at construction.
     *
     * @return the GPU budget in bytes, {@code >= 0}
     */
    public long gpuBudget() {
        return gpuBudget;
    }

    /**
     * The CPU byte budget given at construction.
     *
     * @return the CPU budget in bytes, {@code >= 0}
     */
    public long cpuBudget() {
        return cpuBudget;
    }

    /**
     * Bytes booked on {@link Tier#GPU}; never above {@link #gpuBudget()}.
     *
     * @return the bytes booked on GPU, in {@code [0, gpuBudget()]}
     */
    public long gpuUsed() {
        return used(Tier.GPU);
    }

    /**
     * Bytes booked on {@link Tier#CPU}; never above {@link #cpuBudget()}.
     *
     * @return the bytes booked on CPU, in {@code [0, cpuBudget()]}
     */
    public long cpuUsed() {
        return used(Tier.CPU);
    }

    /**
     * Bytes booked on {@link Tier#DISK}; never above {@link #diskBudget()}.
     *
     * @return the bytes booked on DISK, in {@code [0, diskBudget()]}
     */
    public long diskUsed() {
        return used(Tier.DISK);
    }

    /**
     * The DISK byte budget given at construction; {@link Long#MAX_VALUE} when unbounded.
     *
     * @return the DISK budget in bytes, {@code >= 0}
     */
    public long diskBudget() {
        return diskBudget;
    }

    /**
     * {@code diskBudget() - diskUsed()}, never negative.
     *
     * @return the bytes still free on DISK, {@code >= 0}
     */
    public long diskFree() {
        return Math.max(0, diskBudget - diskUsed());
    }

    /**
     * {@code gpuBudget() - gpuUsed()}, never negative.
     *
     * @return the bytes still free on GPU, {@code >= 0}
     */
    public long gpuFree() {
        return Math.max(0, gpuBudget - gpuUsed());
    }

    /**
     * {@code cpuBudget() - cpuUsed()}, never negative.
     *
     * @return the bytes still free on CPU, {@code >= 0}
     */
    public long cpuFree() {
        return Math.max(0, cpuBudget - cpuUsed());
    }

    /**
     * The number of registered segments.
     *
     * @return the segment count, {@code >= 0}
     */
    public int numSegments() {
        long stamp = lock.tryOptimisticRead();
        if (stamp != 0L) {
            int size = entries.size();
            if (lock.validate(stamp)) {
                return size;
            }
        }
        stamp = lock.lock();
        try {
            return entries.size();
        } finally {
            lock.unlock(stamp);
        }
    }

    /**
     * A consistent snapshot of every segment, in registration order; unmodifiable. O(n).
     *
     * @return a new unmodifiable list of snapshots; empty when the store is
     */
    public List<SegmentMeta> segments() {
        long stamp = lock.lock();
        try {
            List<SegmentMeta> snapshot = new ArrayList<>(entries.size());
            entries.forEachInRegistrationOrder(entry -> snapshot.add(entry.snapshot()));
            return List.copyOf(snapshot);
        } finally {
            lock.unlock(stamp);
        }
    }

    /** For tests: the segments booked on {@code tier} as the store counts them (to presize candidate lists). */
    int segmentsOn(Tier tier) {
        long stamp = lock.lock();
        try {
            return tiers[tier.ordinal()].segments;
        } finally {
            lock.unlock(stamp);
        }
    }

    /**
     * The policy ordering {@link #candidatesForDemotion}.
     *
     * @return the policy given at construction
     */
    public DemotionPolicy policy() {
        return policy;
    }

    @Override
    public String toString() {
        long stamp = lock.lock();
        try {
            return "TieredStore[segments=" + entries.size()
                    + ", gpu=" + tiers[Tier.GPU.ordinal()].used + "/" + gpuBudget
                    + ", cpu=" + tiers[Tier.CPU.ordinal()].used + "/" + cpuBudget
                    + ", disk=" + tiers[Tier.DISK.ordinal()].used + ", policy=" + policy.name() + "]";
        } finally {
            lock.unlock(stamp);
        }
    }

    private long used(Tier tier) {
        TierState state = tiers[tier.ordinal()];
        long stamp = lock.tryOptimisticRead();
        if (stamp != 0L) {
            long used = state.used;
            if (lock.validate(stamp)) {
                return used;
            }
        }
        stamp = lock.lock();
        try {
            return state.used;
        } finally {
            lock.unlock(stamp);
        }
    }

    /** Which tracker event a move is. */
    private enum MoveKind { DEMOTION, PROMOTION, ROLLBACK }

    /**
     * Moves {@code entry} to {@code to}, which has room, and tells the tracker; returns and
     * remembers the booked transfer (a rollback's return value is unused). If the tracker throws,
     * every change is undone first.
     */
    private TierTransfer move(SegmentEntry entry, Tier to, long newAccessCount, long newLastUse, MoveKind kind) {
        Tier from = entry.tier();
        TierState source = tiers[from.ordinal()];
        TierState target = tiers[to.ordinal()];
        long oldAccessCount = entry.accessCount;
        long oldLastUse = entry.lastUse;
        source.used -= entry.sizeBytes;
        target.used += entry.sizeBytes;
        source.segments--;
        target.segments++;
        entry.placeOn(to);
        entry.accessCount = newAccessCount;
        entry.lastUse = newLastUse;
        try {
            switch (kind) {
                case DEMOTION -> tracker.demoted(entry, from, to);
                case PROMOTION -> tracker.promoted(entry, from, to);
                case ROLLBACK -> tracker.rolledBack(entry, from, to);
            }
        } catch (RuntimeException e) {
            target.used -= entry.sizeBytes;
            source.used += entry.sizeBytes;
            target.segments--;
            source.segments++;
            entry.placeOn(from);
            entry.accessCount = oldAccessCount;
            entry.lastUse = oldLastUse;
            throw trackerFailed(kind.name().toLowerCase(java.util.Locale.ROOT), entry, e);
        }
        if (newLastUse > clock) {
            clock = newLastUse; // a promotion is a use: its tick is taken only once all went well
        }
        TierTransfer transfer = new TierTransfer(entry.key, from, to, entry.sizeBytes, entry.positions);
        entry.bookMove(from, to);
        return transfer;
    }

    /** The one translation of a tracker's failure: names the policy, the event and the segment. */
    private IllegalStateException trackerFailed(String event, SegmentEntry entry, RuntimeException cause) {
        return new IllegalStateException("demotion policy " + policy.name() + " failed on " + event
                + " of segment " + entry.key + " (nothing changed): " + cause.getMessage(), cause);
    }

    /**
     * The entry registered under {@code key}, or null. A null or blank key is never registered, so
     * it is validated only on a miss: the hit path stays free of a scan of the key's characters.
     */
    private SegmentEntry lookup(String key) {
        SegmentEntry entry = entries.get(key);
        if (entry == null) {
            SegmentMeta.requireKey(key, "key");
        }
        return entry;
    }

    /**
     * The entry registered under {@code key}, under the lock, given {@code found}: what {@link EntryTable#get}
     * answered for {@code key} before the lock was taken, racing any writer. A found entry still registered is
     * the answer (the table holds one entry per key, and a racing get only ever answers an entry with an equal
     * key); anything else is looked up again. Why look up before the lock: taking it is an atomic
     * read-modify-write, which on x86 keeps every later load from starting until it completes, so the lookup's
     * chain of cache misses (key, slot, entry) at 10^5-10^6 segments ran strictly after it; before it, they
     * may overlap the previous call's tail. Measured gain within this machine's noise;
     * kept because it costs nothing. A just-built entry cannot be found before it is registered: the table
     * gets it only once its registration has gone through, and the check here runs under the lock.
     */
    private SegmentEntry confirmed(SegmentEntry found, String key) {
        return found != null && found.registered() ? found : lookup(key);
    }

    /** The entry behind {@code handle}, which must be this store's (stale or not). */
    private SegmentEntry own(SegmentHandle handle) {
        if (handle instanceof SegmentEntry entry && entry.owner == this) {
            return entry;
        }
        throw new IllegalArgumentException(handle == null ? "handle must not be null"
                : "handle of segment " + handle.key() + " belongs to another store than " + this);
    }

    private static void requireTier(Tier tier, String argumentName) {
        if (tier == null) {
            throw new IllegalArgumentException(argumentName + " must not be null");
        }
    }
}
