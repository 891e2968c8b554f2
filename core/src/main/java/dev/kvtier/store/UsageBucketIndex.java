package dev.kvtier.store;

import java.util.Comparator;
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
 * <p>Why a touch does not move a segment (lazy repair): see {@link #used}. Both parts are sorted by
 * the last use each member was <em>filed</em> under ({@link SegmentEntry#filedLastUse}); a listed
 * member touched since is stale and is re-filed when {@link #collectCandidates} reaches it.
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
    /** Trees are keyed by what their members were filed under (a use is reported after the change). */
    private static final Comparator<SegmentEntry> BY_LAST_USE = Comparator.comparingLong(e -> e.filedLastUse);

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
        // The list is sorted by the last use each member had when it was filed (a member touched
        // since then keeps its old place until candidates are read), so compare with that.
        if (bucket.tail == null || bucket.tail.filedLastUse < entry.lastUse) {
            entry.outOfOrder = false;
            entry.filedLastUse = entry.lastUse;
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
            entry.filedLastUse = entry.lastUse;
            bucket.outOfOrder.add(entry);
        }
    }

    /**
     * A use only raises a segment's key (access count and last use both grow), so a listed entry
     * may stay where it is: every entry's current key is then at least the key it was filed under,
     * and {@link #collectCandidates} re-files the stale ones it meets before it relies on their
     * place (the lazy priority-queue argument: the smallest filed key whose entry is not stale is
     * the smallest current key). This is what makes a touch cost no index writes at all: unlinking
     * from a recency list wrote two random neighbours, ~240 ns of a ~520 ns touch at 10^6
     * segments. An entry in a bucket's tree is re-filed at once (rare: it arrived by demotion).
     */
    @Override
    public boolean used(SegmentEntry entry) {
        if (!entry.outOfOrder) {
            return true; // the hot path reads nothing but the entry (no check of its bucket either)
        }
        Bucket bucket = entry.bucket;
        if (bucket == null || bucket.owner != this || !bucket.linked || bucket.size == 0) {
            return false;
        }
        if (!detach(entry, bucket)) {
            return false;
        }
        add(entry);
        return true;
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
        // A new segment (count 0, or its registered count) usually joins the lowest bucket: no search.
        Bucket first = lowest;
        if (first == null || count < first.accessCount) {
            return link(new Bucket(this, count), null);
        }
        if (first.accessCount == count) {
            return first;
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
        if (!detach(entry, bucket)) {
            return false;
        }
        if (bucket.size == 0 && emptyBuckets > liveBuckets + emptyBucketSlack) {
            sweepEmptyBuckets();
        }
        return true;
    }

    /** Takes {@code entry} out of {@code bucket}, which holds it; never sweeps (safe mid-walk). */
    private boolean detach(SegmentEntry entry, Bucket bucket) {
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
            if (bucket.size == 0) {
                Bucket higher = bucket.higher;
                unlink(bucket); // pays for the walk past it, once
                bucket = higher;
                continue;
            }
            // The tree is walked with higher() rather than an iterator: re-filing a stale list
            // entry may add to this very bucket's tree (plain LRU has one bucket).
            TreeSet<SegmentEntry> tree = bucket.outOfOrder;
            SegmentEntry inList = bucket.head;
            SegmentEntry inTree = tree == null || tree.isEmpty() ? null : tree.first();
            while (inList != null || inTree != null) {
                if (inList != null && inList.lastUse != inList.filedLastUse) {
                    // Used since it was filed: its key grew, so it belongs further on. Re-file it
                    // (the list after it is still sorted) and look again.
                    SegmentEntry stale = inList;
                    inList = stale.next;
                    detach(stale, bucket);
                    add(stale);
                    if (stale.bucket == bucket) { // plain LRU: back into this bucket, further on
                        if (stale.outOfOrder) {
                            tree = bucket.outOfOrder;
                            if (inTree == null || stale.lastUse < inTree.filedLastUse) {
                                inTree = stale;
                            }
                        } else if (inList == null) {
                            inList = stale; // appended as the tail, after everything walked
                        }
                    }
                    continue;
                }
                SegmentEntry next;
                if (inTree == null || (inList != null && inList.lastUse < inTree.filedLastUse)) {
                    next = inList;
                    inList = inList.next;
                } else {
                    next = inTree;
                    inTree = tree.higher(inTree);
                }
                keys.add(next.key);
                stillNeeded -= next.sizeBytes;
                if (stillNeeded <= 0) {
                    return;
                }
            }
            // Read only now: re-filing may have linked a new bucket right after this one.
            bucket = bucket.higher;
        }
    }
}
