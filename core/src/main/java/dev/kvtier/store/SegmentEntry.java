package dev.kvtier.store;

import dev.kvtier.store.policy.PolicyNode;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The store's mutable record of one registered segment; written under the store's lock (but for its usage,
 * which a touch may also raise without it: {@link #usedWithoutLock}), and
 * read either under it or by the store's optimistic reads, which discard what they read if a change
 * ran meanwhile (so a torn or stale read is never used). The tracker
 * is told of every change of its usage ({@link #accessCount}, {@link #lastUse}) or tier after
 * the change; the record fields belong to the built-in order index of each tier. It is also the
 * {@link SegmentHandle} the store hands out for this registration: stale once {@link #registration}
 * is {@link #REMOVED}, refused by any store but {@link #owner}.
 *
 * <p>Why no cached snapshot and no references beyond the index links: at 10^6 segments every op
 * is bound by cache misses on randomly placed entries. A snapshot cached in the entry is one more
 * random object to read on {@code get} (a fresh one is a young, cache-hot allocation), and keeping
 * the tier and the latest move as bytes makes the entry smaller and holds no transfer alive.
 */
final class SegmentEntry extends PolicyNode implements DemotionPolicy.Segment, SegmentHandle {
    private static final Tier[] TIERS = Tier.values();
    /** {@link #lastMoveFrom} when no move is booked (or the latest was rolled back). */
    private static final byte NO_MOVE = -1;

    final PositionRange positions;
    long accessCount;
    long lastUse;
    private byte tierOrdinal;
    /** The tiers of the latest move booked for this segment and not rolled back, or {@link #NO_MOVE}. */
    private byte lastMoveFrom = NO_MOVE;
    private byte lastMoveTo = NO_MOVE;

    // The built-in order index's records on each tier (UsageBucketIndex), or null.
    private UsageBucketIndex.Record gpuRecord;
    private UsageBucketIndex.Record cpuRecord;
    private UsageBucketIndex.Record diskRecord;
    /**
     * Bit t set: its record on the tier with ordinal t is filed in its bucket's tree (out of recency
     * order). A copy of that record's flag, so a touch need not read the record (a cache miss at
     * 10^6 segments) to learn that it may stay where it is.
     */
    private byte outOfOrderRecords;

    /** The tracker's own node for this segment (DemotionPolicy.Segment). */
    private Object policyNode;

    /**
     * Its place in registration order (EntryTable), for TieredStore.segments(); {@link #REMOVED} once it
     * left the table, which makes it, as a {@link SegmentHandle}, stale. An int (renumbered when the
     * counter would wrap) so that, with {@link #owner} and {@link #attachment}, the entry stays within 104 bytes (96 before the attachment).
     */
    int registration;
    /** The store this entry belongs to: a {@link SegmentHandle} from another store is refused. */
    final TieredStore owner;
    /**
     * The registering caller's object for this segment (see {@link SegmentHandle#attachment()}), or null; set
     * before the entry is published (under the store's lock), never changed.
     */
    Object attachment;

    /** {@link #registration} of an entry removed from its store. */
    static final int REMOVED = -1;
    private static final VarHandle ACCESS_COUNT;
    private static final VarHandle LAST_USE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            ACCESS_COUNT = lookup.findVarHandle(SegmentEntry.class, "accessCount", long.class);
            LAST_USE = lookup.findVarHandle(SegmentEntry.class, "lastUse", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    SegmentEntry(TieredStore owner, SegmentMeta meta, Tier tier, long lastUse) {
        super(meta.key(), meta.sizeBytes());
        this.owner = owner;
        this.positions = meta.positions();
        this.tierOrdinal = (byte) tier.ordinal();
        this.accessCount = meta.accessCount();
        this.lastUse = lastUse;
    }

    /**
     * Sets the usage for a touch taken without the store's lock (TieredStore's touchedWithoutLock): opaque writes,
     * so that each long is written whole whatever it races with; a racing writer's value may win.
     */
    void usedWithoutLock(long newAccessCount, long newLastUse) {
        ACCESS_COUNT.setOpaque(this, newAccessCount);
        LAST_USE.setOpaque(this, newLastUse);
    }

    /** Whether it is still registered (read under the store's lock, or optimistically and validated). */
    boolean registered() {
        return registration != REMOVED;
    }

    /** The tier the segment is booked on. */
    Tier tier() {
        return TIERS[tierOrdinal];
    }

    /** The ordinal of the tier the segment is booked on. */
    int tierOrdinal() {
        return tierOrdinal;
    }

    /** Its record in the index of the tier with {@code ordinal}, or null. */
    UsageBucketIndex.Record record(int ordinal) {
        return switch (ordinal) {
            case 0 -> gpuRecord;
            case 1 -> cpuRecord;
            default -> diskRecord;
        };
    }

    void record(int ordinal, UsageBucketIndex.Record record) {
        switch (ordinal) {
            case 0 -> gpuRecord = record;
            case 1 -> cpuRecord = record;
            default -> diskRecord = record;
        }
        if (record == null) {
            recordOutOfOrder(ordinal, false);
        }
    }

    /**
     * Whether a use of it on the tier with {@code ordinal} may leave the built-in order index as it is, so that a touch
     * needs no lock (UsageBucketIndex#usedConcurrently, which is this): it has a record there, and that record is in
     * its bucket's list (a record in a bucket's tree, keyed by filed last use, must be re-filed under the lock). Reads
     * this entry only, racily (see there why that is safe).
     */
    boolean takesUseInPlace(int ordinal) {
        return record(ordinal) != null && !recordOutOfOrder(ordinal);
    }

    /** Whether its record on the tier with {@code ordinal} is filed out of recency order (see {@link #outOfOrderRecords}). */
    boolean recordOutOfOrder(int ordinal) {
        return (outOfOrderRecords & (1 << ordinal)) != 0;
    }

    void recordOutOfOrder(int ordinal, boolean outOfOrder) {
        outOfOrderRecords = (byte) (outOfOrder ? outOfOrderRecords | (1 << ordinal) : outOfOrderRecords & ~(1 << ordinal));
    }

    /** Puts the segment on {@code newTier}. */
    void placeOn(Tier newTier) {
        tierOrdinal = (byte) newTier.ordinal();
    }

    /** Remembers the move from {@code from} to {@code to}, just booked, as this segment's latest. */
    void bookMove(Tier from, Tier to) {
        lastMoveFrom = (byte) from.ordinal();
        lastMoveTo = (byte) to.ordinal();
    }

    /** Forgets the latest move (it was rolled back). */
    void clearMove() {
        lastMoveFrom = NO_MOVE;
        lastMoveTo = NO_MOVE;
    }

    /**
     * Whether {@code transfer} equals the latest move booked for this segment and not rolled back:
     * the same answer as comparing it with the {@link TierTransfer} that was returned, which was
     * built from this entry's key, size and positions and the two tiers kept here.
     */
    boolean isLatestMove(TierTransfer transfer) {
        return lastMoveFrom != NO_MOVE
                && lastMoveFrom == transfer.from().ordinal()
                && lastMoveTo == transfer.to().ordinal()
                && sizeBytes == transfer.sizeBytes()
                && key.equals(transfer.key())
                && positions.equals(transfer.positions());
    }

    /** An immutable snapshot of the current state. */
    SegmentMeta snapshot() {
        return SegmentMeta.placed(key, positions, sizeBytes, tier(), accessCount);
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public Object attachment() {
        return attachment;
    }

    @Override
    public long sizeBytes() {
        return sizeBytes;
    }

    @Override
    public long accessCount() {
        return accessCount;
    }

    @Override
    public PositionRange positions() {
        return positions;
    }

    @Override
    public long lastUse() {
        return lastUse;
    }

    @Override
    public Object policyNode() {
        return policyNode;
    }

    @Override
    public void policyNode(Object node) {
        policyNode = node;
    }

    @Override
    public String toString() {
        return "SegmentEntry[" + key + ", tier=" + tier() + ", accessCount=" + accessCount + ", lastUse=" + lastUse + "]";
    }
}
