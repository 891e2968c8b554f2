package dev.kvtier.tiering;

import dev.kvtier.ResidentSegment;
import dev.kvtier.exec.PageAllocation;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentHandle;
import dev.kvtier.store.Tier;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;

/**
 * One cached segment's physical side: where its bytes are, their DISK checksum, its pins and whether
 * it is live. The mutable fields are guarded by {@link #lock()}: every operation on the key holds it
 * while it reads or changes them, which is what serializes operations on one key. The tier is not
 * kept here: under the lock, the store's tier is the one holding the bytes.
 *
 * <p>The segment is its own lock: a reentrant, non-fair, uninterruptible exclusive lock built on
 * {@link AbstractQueuedSynchronizer} (state = hold count), with {@link #lock()}, {@link #tryLock()},
 * {@link #unlock()} and {@link #isHeldByCurrentThread()} meaning what {@link java.util.concurrent.locks.ReentrantLock}'s
 * do. A {@code ReentrantLock} field was two more objects per segment (the lock and its synchronizer), two more
 * cache misses on every reference of a large cache (issue 11: the lock frames were ~2% of a trace's playing
 * thread); the synchronizer's fields now sit in the segment itself. The synchronizer's own public methods are
 * not used outside this class.
 */
final class Segment extends AbstractQueuedSynchronizer {
    private static final long serialVersionUID = 1L;
    final String key;
    final PositionRange positions;
    final long sizeBytes;
    /**
     * Its registration in the store, set under {@link #lock()} when registered (null before): the store's calls take
     * it instead of the key, skipping the store's own lookup. Stale once removed. Volatile for the lock-free reads
     * of the prefix lookup.
     */
    volatile SegmentHandle handle;
    PageAllocation placement;
    /**
     * The CRC32C of the segment's bytes as they were put (taken from the caller's memory before the
     * copy, so a copy that silently delivered nothing can never be blessed), or, for adopted device
     * memory, as they first arrived on a host tier. DISK arrivals are checked against it, and DISK
     * bytes are verified against it when they leave.
     */
    int crc32c;
    /** Whether {@link #crc32c} is known yet (false only for adopted memory that never left the GPU). */
    boolean crcKnown;
    /** False until the first bytes are in place, and again once removed or closed. */
    boolean live;
    /** Open pins: while positive the bytes stay where they are (a removal keeps the placement). */
    int pins;
    /**
     * False only for a segment recovered from a persisted DISK directory whose bytes have not yet been
     * checked against {@link #crc32c}: its first use checks them (and drops it when they do not match).
     */
    boolean verified = true;
    /**
     * Whether {@link RoomMaker} has {@linkplain dev.kvtier.store.TieredStore#hold held} this block in the policy
     * for a child on its tier and not yet released it: a child leaving asks the store to release its parent only
     * then (most demoted blocks have a parent that was never held, and the release took the store's lock and a
     * look-up for nothing). Read and written without the lock, as the children counts it goes with.
     */
    volatile boolean heldForChildren;

