package dev.kvtier.store;

import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The {@link TierIndex} behind the built-in policies: the O(1) LFU scheme (Shah, Mitra and Matani
 * 2010) of DESIGN.md. Segments sit in buckets by access count (one bucket for plain LRU), buckets in
 * ascending count, each bucket in ascending last use.
 *
 * <p>Why a bucket has two parts: registering, touching and promoting stamp a segment with the
 * store's newest tick, so it can be appended to the tail of its bucket's linked list and that list
 * stays sorted by last use at O(1) cost. Demotion and rollback keep a segment's older tick (they
 * are not uses), so a segment arriving that way may belong in the middle of the list; those few go
 * into a small tree sorted by last use instead, and reading candidates merges the two sorted
 * sequences. So touch, promote and register cost O(1) plus a lookup among the (few, distinct)
 * access counts; demote and rollback cost O(log m) for the m out-of-order segments of the target
 * bucket; k candidates cost O(k + log m).
 */
final class UsageBucketIndex implements TierIndex {

    /** The segments of one tier with one access count (or all of them, for plain LRU). */
    static final class Bucket {
        final long accessCount;
        /** Ascending last use; every entry here is newer than the one before it. */
        SegmentEntry head;
        SegmentEntry tail;
        /** Entries that arrived older than {@link #tail}; created on first need. */
        TreeSet<SegmentEntry> outOfOrder;
        long size;

        Bucket(long accessCount) {
            this.accessCount = accessCount;
        }
    }

    private static final Comparator<SegmentEntry> BY_LAST_USE = Comparator.comparingLong(e -> e.lastUse);

    private final boolean bucketByAccessCount;
    /** Non-empty buckets only, so reading candidates never walks empty ones. */
    private final TreeMap<Long, Bucket> buckets = new TreeMap<>();

    /**
     * @param bucketByAccessCount true for least-accessed-first, false for plain least-recently-used
     */
    UsageBucketIndex(boolean bucketByAccessCount) {
        this.bucketByAccessCount = bucketByAccessCount;
    }

    @Override
    public void add(SegmentEntry entry) {
        long count = bucketByAccessCount ? entry.meta.accessCount() : 0;
        Bucket bucket = buckets.get(count);
        if (bucket == null) {
            bucket = new Bucket(count);
            buckets.put(count, bucket);
        }
        entry.bucket = bucket;
        bucket.size++;
        if (bucket.tail == null || bucket.tail.lastUse < entry.lastUse) {
            entry.outOfOrder = false;
            entry.previous = bucket.tail;
            entry.next = null;
            if (bucket.tail == null) {
                bucket.head = entry;
            } else {
                bucket.tail.next = entry;
            }
            bucket.tail = entry;
        } else {
            if (bucket.outOfOrder == null) {
                bucket.outOfOrder = new TreeSet<>(BY_LAST_USE);
            }
            entry.outOfOrder = true;
            bucket.outOfOrder.add(entry);
        }
    }

    @Override
    public boolean remove(SegmentEntry entry) {
        Bucket bucket = entry.bucket;
        if (bucket == null) {
            return false;
        }
        if (entry.outOfOrder) {
            bucket.outOfOrder.remove(entry);
        } else {
            if (entry.previous == null) {
                bucket.head = entry.next;
            } else {
                entry.previous.next = entry.next;
            }
            if (entry.next == null) {
                bucket.tail = entry.previous;
            } else {
                entry.next.previous = entry.previous;
            }
            entry.previous = null;
            entry.next = null;
        }
        entry.bucket = null;
        if (--bucket.size == 0) {
            buckets.remove(bucket.accessCount);
        }
        return true;
    }

    @Override
    public void collectCandidates(long needed, List<String> keys) {
        // Counting down from a positive value by non-negative sizes cannot overflow.
        long stillNeeded = needed;
        for (Bucket bucket : buckets.values()) {
            SegmentEntry inList = bucket.head;
            Iterator<SegmentEntry> late = bucket.outOfOrder == null
                    ? Collections.emptyIterator() : bucket.outOfOrder.iterator();
            SegmentEntry inTree = late.hasNext() ? late.next() : null;
            while (inList != null || inTree != null) {
                SegmentEntry next;
                if (inTree == null || (inList != null && inList.lastUse < inTree.lastUse)) {
                    next = inList;
                    inList = inList.next;
                } else {
                    next = inTree;
                    inTree = late.hasNext() ? late.next() : null;
                }
                keys.add(next.meta.key());
                stillNeeded -= next.meta.sizeBytes();
                if (stillNeeded <= 0) {
                    return;
                }
            }
        }
    }
}
