package dev.kvtier.tiering;

import dev.kvtier.RecoveryReport;
import dev.kvtier.exec.PageAllocation;
import dev.kvtier.persist.DiskJournal;
import dev.kvtier.persist.SegmentRecord;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.TieredStore;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where tiering tells the journal that a DISK residency began ({@link #stored}) or ends
 * ({@link #leaving}), and where the recovery report lives. {@link #VOLATILE} (no persistence) does
 * nothing, at the cost of one field read per call. Thread-safe (the journal is).
 */
final class PersistedDisk {
    /** A DISK tier deleted on close: nothing is recorded. */
    static final PersistedDisk VOLATILE = new PersistedDisk(null, null);

    private final DiskJournal journal;
    private final TieredStore store;
    private volatile RecoveryReport opened;
    private final AtomicLong failedFirstUse = new AtomicLong();

    /** @param journal where records go; @param store where a segment's access count is read when it is recorded */
    PersistedDisk(DiskJournal journal, TieredStore store) {
        this.journal = journal;
        this.store = store;
    }

    /** Whether the DISK tier outlives the process. */
    boolean isPersistent() {
        return journal != null;
    }

    /** The open's recovery is done: {@code report} is what it found. */
    void recovered(RecoveryReport report) {
        this.opened = report;
    }

    /**
     * A locked segment's bytes are now in {@code pages} on DISK and match its checksum: record it (synced
     * as the policy says). Never throws: a segment that cannot be recorded stays cached, unpersisted.
     */
    void stored(Segment segment, PageAllocation pages) {
        if (journal == null) {
            return;
        }
        int runs = pages.runs().size();
        int[] chunk = new int[runs];
        int[] first = new int[runs];
        int[] count = new int[runs];
        for (int i = 0; i < runs; i++) {
            chunk[i] = pages.chunkOf(i);
            first[i] = pages.firstPageOf(i);
            count[i] = pages.pageCountOf(i);
        }
        long uses = store.get(segment.handle).map(SegmentMeta::accessCount).orElse(0L);
        journal.put(new SegmentRecord(segment.key, segment.positions.start(), segment.positions.end(), segment.sizeBytes,
                segment.crc32c, uses, chunk, first, count, segment.isBlock(),
                segment.parent == null ? null : segment.parent.key), pages.runs());
    }

    /** A locked segment leaves DISK (moved off, removed or dropped): record it before its pages can be reused. */
    void leaving(Segment segment) {
        if (journal != null) {
            journal.remove(segment.key);
        }
    }

    /** A recovered segment failed its first check and was dropped. */
    void failedFirstUse() {
        failedFirstUse.incrementAndGet();
    }

    /** The report of the open, with the first-use failures counted so far; empty without persistence. */
    Optional<RecoveryReport> report() {
        if (opened == null) {
            return Optional.empty();
        }
        RecoveryReport r = opened;
        return Optional.of(new RecoveryReport(r.namespace(), r.recovered(), r.recoveredBytes(), r.discarded(),
                failedFirstUse.get(), r.journalBytes(), r.duration(), r.wipedBecause(), r.recoveredKeys(), r.repairs()));
    }

    /** Syncs what is pending and closes the journal; before the extents are unmapped. */
    void close() {
        if (journal != null) {
            journal.close();
        }
    }
}
