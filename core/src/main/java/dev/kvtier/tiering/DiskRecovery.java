package dev.kvtier.tiering;

import dev.kvtier.DiskPersistence;
import dev.kvtier.RecoveryReport;
import dev.kvtier.SegmentCorruptedException;
import dev.kvtier.observe.ChecksumFailureEvent;
import dev.kvtier.observe.RecoveryEvent;
import dev.kvtier.persist.DiskJournal;
import dev.kvtier.persist.RecoveryProgress;
import dev.kvtier.persist.SegmentRecord;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToIntFunction;

/**
 * The recovery of a persisted DISK tier, beside the journal's use in {@link PersistedDisk}: at open, the
 * journal's records registered again on DISK ({@link #recover}); afterwards, each recovered segment's
 * bytes checked against their checksum on first use ({@link #verifyRecovered}, {@link #recoveredIntact})
 * and the segment dropped, with its descendants, when they do not match.
 *
 * <p>{@link #recover} runs once, before the engine is handed out, on the opening thread; the first-use
 * checks run on a segment its caller holds locked, so calls on different segments may run concurrently.
 */
final class DiskRecovery {
    // The engine's logger: the recovery's lines read as the open's, under the name their filters already use.
    private static final System.Logger LOG = System.getLogger(TieringEngine.class.getName());

    private final TieredStore store;
    private final TierMemories memories;
    private final SegmentTable table;
    private final PersistedDisk persisted;
    /** Drops a locked live segment with its cached descendants; returns how many descendants went. */
    private final ToIntFunction<Segment> dropWithDescendants;

    DiskRecovery(TieredStore store, TierMemories memories, SegmentTable table, PersistedDisk persisted,
                 ToIntFunction<Segment> dropWithDescendants) {
        this.store = store;
        this.memories = memories;
        this.table = table;
        this.persisted = persisted;
        this.dropWithDescendants = dropWithDescendants;
    }

    /**
     * Registers again on DISK the segments the journal recovered: their pages claimed in the reopened
     * extents, their checksums known and, unless verification is eager, not yet checked (their first use
     * checks them). Runs before the engine is handed out, so nothing else touches these segments.
     */
    void recover(DiskJournal.Opened opened, DiskPersistence persistence, Path directory, long startNanos,
                 RecoveryProgress progress) {
        int extents = 0;
        for (SegmentRecord record : opened.segments()) {
            for (int chunk : record.runChunk()) {
                extents = Math.max(extents, chunk + 1);
            }
        }
        try {
            memories.reopenDisk(extents);
        } catch (IOException e) {
            throw Failures.openFailed("map the " + extents + " persisted disk extents in " + directory + " again", e);
        }
        Map<RecoveryReport.DiscardReason, Long> discarded = new EnumMap<>(RecoveryReport.DiscardReason.class);
        discarded.putAll(opened.discarded());
        List<Segment> recovered = restoreParentsFirst(opened.segments(), discarded, progress);
        List<String> keys = new ArrayList<>(recovered.size());
        long bytes = 0;
        long checked = 0;
        for (Segment segment : recovered) { // parents first: a parent dropped here orphans its children below
            progress.step("segments checked", ++checked, recovered.size());
            if (segment.parent != null && !segment.parent.live) {
                table.drop(segment);
                discarded.merge(RecoveryReport.DiscardReason.ORPHANED, 1L, Long::sum);
                continue;
            }
            if (persistence.verification() == DiskPersistence.Verification.EAGER && checkRecovered(segment) != null) {
                table.drop(segment);
                discarded.merge(RecoveryReport.DiscardReason.CHECKSUM_MISMATCH, 1L, Long::sum);
                continue;
            }
            keys.add(segment.key);
            bytes += segment.sizeBytes;
        }
        RecoveryReport report = new RecoveryReport(persistence.namespace(), keys.size(), bytes, discarded, 0,
                opened.journalBytes(), Duration.ofNanos(System.nanoTime() - startNanos), opened.wipedBecause(), keys,
                opened.repairs());
        persisted.recovered(report);
        RecoveryEvent.emit(directory.toString(), report.recovered(), report.recoveredBytes(), report.discardedTotal(),
                report.rollbacksRefused(), report.duration());
        LOG.log(report.rollbacksRefused() > 0 || !report.repairs().isEmpty() ? System.Logger.Level.WARNING
                : System.Logger.Level.INFO, "kvtier recovered " + directory + ": " + report
                + (report.rollbacksRefused() == 0 ? "" : " (" + report.rollbacksRefused() + " record(s) refused: their"
                + " pages were later freed or rewritten, a record of which the journal lost; serving them would have"
                + " rolled their keys back)"));
    }

