package dev.kvtier.store;

import dev.kvtier.store.policy.CandidateList;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The {@link TierIndex} behind the built-in order policies: the O(1) LFU scheme (Shah, Mitra and
 * Matani 2010) of DESIGN.md, with lazy repair. One per tier. Segments are filed as {@link Record}s
 * in buckets by access count (one bucket for plain LRU), buckets in a linked list of ascending
 * count, each bucket in ascending last use. Not thread-safe: used under the store's lock.
 *
 * <p><b>Lazy repair.</b> A record keeps the key (access count, last use) it was filed under. A
 * segment's key only grows while it stays on a tier (a touch raises both parts), so the index lets
 * records go stale instead of moving them: every segment on the tier has a record whose filed key
 * is at most its current key, and {@link #collectCandidates} re-files the stale records it meets
 * before relying on their place. That is the lazy priority-queue argument: the smallest filed key
 * whose record is not stale is the smallest current key. Likewise a segment that leaves the tier
 * leaves its record behind (the walk drops records of segments no longer on the tier), and a
 * segment that comes back finds its old record, still filed at or below its key, and needs no
 * filing at all. So a touch, a demotion and a promotion cost no index writes in the common case:
 * unlinking from a recency list wrote two random neighbours, ~240 ns of a ~520 ns touch at 10^6
 * segments, and the moves of demote+promote paid that twice plus bucket look-ups. The price is paid
 * by candidate queries: each stale or departed record met costs one re-filing or one unlink,
 * at most one per earlier touch or move (amortised O(1), O(log m) for a re-filing into a tree).
 * Removal from the store drops a segment's records at once, so at most one record per segment and
 * tier exists; only a record that is its bucket's list tail stays behind, dead (no segment, not
 * counted), for the next registration filed in that bucket to take over (see {@link #forget} why):
 * at most one per bucket.
 *
 * <p>Why a bucket has two parts: a use stamps a segment with the store's newest tick, so a record
 * filed under it can be appended to the tail of its bucket's linked list and that list stays sorted
 * by filed last use at O(1) cost. Demotion, rollback and re-filing keep older ticks, so such a
 * record may belong in the middle of the list; those go into a tree sorted by filed last use, and
 * reading candidates merges the two sorted sequences.
 *
 * <p>Why buckets are found through their neighbours and die lazily: a re-filed record usually lands
 * in its old bucket's neighbour or a new bucket right after it, so no search is needed; and with
 * few segments per count, freeing an emptied bucket at once and creating it again moments later
 * made the bucket directory (a tree) the cost of every touch. Emptied buckets therefore stay in
 * place until candidates walk past them or they outnumber the live ones by more than a slack, so
 * their cleanup is amortised O(1). The directory is consulted only when no hint fits: O(log b) for
 * b buckets.
 */
final class UsageBucketIndex implements TierIndex {

    /** One filing of a segment on this tier. */
    static final class Record {
        /**
         * Its segment; null for a dead tail: the record of a segment removed from the store while it was its
         * bucket's list tail, left there for the next registration to take over (see {@link #forget}).
         */
        SegmentEntry entry;
        Record previous;
        Record next;
        /** The bucket holding it; after it is detached, the hint for where to file it next. */
        Bucket bucket;
        long filedCount;
        long filedLastUse;
        /** In its bucket's tree rather than its list (copied into the entry: SegmentEntry#recordOutOfOrder). */
        boolean outOfOrder;

        Record(SegmentEntry entry) {
            this.entry = entry;
        }
    }

    /** The records of one tier with one access count (or all of them, for plain LRU). */
    static final class Bucket {
        final UsageBucketIndex owner;
        final long accessCount;
        Bucket lower;
        Bucket higher;
        /** False once swept out of the list and the directory. */
        boolean linked = true;
        /** Ascending filed last use; every record here was filed later than the one before it. */
        Record head;
        Record tail;
        /** Records filed older than {@link #tail}; created on first need. */
        RecordTree outOfOrder;
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

    private final boolean bucketByAccessCount;
    private final int emptyBucketSlack;
    private final int tierOrdinal;
    /** Every linked bucket by count, for filings that have no neighbouring hint. */
    private final TreeMap<Long, Bucket> directory = new TreeMap<>();
    private Bucket lowest;
    /** Records filed in the buckets (list or tree): bounds the re-filings of one query (collectCandidates). */
    private long filedRecords;
    private int emptyBuckets;
    private int liveBuckets;

    /**
     * @param bucketByAccessCount true for least-accessed-first, false for plain least-recently-used
     * @param emptyBucketSlack    see {@link #DEFAULT_EMPTY_BUCKET_SLACK}; tests pass a tiny one so
     *                            that sweeps happen within short histories
     * @param tier                the tier this index orders
     */
    UsageBucketIndex(boolean bucketByAccessCount, int emptyBucketSlack, Tier tier) {
        this.bucketByAccessCount = bucketByAccessCount;
        this.emptyBucketSlack = emptyBucketSlack;
        this.tierOrdinal = tier.ordinal();
    }

    @Override
    public void arrived(SegmentEntry entry) {
        if (entry.record(tierOrdinal) != null) {
            // Its record from an earlier stay is still filed here, at or below its present key, so
            // it is a valid lower bound, repaired when a walk reaches it; not even read (at 10^6
            // segments reading it would be one more cache miss per move). Why "at or below": the
            // key (access count, last use) never decreases but for a rollback of a promotion, which
            // returns the count to what it was before that promotion (with the later last use) and
            // the segment to the tier it came from; a record is only ever filed under the key the
            // segment had then, and every key it had on any tier before is at most that. The
            // property tests check the whole order against a model after every step, rollbacks
            // included.
            return;
        }
        long count = entry.accessCount;
        long lastUse = entry.lastUse;
        Bucket bucket = bucketFor(bucketByAccessCount ? count : 0, null);
        Record dead = bucket.tail;
        if (dead != null && dead.entry == null && appendsAfter(dead.previous, lastUse)) {
            // A dead tail where the new record would be appended anyway: it becomes that record, in place.
            dead.entry = entry;
            entry.record(tierOrdinal, dead);
            dead.filedCount = count;
            dead.filedLastUse = lastUse;
            counted(bucket);
            return;
        }
        Record record = new Record(entry);
        entry.record(tierOrdinal, record);
        fileIn(record, bucket, count, lastUse);
    }

    /**
     * Whether a move of {@code entry} from the tier with ordinal {@code from} to the one with {@code to} leaves both
     * tiers' indexes as they are: it has a record on both ({@link #left} then only confirms the one it leaves,
     * {@link #arrived} keeps the one it finds). Asked by the bucket orders' tracker before it tells the indexes of a move
     * (OrderTracker#move), so a segment going back and forth between two tiers reads no index.
     */
    static boolean movesInPlace(SegmentEntry entry, int from, int to) {
        return entry.record(from) != null && entry.record(to) != null;
    }

    @Override
    public boolean left(SegmentEntry entry) {
        return entry.record(tierOrdinal) != null; // the record stays; walks drop it
    }

    /** A use raises the key: a listed record may stay (see the class comment); a tree's may not. */
    @Override
    public boolean used(SegmentEntry entry) {
        Record record = entry.record(tierOrdinal);
        if (record == null) {
            return false;
        }
        if (entry.recordOutOfOrder(tierOrdinal)) { // the entry's copy of record.outOfOrder: no read of the record
            detach(record); // the tree is keyed by filed last use: re-file rather than leave it
            file(record);
        }
        return true;
    }

    /**
     * A use without the store's lock needs nothing from the index unless the entry's record is in a tree (keyed by
     * filed last use, so it is re-filed at once, under the lock, as {@link #used} does). Reads the entry only, racily:
     * a record that a query is re-filing meanwhile ends up filed at or below the entry's key, a valid lower bound.
     */
    @Override
    public boolean usedConcurrently(SegmentEntry entry) {
        return entry.takesUseInPlace(tierOrdinal); // OrderTracker asks the entry directly (see there why)
    }

    /**
     * Drops the removed segment's record. A record that is its bucket's list tail stays there, dead: the next
     * registration filed in that bucket takes it over ({@link #arrived}), and anything else filed or walked there
     * unlinks it first ({@link #dropDeadTail}). Why: a register then remove of a segment (a block cached and dropped
     * again) otherwise allocates a record and writes the tail's link and the bucket's tail twice (references written
     * into long-lived objects, each with the collector's card-marking barrier); a dead tail costs one write of its
     * segment. Measured with {@code StoreAbCheck} (register+remove).
     */
    @Override
    public void forget(SegmentEntry entry) {
        Record record = entry.record(tierOrdinal);
        if (record != null) {
            Bucket bucket = record.bucket;
            if (!record.outOfOrder && bucket.tail == record) {
                record.entry = null;
                uncounted(bucket);
            } else {
                detach(record);
            }
            entry.record(tierOrdinal, null);
            if (emptyBuckets > liveBuckets + emptyBucketSlack) {
                sweepEmptyBuckets();
            }
        }
    }

    /**
     * Whether {@code record}'s entry was used since it was filed: its key (count and last use) is above the filed
     * one, so it belongs further on. A key below the filed one is not stale: single-threaded a key never falls
     * below where it was filed (the class comment), so only a touch without the lock that lost a racing touch's
     * increment leaves it so, and such a record is named where it is, a little late, rather than re-filed behind
     * the walk (where this query would miss it).
     */
    private boolean isStale(Record record) {
        SegmentEntry entry = record.entry;
        long lastUse = entry.lastUse;
        long count = entry.accessCount;
        if (lastUse == record.filedLastUse && count == record.filedCount) {
            return false;
        }
        if (bucketByAccessCount && count != record.filedCount) {
            return count > record.filedCount;
        }
        return lastUse > record.filedLastUse || (lastUse == record.filedLastUse && count > record.filedCount);
    }

    /** Files the detached {@code record} under its entry's current key (each part read once: touches may race). */
    private void file(Record record) {
        SegmentEntry entry = record.entry;
        long count = entry.accessCount;
        long lastUse = entry.lastUse;
        fileIn(record, bucketFor(bucketByAccessCount ? count : 0, record.bucket), count, lastUse);
    }

    /** Files the detached {@code record} in {@code bucket} under the key ({@code count}, {@code lastUse}). */
    private void fileIn(Record record, Bucket bucket, long count, long lastUse) {
        SegmentEntry entry = record.entry;
        dropDeadTail(bucket);
        record.filedCount = count;
        record.filedLastUse = lastUse;
        record.bucket = bucket;
        counted(bucket);
        if (appendsAfter(bucket.tail, lastUse)) {
            record.outOfOrder = false;
            entry.recordOutOfOrder(tierOrdinal, false);
            record.previous = bucket.tail;
            record.next = null;
            if (bucket.tail == null) {
                bucket.head = record;
            } else {
                bucket.tail.next = record;
            }
            bucket.tail = record;
        } else {
            if (bucket.outOfOrder == null) {
                bucket.outOfOrder = new RecordTree();
            }
            record.outOfOrder = true;
            entry.recordOutOfOrder(tierOrdinal, true);
            bucket.outOfOrder.add(record);
        }
    }

    /**
     * Whether a record filed under last use {@code lastUse} goes after {@code tail} (null: an empty list) at the end of
     * its bucket's list, keeping the list in recency order; else it joins the bucket's tree.
     */
    private static boolean appendsAfter(Record tail, long lastUse) {
        return tail == null || tail.filedLastUse < lastUse;
    }

    /** Takes the filed {@code record} out of its bucket; never sweeps (safe mid-walk). */
    private void detach(Record record) {
        Bucket bucket = record.bucket;
        if (record.outOfOrder) {
            bucket.outOfOrder.remove(record);
        } else {
            unlinkFromList(record);
        }
        // record.bucket stays as the hint for the next filing.
        uncounted(bucket);
    }

    /** Takes {@code record} out of its bucket's list (not its tree), leaving the counts alone. */
    private static void unlinkFromList(Record record) {
        Bucket bucket = record.bucket;
        if (record.previous == null) {
            bucket.head = record.next;
        } else {
            record.previous.next = record.next;
        }
        if (record.next == null) {
            bucket.tail = record.previous;
        } else {
            record.next.previous = record.previous;
        }
        record.previous = null;
        record.next = null;
    }

    /** Counts a record filed in {@code bucket}. */
    private void counted(Bucket bucket) {
        filedRecords++;
        if (bucket.size++ == 0) {
            emptyBuckets--;
            liveBuckets++;
        }
    }

    /** Counts a record gone from {@code bucket} (detached, or left dead as its tail). */
    private void uncounted(Bucket bucket) {
        filedRecords--;
        if (--bucket.size == 0) {
            liveBuckets--;
            emptyBuckets++;
        }
    }

    /** Unlinks {@code bucket}'s dead tail (see {@link #forget}), which no count includes, if it has one. */
    private static void dropDeadTail(Bucket bucket) {
        Record tail = bucket.tail;
        if (tail != null && tail.entry == null) {
            unlinkFromList(tail);
        }
    }

    /**
     * The linked bucket for {@code count}, created (empty) if needed. The bucket a record had
     * before is a hint: a re-filing usually lands in it, a neighbour of it, or a new bucket right
     * beside it, so no search is needed. Swept buckets are ignored.
     */
    private Bucket bucketFor(long count, Bucket hint) {
        if (hint != null && hint.linked) {
            if (hint.accessCount == count) {
                return hint;
            }
            if (hint.accessCount < count) {
                Bucket higher = hint.higher;
                if (higher != null && higher.accessCount == count) {
                    return higher;
                }
                if (higher == null || count < higher.accessCount) {
                    return link(new Bucket(this, count), hint);
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
        // Single-threaded a record is re-filed at most once per query (filed at its key, it stays current), so
        // re-filings never exceed the records filed. Touches without the lock could raise one record again and
        // again while a query walks: past this bound a stale record is named where it is, so the query ends.
        long refilingsLeft = filedRecords;
        for (Bucket bucket = lowest; bucket != null; ) {
            if (bucket.size == 0) {
                Bucket higher = bucket.higher;
                unlink(bucket); // pays for the walk past it, once
                bucket = higher;
                continue;
            }
            dropDeadTail(bucket); // so the walk meets live records only (and, in LRU, re-filings append after them)
            // The tree is walked with higher() rather than an iterator: re-filing may add to this
            // very bucket's tree (plain LRU has one bucket).
            Record inList = bucket.head;
            Record inTree = bucket.outOfOrder == null || bucket.outOfOrder.isEmpty() ? null : bucket.outOfOrder.first();
            while (inList != null || inTree != null) {
                Record next;
                boolean fromList = inTree == null || (inList != null && inList.filedLastUse < inTree.filedLastUse);
                if (fromList) {
                    next = inList;
                    inList = next.next;
                } else {
                    next = inTree;
                    inTree = bucket.outOfOrder.higher(next);
                }
                SegmentEntry entry = next.entry;
                if (entry.tierOrdinal() != tierOrdinal) {
                    detach(next); // it left this tier since it was filed
                    entry.record(tierOrdinal, null);
                    continue;
                }
                if (isStale(next) && refilingsLeft-- > 0) {
                    // Used since it was filed: its key grew, so it belongs further on.
                    detach(next);
                    file(next);
                    if (next.bucket == bucket) { // plain LRU: back into this bucket, further on
                        if (next.outOfOrder) {
                            if (inTree == null || next.filedLastUse < inTree.filedLastUse) {
                                inTree = next;
                            }
                        } else if (inList == null) {
                            inList = next; // appended as the tail, after everything walked
                        }
                    }
                    continue;
                }
                CandidateList.add(keys, entry);
                stillNeeded -= entry.sizeBytes;
                if (stillNeeded <= 0) {
                    return;
                }
            }
            // Read only now: re-filing may have linked a new bucket right after this one.
            bucket = bucket.higher;
        }
    }
}
