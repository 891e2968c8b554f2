package dev.kvtier.store;

import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The {@link TierIndex} behind the built-in policies: the O(1) LFU scheme (Shah, Mitra and Matani
 * 2010) of DESIGN.md. Segments sit in buckets by access count (one bucket for plain LRU), buckets
 * in a linked list of ascending count, each bucket in ascending last use.
 *
 * <p>Why a bucket has two parts: registering, touching and promoting stamp a segment with the
 * store's newest tick, so it can be appended to the tail of its bucket's linked list and that list
 * stays sorted by last use at O(1) cost. Demotion and rollback keep a segment's older tick (they
 * are not uses), so a segment arriving that way may belong in the middle of the list; those go
 * into a tree sorted by last use instead, and reading candidates merges the two sorted sequences.
 *
 * <p>Why buckets are found through their neighbours and die lazily: a touch moves a segment from
 * bucket c to bucket c+1, which is the next bucket in the list or a new one right after it, so no
 * search is needed (a promotion likewise starts from the bucket the segment had when it last left
 * this tier); and with few segments per count, freeing an emptied bucket at once and creating it
 * again moments later made the bucket directory (a tree) the cost of every touch. Emptied buckets
 * therefore stay in place until candidates walk past them or they outnumber the live ones by more
 * than a slack, so their cleanup is amortised O(1). The directory is consulted only when neither
 * hint is in or beside the right place (register, a first visit to a tier): O(log b) for b buckets.
 */
final class UsageBucketIndex implements TierIndex {

    /** The segments of one tier with one access count (or all of them, for plain LRU). */
    static final class Bucket {
        final UsageBucketIndex owner;
        final long accessCount;
        Bucket lower;
        Bucket higher;
        /** False once swept out of the list and the directory. */
        boolean linked = true;
        /** Ascending last use; every entry here is newer than the one before it. */
        SegmentEntry head;
        SegmentEntry tail;
        /** Entries that arrived older than {@link #tail}; created on first need. */
        TreeSet<SegmentEntry> outOfOrder;
        long size;

        Bucket(UsageBucketIndex owner, long accessCount) {
            this.owner = owner;
            this.accessCount = accessCount;
        }
    }

    /**
     * Empty buckets tolerated beyond the number of live ones before a sweep. Large enough that a
     * tier visited only in passing (segments demoted and promoted straight back, at many different
     * counts) does not free and re-create a bucket per visit; small enough to bound the garbage.
     */
    static final int DEFAULT_EMPTY_BUCKET_SLACK = 1_024;
    private static final Comparator<SegmentEntry> BY_LAST_USE = Comparator.comparingLong(e -> e.lastUse);

    private final boolean bucketByAccessCount;
    private final int emptyBucketSlack;
    /** Every linked bucket by count, for arrivals that have no neighbouring hint. */
    private final TreeMap<Long, Bucket> directory = new TreeMap<>();
    private Bucket lowest;
    private int emptyBuckets;
    private int liveBuckets;

    /**
     * @param bucketByAccessCount true for least-accessed-first, false for plain least-recently-used
     * @param emptyBucketSlack    see {@link #DEFAULT_EMPTY_BUCKET_SLACK}; tests pass a tiny one so
     *                            that sweeps happen within short histories
     */
    UsageBucketIndex(boolean bucketByAccessCount, int emptyBucketSlack) {
        this.bucketByAccessCount = bucketByAccessCount;
        this.emptyBucketSlack = emptyBucketSlack;
    }

    @Override
    public void add(SegmentEntry entry) {
        long count = bucketByAccessCount ? entry.accessCount : 0;
        Bucket lastBucket = entry.bucket;
        Bucket bucket = bucketFor(count, lastBucket, entry.formerBucket);
        if (lastBucket != null && lastBucket.owner != this) {
            entry.formerBucket = lastBucket; // where to look first when it moves back to that tier
        }
        entry.bucket = bucket;
        if (bucket.size++ == 0) {
            emptyBuckets--;
            liveBuckets++;
        }
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

    /**
     * The linked bucket for {@code count}, created (empty) if needed. The entry's last bucket, or
     * else the one it had before it last changed tier, is a hint: a touch or a promotion usually
     * lands in that bucket, a neighbour of it, or a new bucket right beside it, so no search is
     * needed. Hints from other indexes or swept buckets are ignored.
     */
    private Bucket bucketFor(long count, Bucket lastBucket, Bucket formerBucket) {
        Bucket near = lastBucket != null && lastBucket.owner == this ? lastBucket
                : formerBucket != null && formerBucket.owner == this ? formerBucket : null;
        if (near != null && near.linked) {
            if (near.accessCount == count) {
                return near;
            }
            if (near.accessCount < count) {
                Bucket higher = near.higher;
                if (higher != null && higher.accessCount == count) {
                    return higher;
                }
                if (higher == null || count < higher.accessCount) {
                    return link(new Bucket(this, count), near);
                }
            }
        }
        Bucket existing = directory.get(count);
        if (existing != null) {
            return existing;
        }
        Map.Entry<Long, Bucket> floor = directory.floorEntry(count);
        return link(new Bucket(this, count), floor == null ? null : floor.getValue());
    }

    /** Links the new empty {@code bucket} right after {@code predecessor} (first if null). */
    private Bucket link(Bucket bucket, Bucket predecessor) {
        Bucket successor = predecessor == null ? lowest : predecessor.higher;
        bucket.lower = predecessor;
        bucket.higher = successor;
        if (predecessor == null) {
            lowest = bucket;
        } else {
            predecessor.higher = bucket;
        }
        if (successor != null) {
            successor.lower = bucket;
        }
        directory.put(bucket.accessCount, bucket);
        emptyBuckets++;
        return bucket;
    }

    private void unlink(Bucket bucket) {
        if (bucket.lower == null) {
            lowest = bucket.higher;
        } else {
            bucket.lower.higher = bucket.higher;
        }
        if (bucket.higher != null) {
            bucket.higher.lower = bucket.lower;
        }
        bucket.linked = false;
        directory.remove(bucket.accessCount);
        emptyBuckets--;
    }

    @Override
    public boolean remove(SegmentEntry entry) {
        Bucket bucket = entry.bucket;
        if (bucket == null || bucket.owner != this || !bucket.linked || bucket.size == 0) {
            return false;
        }
        if (entry.outOfOrder) {
            if (!bucket.outOfOrder.remove(entry)) {
                return false;
            }
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
        // entry.bucket stays as the hint for the entry's next add.
        if (--bucket.size == 0) {
            liveBuckets--;
            emptyBuckets++;
            if (emptyBuckets > liveBuckets + emptyBucketSlack) {
                sweepEmptyBuckets();
            }
        }
        return true;
    }

    private void sweepEmptyBuckets() {
        for (Bucket bucket = lowest; bucket != null; ) {
            Bucket higher = bucket.higher;
            if (bucket.size == 0) {
                unlink(bucket);
            }
            bucket = higher;
        }
    }

    @Override
    public void collectCandidates(long needed, List<String> keys) {
        // Counting down from a positive value by non-negative sizes cannot overflow.
        long stillNeeded = needed;
        for (Bucket bucket = lowest; bucket != null; ) {
            Bucket higher = bucket.higher;
            if (bucket.size == 0) {
                unlink(bucket); // pays for the walk past it, once
                bucket = higher;
                continue;
            }
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
                keys.add(next.key);
                stillNeeded -= next.sizeBytes;
                if (stillNeeded <= 0) {
                    return;
                }
            }
            bucket = higher;
        }
    }
}