    /**
     * Registers the recovered records on DISK, each prefix block after its parent (a chain's blocks reach
     * DISK tail first, so a child's record often precedes its parent's) and linked to it, counted in its
     * parent's children. A block whose parent was not recovered (never persisted, discarded, not a block,
     * or a cycle in a corrupt journal) is discarded as {@code ORPHANED}, with its descendants: it could
     * never be reached as part of a chain. Discarded records are removed from the journal.
     *
     * @return the segments registered, every parent before its children
     */
    private List<Segment> restoreParentsFirst(List<SegmentRecord> records,
                                              Map<RecoveryReport.DiscardReason, Long> discarded,
                                              RecoveryProgress progress) {
        // Only blocks are looked up by key (a block's parent must be a block): plain segments, often all of them,
        // cost no map entry and no walk (a list and a set per record, a map entry per record, at 10^6 records).
        Map<String, SegmentRecord> blocksByKey = new HashMap<>();
        for (SegmentRecord record : records) {
            if (record.block()) {
                blocksByKey.put(record.key(), record);
            }
        }
        Map<String, Segment> restoredBlocks = new HashMap<>();
        Set<String> droppedBlocks = new HashSet<>();
        List<Segment> recovered = new ArrayList<>(records.size());
        long visited = 0;
        for (SegmentRecord record : records) {
            progress.step("segments registered", ++visited, records.size());
            List<SegmentRecord> path;
            if (!record.block()) {
                path = List.of(record); // no parent, and no block's parent: met once, here
            } else {
                // This block and its unsettled ancestors, child first; a cycle ends the walk (its top is an orphan).
                path = new ArrayList<>();
                Set<String> onPath = new HashSet<>();
                for (SegmentRecord at = record; at != null && !restoredBlocks.containsKey(at.key())
                        && !droppedBlocks.contains(at.key()) && onPath.add(at.key());
                     at = at.parentKey() == null ? null : blocksByKey.get(at.parentKey())) {
                    path.add(at);
                }
            }
            for (int i = path.size() - 1; i >= 0; i--) {
                SegmentRecord r = path.get(i);
                PositionRange positions = PositionRange.of(r.positionStart(), r.positionEnd());
                Segment parent = r.parentKey() == null ? null : restoredBlocks.get(r.parentKey());
                boolean orphan = r.parentKey() != null && (parent == null || !parent.isBlock());
                if (orphan || r.block() && !BlockKeys.isBlockKey(r.key())) { // no chain call could find such a block
                    discarded.merge(orphan ? RecoveryReport.DiscardReason.ORPHANED
                            : RecoveryReport.DiscardReason.CORRUPT_RECORD, 1L, Long::sum);
                    persisted.leaving(new Segment(r.key(), positions, r.sizeBytes()));
                    droppedBlocks.add(r.key());
                    continue;
                }
                Segment segment = r.block()
                        ? Segment.block(BlockKeys.high(r.key()), BlockKeys.low(r.key()), positions, r.sizeBytes(), parent)
                        : new Segment(r.key(), positions, r.sizeBytes());
                try {
                    segment.placement = memories.claimDisk(r.sizeBytes(), r.runChunk(), r.runFirstPage(),
                            r.runPageCount());
                } catch (IllegalArgumentException unclaimable) { // the replay already ruled this out; never serve it
                    discarded.merge(RecoveryReport.DiscardReason.CORRUPT_RECORD, 1L, Long::sum);
                    persisted.leaving(segment);
                    droppedBlocks.add(r.key());
                    continue;
                }
                segment.crc32c = r.crc32c();
                segment.crcKnown = true;
                segment.verified = false;
                table.publish(segment); // keys are unique in a replayed journal
                segment.handle = store.registerHandle(SegmentMeta.of(segment.key, segment.positions, segment.sizeBytes)
                        .withAccessCount(r.accessCount()), Tier.DISK, segment);
                if (segment.handle == null) { // beyond a DISK budget smaller than the one it was written under
                    table.unpublish(segment);
                    memories.release(segment.placement);
                    discarded.merge(RecoveryReport.DiscardReason.OVER_BUDGET, 1L, Long::sum);
                    persisted.leaving(segment);
                    droppedBlocks.add(r.key());
                    continue;
                }
                segment.live = true;
                segment.countOn(Tier.DISK); // nothing else runs yet: no lock needed
                if (segment.isBlock()) {
                    restoredBlocks.put(r.key(), segment);
                }
                recovered.add(segment);
            }
        }
        return recovered;
    }

    /**
     * Checks a recovered segment's bytes against its checksum once; marks it verified when they match.
     *
     * @return null when they match, else the exception its first use throws (the caller drops it)
     */
    private SegmentCorruptedException checkRecovered(Segment segment) {
        int actual;
        InternalError unreadable = null;
        try {
            actual = memories.crc32c(segment.placement);
        } catch (InternalError e) { // a fault reading the mapping (see Mover#verifyDiskChecksum)
            actual = ~segment.crc32c;
            unreadable = e;
        }
        if (actual == segment.crc32c) {
            segment.verified = true;
            return null;
        }
        ChecksumFailureEvent.emit(segment.key, Tier.DISK, false, segment.crc32c, actual);
        return new SegmentCorruptedException(segment.key, segment.crc32c, actual, true, unreadable);
    }

    /**
     * The first use of a recovered segment whose bytes were not checked yet: checks them, and drops
     * the segment when they do not match.
     *
     * @throws SegmentCorruptedException when they do not ({@code removed()} is true)
     */
    void verifyRecovered(Segment segment) {
        if (segment.verified) {
            return;
        }
        SegmentCorruptedException corrupted = checkRecovered(segment);
        if (corrupted != null) {
            dropCorruptRecovered(segment, corrupted);
            throw corrupted;
        }
    }

    /**
     * For a locked, live segment about to be served as part of a chain: whether it is not a recovered one
     * failing its first check (which is then dropped, with its descendants, and the chain ends before it).
     */
    boolean recoveredIntact(Segment segment) {
        if (segment.verified) {
            return true;
        }
        SegmentCorruptedException corrupted = checkRecovered(segment);
        if (corrupted == null) {
            return true;
        }
        dropCorruptRecovered(segment, corrupted);
        return false;
    }

    /**
     * Drops a locked recovered segment whose bytes failed their first check, and, for a prefix block,
     * every cached descendant first (children before parents, so no child outlives its parent and none
     * is left pointing to a block that is gone). Locks the descendants parents first, as chains do.
     */
    private void dropCorruptRecovered(Segment segment, SegmentCorruptedException corrupted) {
        int descendants = dropWithDescendants.applyAsInt(segment);
        persisted.failedFirstUse();
        LOG.log(System.Logger.Level.WARNING, corrupted.getMessage()
                + (descendants == 0 ? "" : " (its " + descendants + " descendant block(s) dropped with it)"));
    }
}
