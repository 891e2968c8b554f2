package dev.kvtier.persist;

import dev.kvtier.DiskPersistence;
import dev.kvtier.DiskPersistence.FsyncPolicy;
import dev.kvtier.PersistedDirectoryMismatchException;
import dev.kvtier.RecoveryReport.DiscardReason;
import dev.kvtier.concurrent.KvTierThreads;
import dev.kvtier.exec.MappedFileChunkAllocator;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The journal of one persistent DISK directory: {@link #open} recovers what it describes (compacting
 * it), then {@link #put} and {@link #remove} append a record for each DISK residency that begins or
 * ends, synced as the {@link FsyncPolicy} says. The format and the recovery algorithm are in the
 * package comment.
 *
 * <p>Failures to write are never the cache's failures: the segment stays cached, only not persisted
 * (logged at WARNING, counted by {@link #writeFailures()}); the next open discards whatever half of a
 * record reached the file. Thread-safe: appends are serialized by the journal's lock. The caller
 * closes the journal before unmapping the extents it syncs.
 */
public final class DiskJournal implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DiskJournal.class.getName());
    /** The journal's file name in the disk directory. */
    public static final String FILE = "kvtier.journal";
    /** The compacted journal while it is written; renamed over {@link #FILE} when complete. */
    static final String COMPACTING = "kvtier.journal.compacting";
    /**
     * Dead records tolerated beyond the live ones before the journal is compacted: 4096, or the system
     * property {@code kvtier.journal.compactSlack} (the crash test lowers it so kills land inside compactions).
     */
    static final int COMPACT_SLACK = Math.max(0, Integer.getInteger("kvtier.journal.compactSlack", 4096));
    /** Unsynced batches ({@link FsyncPolicy#PER_BATCH}) after which a put syncs itself instead of leaving it to the syncer. */
    private static final int BATCHES_BEHIND = 4;
    /** Highest extent slot a record may name (more than 10^6 extents is corruption, not a cache). */
    private static final int MAX_SLOT = 1 << 20;

    private final Path directory;
    private final DiskPersistence persistence;
    private final ByteBuffer header;
    /** Every live segment's PUT record, in the order written: what compaction writes out. */
    private final LinkedHashMap<String, byte[]> live = new LinkedHashMap<>();
    /** Extent slots written by the unsynced batch ({@link FsyncPolicy#PER_BATCH}): each is fsynced once per batch. */
    private Set<Integer> unsyncedExtents = new HashSet<>();
    /** One read channel per extent slot, opened on first sync: fsync of the file writes back its mapped pages. */
    private final Map<Integer, FileChannel> extentChannels = new ConcurrentHashMap<>();
    private final ScheduledExecutorService batchSyncer;
    private FileChannel channel;
    private long records;
    private long unsyncedRecords;
    private long oldestUnsyncedNanos;
    private long writeFailures;
    private long compactions;
    private boolean syncerStarted;
    private boolean closed;

    /** What {@link #open} found: the journal to append to, the live segments, the discards. */
    public record Opened(DiskJournal journal, List<SegmentRecord> segments, Map<DiscardReason, Long> discarded,
                         long journalBytes, Optional<String> wipedBecause) { }

    private DiskJournal(Path directory, DiskPersistence persistence, ByteBuffer header) {
        this.directory = directory;
        this.persistence = persistence;
        this.header = header;
        this.batchSyncer = persistence.fsyncPolicy() == FsyncPolicy.PER_BATCH
                ? Executors.newSingleThreadScheduledExecutor(KvTierThreads.factory("journal-sync")) : null;
    }

    /**
     * Reads the journal in {@code directory} (the caller holds the directory's lock), checks it was
     * written under the same namespace and layout, replays it into the live segments, drops those whose
     * extents are gone, and compacts it when the replay discarded anything or dead records dominate (the
     * compacted journal is synced, whatever the policy), so appends never follow damage. A directory with
     * no journal starts one.
     *
     * @throws PersistedDirectoryMismatchException when the journal is of another namespace, version,
     *                                             page size or extent size, or its header is unreadable, and
     *                                             {@link DiskPersistence#onMismatch()} is REFUSE
     * @throws IOException                         when the journal cannot be read or written
     */
    public static Opened open(Path directory, DiskPersistence persistence, int pageSize, long extentBytes)
            throws IOException {
        Files.deleteIfExists(directory.resolve(COMPACTING)); // a compaction that died: the journal is still whole
        DiskJournal journal = new DiskJournal(directory, persistence,
                JournalFormat.header(persistence.namespace(), pageSize, extentBytes));
        try {
            Path file = directory.resolve(FILE);
            byte[] bytes;
            try {
                bytes = Files.readAllBytes(file);
            } catch (NoSuchFileException fresh) {
                journal.compact();
                return new Opened(journal, List.of(), Map.of(), 0, Optional.empty());
            }
            ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            String mismatch = mismatch(directory, persistence, pageSize, extentBytes, buffer);
            if (mismatch != null) {
                wipe(directory);
                journal.compact();
                return new Opened(journal, List.of(), Map.of(), bytes.length, Optional.of(mismatch));
            }
            Replay replay = new Replay(pageSize, extentBytes);
            replay.run(buffer, JournalFormat.readHeader(buffer).length());
            List<SegmentRecord> segments = replay.withExtents(directory, extentBytes);
            for (SegmentRecord segment : segments) {
                journal.live.put(segment.key(), replay.encoded.get(segment.key()));
            }
            journal.records = replay.records;
            if (!replay.discarded.isEmpty() || journal.records > 2L * journal.live.size() + COMPACT_SLACK) {
                journal.compact(); // damage is rewritten away, dead records dropped
            } else {
                journal.appendAfter(file, replay.goodEnd); // a clean journal: nothing to write, only a torn tail to cut
            }
            return new Opened(journal, segments, replay.discarded, bytes.length, Optional.empty());
        } catch (IOException | RuntimeException | Error e) {
            journal.closeQuietly(e);
            throw e;
        }
    }

    /**
     * What differs between the journal's header and this cache, or null when nothing does; with
     * {@code REFUSE} a difference is thrown instead.
     */
    private static String mismatch(Path directory, DiskPersistence persistence, int pageSize, long extentBytes,
                                   ByteBuffer file) {
        JournalFormat.Header found = JournalFormat.readHeader(file);
        String[] difference;
        if (found == null) {
            difference = new String[] {"header", "kvtier journal format " + JournalFormat.FORMAT_VERSION,
                    "unreadable (" + file.limit() + " bytes, not a whole kvtier journal header)"};
        } else if (found.version() != JournalFormat.FORMAT_VERSION) {
            difference = new String[] {"format version", "" + JournalFormat.FORMAT_VERSION, "" + found.version()};
        } else if (!found.namespace().equals(persistence.namespace())) {
            difference = new String[] {"namespace", persistence.namespace(), found.namespace()};
        } else if (found.pageSize() != pageSize) {
            difference = new String[] {"page size", "" + pageSize, "" + found.pageSize()};
        } else if (found.extentBytes() != extentBytes) {
            difference = new String[] {"extent size", "" + extentBytes, "" + found.extentBytes()};
        } else {
            return null;
        }
        PersistedDirectoryMismatchException e = new PersistedDirectoryMismatchException(directory.toString(),
                difference[0], difference[1], difference[2]);
        if (persistence.onMismatch() == DiskPersistence.OnMismatch.REFUSE) {
            throw e;
        }
        LOG.log(System.Logger.Level.WARNING, "wiping persisted KV as configured (onMismatch=WIPE): " + e.getMessage());
        return difference[0] + " was \"" + difference[2] + "\", not \"" + difference[1] + "\"";
    }

    /** Deletes the journal and every persistent extent in {@code directory}. */
    private static void wipe(Path directory) throws IOException {
        Files.deleteIfExists(directory.resolve(FILE));
        try (DirectoryStream<Path> extents = Files.newDirectoryStream(directory,
                MappedFileChunkAllocator.PERSISTENT_PREFIX + "*.extent")) {
            for (Path extent : extents) {
                Files.deleteIfExists(extent);
            }
        }
    }

    /** Replays records in file order into the live segments, skipping damage; see the package comment. */
    private static final class Replay {
        final Map<DiscardReason, Long> discarded = new EnumMap<>(DiscardReason.class);
        final LinkedHashMap<String, SegmentRecord> live = new LinkedHashMap<>();
        /** The record bytes of each live segment, as read: what the journal keeps for compaction. */
        final Map<String, byte[]> encoded = new HashMap<>();
        /** Per extent slot, per page, the key of the live segment whose bytes are there. */
        final Map<Integer, String[]> owners = new HashMap<>();
        final int pagesPerExtent;
        final long pageSize;
        /** Whole records read. */
        long records;
        /** Where the last whole record ends: what a torn tail is cut back to. */
        int goodEnd;

        Replay(long pageSize, long extentBytes) {
            this.pageSize = pageSize;
            this.pagesPerExtent = (int) (extentBytes / pageSize);
        }

        void run(ByteBuffer file, int offset) {
            goodEnd = offset;
            while (offset < file.limit()) {
                JournalFormat.Decoded record = JournalFormat.readRecord(file, offset);
                if (record == null) {
                    int next = nextRecord(file, offset + 1);
                    count(next < 0 ? DiscardReason.TORN_RECORD : DiscardReason.CORRUPT_RECORD);
                    if (next < 0) {
                        return;
                    }
                    offset = next;
                    continue;
                }
                int start = offset;
                offset += record.length();
                goodEnd = offset;
                records++;
                forget(record.key());
                if (record.segment() != null) {
                    if (fits(record.segment())) {
                        claim(record.segment());
                        encoded.put(record.key(), Arrays.copyOfRange(file.array(), start, offset));
                    } else {
                        count(DiscardReason.CORRUPT_RECORD);
                    }
                }
            }
        }

        /** Where the next whole, intact record starts at or after {@code from}; -1 if none does. */
        private static int nextRecord(ByteBuffer file, int from) {
            for (int at = from; at <= file.limit() - JournalFormat.RECORD_HEADER; at++) {
                if (file.getInt(at) == JournalFormat.RECORD_MAGIC && JournalFormat.readRecord(file, at) != null) {
                    return at;
                }
            }
            return -1;
        }

        /** Whether a record's pages are whole pages inside some extent, exactly enough for its bytes. */
        private boolean fits(SegmentRecord r) {
            long pages = 0;
            for (int i = 0; i < r.runCount(); i++) {
                int chunk = r.runChunk()[i];
                int first = r.runFirstPage()[i];
                int count = r.runPageCount()[i];
                if (chunk < 0 || chunk >= MAX_SLOT || first < 0 || count <= 0 || first > pagesPerExtent - count) {
                    return false;
                }
                pages += count;
            }
            return pages == (r.sizeBytes() + pageSize - 1) / pageSize;
        }

        /** A live segment's pages, taking them from any older segment there (whose removal was lost). */
        private void claim(SegmentRecord r) {
            for (int i = 0; i < r.runCount(); i++) {
                String[] pages = owners.computeIfAbsent(r.runChunk()[i], c -> new String[pagesPerExtent]);
                for (int p = r.runFirstPage()[i]; p < r.runFirstPage()[i] + r.runPageCount()[i]; p++) {
                    if (pages[p] != null) {
                        forget(pages[p]);
                        count(DiscardReason.OVERLAPPED);
                    }
                }
            }
            live.put(r.key(), r);
            setOwner(r, r.key());
        }

        private void forget(String key) {
            SegmentRecord old = live.remove(key);
            if (old != null) {
                setOwner(old, null);
                encoded.remove(key);
            }
        }

        private void setOwner(SegmentRecord r, String key) {
            for (int i = 0; i < r.runCount(); i++) {
                String[] pages = owners.get(r.runChunk()[i]);
                if (pages != null) {
                    Arrays.fill(pages, r.runFirstPage()[i], r.runFirstPage()[i] + r.runPageCount()[i], key);
                }
            }
        }

        void count(DiscardReason reason) {
            discarded.merge(reason, 1L, Long::sum);
        }

        /** The live segments whose every extent file is there with the right size. */
        List<SegmentRecord> withExtents(Path directory, long extentBytes) throws IOException {
            Map<Integer, Boolean> present = new HashMap<>();
            List<SegmentRecord> kept = new ArrayList<>(live.size());
            for (SegmentRecord r : live.values()) {
                boolean whole = true;
                for (int chunk : r.runChunk()) {
                    whole &= present.computeIfAbsent(chunk, c -> {
                        Path extent = MappedFileChunkAllocator.persistentExtent(directory, c);
                        try {
                            return Files.isRegularFile(extent) && Files.size(extent) == extentBytes;
                        } catch (IOException e) {
                            return false;
                        }
                    });
                }
                if (whole) {
                    kept.add(r);
                } else {
                    count(DiscardReason.EXTENT_MISSING);
                }
            }
            return kept;
        }
    }

    /**
     * Records that segment {@code record.key()} now lives on DISK in the pages named, whose bytes are
     * {@code data} (mapped runs): under {@link FsyncPolicy#PER_SEGMENT} the bytes are synced first, then the
     * record is written and synced, before this returns; under {@link FsyncPolicy#PER_BATCH} they join
     * the batch. A record for the same key replaces the older one.
     */
    public void put(SegmentRecord record, List<MemorySegment> data) {
        byte[] bytes = JournalFormat.put(record);
        FsyncPolicy policy = persistence.fsyncPolicy();
        try {
            if (policy == FsyncPolicy.PER_SEGMENT) {
                for (MemorySegment run : data) {
                    run.force(); // outside the lock: other segments' syncs overlap this one's
                }
            }
        } catch (RuntimeException e) { // UncheckedIOException from msync
            failed("sync the bytes of segment \"" + record.key() + "\"", e);
            return;
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            try {
                append(bytes);
            } catch (IOException | RuntimeException e) {
                failed("record segment \"" + record.key() + "\"", e);
                return;
            }
            live.put(record.key(), bytes);
            try {
                if (policy == FsyncPolicy.PER_SEGMENT) {
                    channel.force(false);
                } else if (policy == FsyncPolicy.PER_BATCH) {
                    if (unsyncedRecords == 0) {
                        oldestUnsyncedNanos = System.nanoTime();
                    }
                    for (int slot : record.runChunk()) {
                        unsyncedExtents.add(slot);
                    }
                    unsyncedRecords++;
                    if (unsyncedRecords >= BATCHES_BEHIND * persistence.batchRecords()) {
                        syncBatch(); // the syncer fell behind: this put waits for it (backpressure)
                    } else if (unsyncedRecords % persistence.batchRecords() == 0) {
                        batchSyncer.execute(this::syncNow); // a full batch: synced in the background
                    }
                }
                compactIfDue();
            } catch (IOException | RuntimeException e) {
                failed("sync or compact after recording segment \"" + record.key() + "\"", e);
            }
        }
    }

    /**
     * Records that segment {@code key} no longer lives on DISK; does nothing when the journal holds no
     * record of it. Call before its pages can be reused. Not synced by itself (a lost removal only brings
     * back bytes that still match their checksum, or loses to the record that reused the pages).
     */
    public synchronized void remove(String key) {
        if (closed || live.remove(key) == null) {
            return;
        }
        try {
            append(JournalFormat.remove(key));
            compactIfDue();
        } catch (IOException | RuntimeException e) {
            failed("record the removal of segment \"" + key + "\"", e);
        }
    }

    private void append(byte[] bytes) throws IOException {
        records++;
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }

    /**
     * Syncs the batch, here and now (with the lock held): the extents written since the last sync, then
     * the journal.
     */
    private void syncBatch() throws IOException {
        if (unsyncedRecords == 0) {
            return;
        }
        Set<Integer> extents = unsyncedExtents;
        unsyncedExtents = new HashSet<>();
        unsyncedRecords = 0;
        syncExtents(extents);
        channel.force(false);
    }

    /** fsyncs each extent file named: the kernel writes back the pages the mapping dirtied, in one go per file. */
    private void syncExtents(Set<Integer> slots) throws IOException {
        for (int slot : slots) {
            FileChannel extent = extentChannels.get(slot);
            if (extent == null) {
                extent = FileChannel.open(MappedFileChunkAllocator.persistentExtent(directory, slot), StandardOpenOption.READ);
                FileChannel raced = extentChannels.putIfAbsent(slot, extent);
                if (raced != null) {
                    extent.close();
                    extent = raced;
                }
            }
            extent.force(false);
        }
    }

    /**
     * A batch sync on the syncer thread, without the lock (appends go on meanwhile): the batch is taken
     * under the lock, its extents and the journal synced outside it. A journal that compaction closed
     * meanwhile was synced by the compaction itself.
     */
    private void syncNow() {
        Set<Integer> extents;
        FileChannel journal;
        synchronized (this) {
            if (closed || unsyncedRecords == 0) {
                return;
            }
            extents = unsyncedExtents;
            unsyncedExtents = new HashSet<>();
            unsyncedRecords = 0;
            journal = channel;
        }
        try {
            syncExtents(extents);
            journal.force(false);
        } catch (ClosedChannelException compactedOrClosed) {
            // compaction synced the journal it wrote; close() syncs what is pending itself
        } catch (IOException | RuntimeException e) {
            failed("sync a batch", e);
        }
    }

    /** The background check of {@link FsyncPolicy#PER_BATCH}: syncs a batch whose oldest record is old enough. */
    private void syncIfDue() {
        synchronized (this) {
            if (closed || unsyncedRecords == 0
                    || System.nanoTime() - oldestUnsyncedNanos < persistence.batchDelay().toNanos()) {
                return;
            }
        }
        syncNow();
    }

    private void compactIfDue() throws IOException {
        if (records > 2L * live.size() + COMPACT_SLACK) {
            compact();
        }
    }

    /**
     * Rewrites the journal as its header and one PUT per live segment: written beside it, synced, renamed
     * over it, the directory synced. A crash before the rename leaves the old journal whole.
     */
    private void compact() throws IOException {
        if (channel != null) {
            syncBatch(); // the records rewritten must not reach the disk before their bytes
        }
        Path compacting = directory.resolve(COMPACTING);
        try (FileChannel out = FileChannel.open(compacting, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            ByteBuffer buffer = ByteBuffer.allocate(1 << 16);
            buffer.put(header.duplicate());
            for (byte[] record : live.values()) {
                if (buffer.remaining() < record.length) {
                    drain(out, buffer);
                    if (buffer.capacity() < record.length) {
                        out.write(ByteBuffer.wrap(record));
                        continue;
                    }
                }
                buffer.put(record);
            }
            drain(out, buffer);
            out.force(false);
        }
        if (channel != null) {
            channel.close();
            channel = null;
        }
        Path file = directory.resolve(FILE);
        AtomicReplace.replace(compacting, file);
        syncDirectory();
        records = live.size();
        compactions++;
        appendAfter(file, -1);
    }

    /**
     * Opens {@code file} for appends; {@code end >= 0} first cuts it back to {@code end} bytes (a torn
     * tail, kept for safety: a torn tail is counted as a discard, and any discard compacts instead).
     * The first call also starts the batch syncer.
     */
    private void appendAfter(Path file, long end) throws IOException {
        channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        if (end >= 0 && channel.size() > end) {
            channel.truncate(end);
        }
        if (batchSyncer != null && !syncerStarted) {
            syncerStarted = true;
            long period = Math.max(1, persistence.batchDelay().toNanos() / 2);
            batchSyncer.scheduleWithFixedDelay(this::syncIfDue, period, period, TimeUnit.NANOSECONDS);
        }
    }

    private static void drain(FileChannel out, ByteBuffer buffer) throws IOException {
        buffer.flip();
        while (buffer.hasRemaining()) {
            out.write(buffer);
        }
        buffer.clear();
    }

    /** Makes the rename durable (a directory opened for reading can be synced on Linux; elsewhere it may not). */
    private void syncDirectory() {
        try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
            dir.force(true);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "cannot sync directory " + directory + ": " + e);
        }
    }

    private synchronized void failed(String what, Exception e) {
        if (writeFailures++ == 0) {
            LOG.log(System.Logger.Level.WARNING, "journal " + directory.resolve(FILE) + ": could not " + what
                    + " (the segment stays cached but may not survive a restart; later failures are logged at DEBUG): " + e);
        } else {
            LOG.log(System.Logger.Level.DEBUG, "journal: could not " + what + ": " + e);
        }
    }

    /** Appends that failed (the segments concerned were cached but not persisted). */
    public synchronized long writeFailures() {
        return writeFailures;
    }

    /**
     * Syncs the last batch ({@link FsyncPolicy#PER_BATCH}) and closes the file; later appends do nothing.
     * Call before the extents are unmapped. Idempotent.
     */
    @Override
    public void close() {
        if (batchSyncer != null) {
            KvTierThreads.shutdownAndAwait(batchSyncer);
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            try {
                if (channel != null) {
                    syncBatch();
                    channel.close();
                }
            } catch (IOException | RuntimeException e) {
                failed("sync and close", e);
            }
            for (FileChannel extent : extentChannels.values()) {
                try {
                    extent.close();
                } catch (IOException e) {
                    failed("close an extent", e);
                }
            }
        }
    }

    private void closeQuietly(Throwable failure) {
        try {
            close();
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }
}