    /**
     * The block this one continues (a prefix block's parent), or null: a plain segment, or the first
     * block of a chain. Set once, before the segment is published.
     */
    final Segment parent;
    /**
     * A hint, for a block: its child published or found last ({@link PrefixChains} follows it before asking the
     * table; most blocks have one child, the next block of their conversation). Read and written without a lock:
     * the child's key, hash words and parent are final fields (safe to read through a race), and whoever follows the
     * hint checks the hash and, under the child's lock, that it is live, else asks the table. Cleared when that child
     * is dropped, so a removed child is not kept reachable.
     */
    Segment lastChild;
    /** Whether this is a prefix block: it may have a parent and children (counted per tier below). */
    private final boolean block;
    /**
     * A block's 128-bit hash, high and low word (the one its key spells, see {@link BlockKeys}); 0 for a plain segment.
     * The prefix calls find a block by these ({@link SegmentTable#peekBlock}) instead of building and comparing its
     * key: fields of the segment, read on the cache line the look-up reads anyway.
     */
    final long blockHigh;
    final long blockLow;
    /**
     * For a block: how many live children have their bytes on GPU, CPU and DISK. Changed atomically by the
     * children (under their own locks) when they arrive, move or go ({@link #countOn}); read under this segment's
     * lock to decide whether it may leave a tier (see {@link #holdsChildFasterThan}). Always 0 for a plain
     * segment, which never has children. Fields of the segment itself rather than an atomic array beside it: a
     * child's move updates its parent's counts, and the array was two more cold objects to reach per move
     * (issue 11: ~4% of the prefix path).
     */
    private volatile int childrenOnGpu;
    private volatile int childrenOnCpu;
    private volatile int childrenOnDisk;
    // One constant handle per field (a handle taken from an array is not a constant to the JIT, and is slow).
    private static final VarHandle CHILDREN_ON_GPU;
    private static final VarHandle CHILDREN_ON_CPU;
    private static final VarHandle CHILDREN_ON_DISK;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            CHILDREN_ON_GPU = lookup.findVarHandle(Segment.class, "childrenOnGpu", int.class);
            CHILDREN_ON_CPU = lookup.findVarHandle(Segment.class, "childrenOnCpu", int.class);
            CHILDREN_ON_DISK = lookup.findVarHandle(Segment.class, "childrenOnDisk", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Guarded by {@link #lock()}: the tier this block is counted on in its parent's children counts; null when not counted. */
    Tier countedOn;

    /** A plain segment of the segment API: no parent, no children. */
    Segment(String key, PositionRange positions, long sizeBytes) {
        this(key, positions, sizeBytes, null, false, 0, 0);
    }

    /**
     * A prefix block of hash {@code high}, {@code low} continuing {@code parent} (null: the first of its chain),
     * keyed {@link BlockKeys#of}{@code (high, low)}.
     */
    static Segment block(long high, long low, PositionRange positions, long sizeBytes, Segment parent) {
        return new Segment(BlockKeys.of(high, low), positions, sizeBytes, parent, true, high, low);
    }

    private Segment(String key, PositionRange positions, long sizeBytes, Segment parent, boolean block, long blockHigh,
                    long blockLow) {
        this.key = key;
        this.positions = positions;
        this.sizeBytes = sizeBytes;
        this.parent = parent;
        this.block = block;
        this.blockHigh = blockHigh;
        this.blockLow = blockLow;
    }

    /** Whether this is the prefix block of hash {@code high}, {@code low}. */
    boolean isBlock(long high, long low) {
        return block && blockLow == low && blockHigh == high;
    }

    /** Whether this is a prefix block (may have a parent and children). */
    boolean isBlock() {
        return block;
    }


    /**
     * The prefix-eviction constraint: whether a child of this block has its bytes on a tier faster than
     * {@code destination}, in which case this block must not move there (a child is never faster than its
     * parent; a GPU block whose child is on CPU may go to CPU but not straight to DISK). Call with this
     * segment's lock held.
     */
    boolean holdsChildFasterThan(Tier destination) {
        if (!block) {
            return false;
        }
        return switch (destination) {
            case GPU -> false; // no tier is faster
            case CPU -> childrenOnGpu > 0;
            // One test, not two: the counts are never negative, so their OR is positive exactly when one is. A second
            // branch first taken when a run's CPU tier fills (a parent leaving CPU for DISK while a child is on CPU)
            // threw away the compiled room making it was inlined into ("unstable_if", JFR jdk.Deoptimization).
            case DISK -> (childrenOnGpu | childrenOnCpu) > 0;
        };
    }

    /** Live children of this block, on any tier. */
    int liveChildren() {
        return block ? childrenOnGpu + childrenOnCpu + childrenOnDisk : 0;
    }

    /**
     * Counts this block on {@code tier} in its parent's children counts (moving it from where it was
     * counted). Counts the new tier before uncounting the old one, so a reader never sees the child
     * nowhere. Call with this segment's lock held; nothing for a segment without parent.
     */
    void countOn(Tier tier) {
        if (parent == null || tier == countedOn) {
            return;
        }
        if (tier != null) {
            parent.addChildren(tier, 1);
        }
        if (countedOn != null) {
            parent.addChildren(countedOn, -1);
        }
        countedOn = tier;
    }

    private void addChildren(Tier tier, int delta) {
        // Cast to the handle's exact type (int): a discarded result would need an adapted invocation.
        int before = switch (tier) {
            case GPU -> (int) CHILDREN_ON_GPU.getAndAdd(this, delta);
            case CPU -> (int) CHILDREN_ON_CPU.getAndAdd(this, delta);
            case DISK -> (int) CHILDREN_ON_DISK.getAndAdd(this, delta);
        };
        assert before + delta >= 0 : "children of " + key + " on " + tier + " below 0";
    }

    /**
     * The segment as handed to the runtime, on {@code tier} (where its placement is), found by the call on
     * {@code foundOn} ({@code tier} for a hit, the tier it was promoted from otherwise).
     */
    ResidentSegment resident(Tier tier, Tier foundOn) {
        return new ResidentSegment(key, positions, tier, foundOn, sizeBytes, placement.runs());
    }

    /** Takes this segment's lock, waiting (uninterruptibly) while another thread holds it; reentrant. */
    void lock() {
        if (!tryLock()) {
            acquire(1);
        }
    }

    /** Takes this segment's lock if it is free or already this thread's; never waits. */
    boolean tryLock() {
        Thread current = Thread.currentThread();
        if (compareAndSetState(0, 1)) {
            setExclusiveOwnerThread(current);
            return true;
        }
        if (getExclusiveOwnerThread() == current) {
            int holds = getState() + 1;
            if (holds < 0) {
                throw new Error("maximum lock count exceeded on segment " + key);
            }
            setState(holds);
            return true;
        }
        return false;
    }

    /**
     * Gives back one hold of this segment's lock.
     *
     * @throws IllegalMonitorStateException if this thread does not hold it
     */
    void unlock() {
        release(1);
    }

    /** Whether this thread holds this segment's lock. */
    boolean isHeldByCurrentThread() {
        return getExclusiveOwnerThread() == Thread.currentThread();
    }

    /** The queued path of {@link #lock()}: the lock is free (holds of this thread went through {@link #tryLock()}). */
    @Override
    protected boolean tryAcquire(int acquires) {
        if (getState() == 0 && compareAndSetState(0, acquires)) {
            setExclusiveOwnerThread(Thread.currentThread());
            return true;
        }
        return false;
    }

    @Override
    protected boolean tryRelease(int releases) {
        if (getExclusiveOwnerThread() != Thread.currentThread()) {
            throw new IllegalMonitorStateException("segment " + key + " is not locked by this thread");
        }
        int holds = getState() - releases;
        boolean free = holds == 0;
        if (free) {
            setExclusiveOwnerThread(null);
        }
        setState(holds);
        return free;
    }

    @Override
    protected boolean isHeldExclusively() {
        return getExclusiveOwnerThread() == Thread.currentThread();
    }

    /** The key, as a segment names itself in messages (not the synchronizer's state). */
    @Override
    public String toString() {
        return "segment " + key;
    }
}
