package dev.kvtier.persist;

import dev.kvtier.DiskPersistence;
import dev.kvtier.DiskPersistence.FsyncPolicy;
import dev.kvtier.PersistedDirectoryMismatchException;
import dev.kvtier.RecoveryReport.DiscardReason;
import dev.kvtier.concurrent.KvTierThreads;
import dev.kvtier.exec.MappedFileChunkAllocator;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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
 * ends, synced as the {@link FsyncPolicy} says, and keeps the generations file (which record's bytes each
 * extent page holds) beside it. The format and the recovery algorithm are in the package comment.
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
    /** Per extent page, the generation of the PUT whose bytes are there (0: none); see the package comment. */
    public static final String GENERATIONS = "kvtier.generations";
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
    /** One page's generation in the generations file. */
    private static final ValueLayout.OfLong STAMP_LAYOUT = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Path directory;
    private final DiskPersistence persistence;
    private final ByteBuffer header;
    private final int pagesPerExtent;
    /** Every live segment's PUT record, in the order written: what compaction writes out. */
    private final LinkedHashMap<String, byte[]> live = new LinkedHashMap<>();
    /** Extent slots written by the unsynced batch ({@link FsyncPolicy#PER_BATCH}): each is fsynced once per batch. */
    private Set<Integer> unsyncedExtents = new HashSet<>();
    /** One read channel per extent slot, opened on first sync: fsync of the file writes back its mapped pages. */
    private final Map<Integer, FileChannel> extentChannels = new ConcurrentHashMap<>();
    private final ScheduledExecutorService batchSyncer;
    private FileChannel channel;
    /** The generations file, written in place (positional writes), open as long as the journal. */
    private FileChannel generations;
    /** The generation the next PUT gets: above every generation the journal or the generations file holds. */
    private long nextGeneration = 1;
    private long records;
    private long unsyncedRecords;
    private long oldestUnsyncedNanos;
    private long writeFailures;
    private long compactions;
    private boolean syncerStarted;
    private boolean closed;

    /**
     * What {@link #open} found: the journal to append to, the live segments, the discards, and what it repaired
     * in the journal itself (a damaged header copy, naming the check it failed; a migrated format).
     *
     * @param journal      the opened journal, positioned to append after the last good record; the caller owns it and
     *                     closes it
     * @param segments     the live segments recovered, each with extents present and pages of its own generation;
     *                     empty for a fresh or wiped directory
     * @param discarded    how many records the replay dropped, per reason; empty when none was
     * @param journalBytes the size of the journal file as it was read, in bytes; 0 when the directory had none
     * @param wipedBecause why the directory was wiped (the mismatch found, under {@link
     *                     dev.kvtier.DiskPersistence.OnMismatch#WIPE}), or empty when it was not
     * @param repairs      one line per repair made to the journal itself (a header copy rewritten, a format
     *                     migrated), in the order made; empty when none
     */
    public record Opened(DiskJournal journal, List<SegmentRecord> segments, Map<DiscardReason, Long> discarded,
                         long journalBytes, Optional<String> wipedBecause, List<String> repairs) { }

    private DiskJournal(Path directory, DiskPersistence persistence, ByteBuffer header, int pagesPerExtent) {
        this.directory = directory;
        this.persistence = persistence;
        this.header = header;
        this.pagesPerExtent = pagesPerExtent;
        this.batchSyncer = persistence.fsyncPolicy() == FsyncPolicy.PER_BATCH
                ? Executors.newSingleThreadScheduledExecutor(KvTierThreads.factory("journal-sync")) : null;
    }

    /**
     * Reads the journal in {@code directory} (the caller holds the directory's lock), checks it was
     * written under the same namespace and layout (from either header copy), replays it into the live
     * segments, drops those whose extents are gone and those whose pages carry another generation than their
     * record (a rollback refused), and compacts it when the replay discarded or repaired anything or dead
     * records dominate (the compacted journal is synced, whatever the policy), so appends never follow
     * damage. A directory with no journal starts one; a journal of format 2 is migrated.
     *
     * @param directory   the DISK tier's directory, which holds the journal, its generations file and the extents
     * @param persistence the namespace, fsync policy and mismatch choice the journal is checked against and written
     *                    under
     * @param pageSize    the DISK page size in bytes, as recorded in the header; a journal of another page size is a
     *                    mismatch
     * @param extentBytes the size of one extent file in bytes, a multiple of {@code pageSize}; another size is a
     *                    mismatch
     * @param progress where a long replay reports how far it got
     * @return the journal to append to, with the live segments, the discards and repairs; the caller owns the journal
     *         and closes it
     * @throws PersistedDirectoryMismatchException when the journal is of another namespace, version,
     *                                             page size or extent size, or both its header copies are
     *                                             damaged, and {@link DiskPersistence#onMismatch()} is REFUSE
     * @throws IOException                         when the journal cannot be read or written
     */
    public static Opened open(Path directory, DiskPersistence persistence, int pageSize, long extentBytes,
                              RecoveryProgress progress) throws IOException {
        Files.deleteIfExists(directory.resolve(COMPACTING)); // a compaction that died: the journal is still whole
        DiskJournal journal = new DiskJournal(directory, persistence,
                JournalFormat.header(persistence.namespace(), pageSize, extentBytes), (int) (extentBytes / pageSize));
        try {
            Path file = directory.resolve(FILE);
            byte[] bytes;
            try {
                bytes = Files.readAllBytes(file);
            } catch (NoSuchFileException fresh) {
                journal.openGenerations(true); // stamps without a journal name nothing that can be served
                journal.compact();
                return new Opened(journal, List.of(), Map.of(), 0, Optional.empty(), List.of());
            }
            ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            Headers headers = Headers.read(buffer);
            String mismatch = mismatch(directory, persistence, pageSize, extentBytes, headers);
            if (mismatch != null) {
                wipe(directory);
                journal.openGenerations(true);
                journal.compact();
                return new Opened(journal, List.of(), Map.of(), bytes.length, Optional.of(mismatch), List.of());
            }
            List<String> repairs = new ArrayList<>();
            if (headers.repair() != null) {
                repairs.add(headers.repair());
                LOG.log(System.Logger.Level.WARNING, "journal " + file + ": " + headers.repair());
            }
            int version = headers.header().version();
            journal.openGenerations(false);
            Replay replay = new Replay(pageSize, extentBytes, version, progress);
            replay.run(buffer, headers.recordsStart());
            List<SegmentRecord> segments = replay.withExtents(directory, extentBytes);
            if (version == JournalFormat.MIGRATED_VERSION) {
                journal.migrate(segments, replay);
                repairs.add("journal format " + version + " migrated to " + JournalFormat.FORMAT_VERSION + " ("
                        + segments.size() + " live records given generations)");
                LOG.log(System.Logger.Level.INFO, "journal " + file + ": " + repairs.getLast());
            } else {
                segments = journal.confirmGenerations(segments, replay);
            }
            for (SegmentRecord segment : segments) {
                journal.live.put(segment.key(), replay.encoded.get(segment.key()));
            }
            journal.records = replay.records;
            if (!replay.discarded.isEmpty() || !repairs.isEmpty()
                    || journal.records > 2L * journal.live.size() + COMPACT_SLACK) {
                journal.compact(); // damage is rewritten away, dead records dropped, both header copies rewritten
            } else {
                journal.appendAfter(file, replay.goodEnd); // a clean journal: nothing to write, only a torn tail to cut
            }
            return new Opened(journal, segments, replay.discarded, bytes.length, Optional.empty(), List.copyOf(repairs));
        } catch (IOException | RuntimeException | Error e) {
            journal.closeQuietly(e);
            throw e;
        }
    }

    /**
     * The header as read from its copies: the one to trust and where records start, or why neither can be
     * trusted; {@code repair} says which copy failed which check when the other was used.
     */
    private record Headers(JournalFormat.Header header, int recordsStart, String repair, String unreadable) {
        static Headers read(ByteBuffer file) {
            JournalFormat.HeaderCopy first = JournalFormat.readHeader(file, 0);
            if (first.header() != null && first.header().version() < JournalFormat.FORMAT_VERSION) {
                return new Headers(first.header(), first.header().length(), null, null); // one copy before format 3
            }
            JournalFormat.HeaderCopy second = JournalFormat.readHeader(file, JournalFormat.HEADER_SLOT);
            boolean secondUsable = second.header() != null && second.header().version() >= JournalFormat.FORMAT_VERSION;
            if (first.header() != null) {
                String repair = secondUsable && second.header().equals(first.header()) ? null
                        : secondUsable ? "header copy 2 differed from copy 1 (" + second.header() + "); copy 1 used,"
                        + " both rewritten"
                        : "header copy 2 failed its " + (second.header() == null ? second.failedCheck()
                        : "version (" + second.header().version() + ")") + " check; copy 1 used, both rewritten";
                return new Headers(first.header(), JournalFormat.RECORDS_START, repair, null);
            }
            if (secondUsable) {
                return new Headers(second.header(), JournalFormat.RECORDS_START, "header copy 1 failed its "
                        + first.failedCheck() + " check; copy 2 used, both rewritten", null);
            }
            return new Headers(null, 0, null, "header copy 1 failed its " + first.failedCheck() + " check, copy 2 its "
                    + (second.header() == null ? second.failedCheck() : "version (" + second.header().version() + ")")
                    + " check");
        }
    }

    /**
     * What differs between the journal's header and this cache, or null when nothing does; with
     * {@code REFUSE} a difference is thrown instead.
     */
    private static String mismatch(Path directory, DiskPersistence persistence, int pageSize, long extentBytes,
                                   Headers headers) {
        JournalFormat.Header found = headers.header();
        String[] difference;
        if (found == null) {
            difference = new String[] {"header", "kvtier journal format " + JournalFormat.FORMAT_VERSION,
                    "unreadable (" + headers.unreadable() + ")"};
        } else if (found.version() != JournalFormat.FORMAT_VERSION && found.version() != JournalFormat.MIGRATED_VERSION) {
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

    /** Opens the generations file, made empty first when {@code fresh} (a new or wiped journal). */
    private void openGenerations(boolean fresh) throws IOException {
        generations = FileChannel.open(directory.resolve(GENERATIONS), StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        if (fresh) {
            generations.truncate(0);
        }
    }

    /**
     * The live segments whose every page carries their record's generation; the others are counted
     * {@code SUPERSEDED}: a later removal, rewrite or reuse of their pages stamped them and its record was lost
     * from the journal, so serving them would roll a key back. Also sets the next generation above every one
     * seen.
     */
    private List<SegmentRecord> confirmGenerations(List<SegmentRecord> segments, Replay replay) throws IOException {
        long highest = replay.highestGeneration;
        List<SegmentRecord> confirmed = new ArrayList<>(segments.size());
        long size = generations.size();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment stamps = size == 0 ? MemorySegment.NULL
                    : generations.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            for (SegmentRecord r : segments) {
                long generation = JournalFormat.generationOf(replay.encoded.get(r.key()));
                boolean current = true;
                for (int i = 0; i < r.runCount(); i++) {
                    long at = JournalFormat.stampOffset(r.runChunk()[i], r.runFirstPage()[i], pagesPerExtent);
                    for (int p = 0; p < r.runPageCount()[i]; p++, at += JournalFormat.STAMP) {
                        long stamp = at + JournalFormat.STAMP <= size ? stamps.get(STAMP_LAYOUT, at) : 0;
                        highest = Math.max(highest, stamp);
                        current &= stamp == generation;
                    }
                }
                if (current) {
                    confirmed.add(r);
                } else {
                    replay.count(DiscardReason.SUPERSEDED);
                }
            }
        }
        nextGeneration = highest + 1;
        return confirmed;
    }

    /**
     * Gives each live segment of a format-2 journal a generation and stamps its pages with it, synced before
     * the compaction that follows writes them in format 3 (a record never durable without its stamps).
     */
    private void migrate(List<SegmentRecord> segments, Replay replay) throws IOException {
        generations.truncate(0);
        for (SegmentRecord r : segments) {
            long generation = nextGeneration++;
            byte[] put = JournalFormat.put(r, generation);
            stamp(put, generation);
            replay.encoded.put(r.key(), put);
        }
        generations.force(false);
    }

    /** Writes {@code generation} (0: free) into the generations file for every page of a PUT record. */
    private void stamp(byte[] put, long generation) throws IOException {
        JournalFormat.forEachRun(put, (slot, firstPage, pageCount) -> {
            ByteBuffer stamps = ByteBuffer.allocate(pageCount * JournalFormat.STAMP).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < pageCount; i++) {
                stamps.putLong(generation);
            }
            stamps.flip();
            long at = JournalFormat.stampOffset(slot, firstPage, pagesPerExtent);
            while (stamps.hasRemaining()) {
                at += generations.write(stamps, at);
            }
        });
    }

    /** Deletes the journal, the generations file and every persistent extent in {@code directory}. */
    private static void wipe(Path directory) throws IOException {
        Files.deleteIfExists(directory.resolve(FILE));
        Files.deleteIfExists(directory.resolve(GENERATIONS));
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
        final int version;
        final RecoveryProgress progress;
        /** Whole records read. */
        long records;
        /** The highest generation of any PUT read, live or not. */
        long highestGeneration;
        /** Where the last whole record ends: what a torn tail is cut back to. */
        int goodEnd;

        Replay(long pageSize, long extentBytes, int version, RecoveryProgress progress) {
            this.pageSize = pageSize;
            this.pagesPerExtent = (int) (extentBytes / pageSize);
            this.version = version;
            this.progress = progress;
        }

        void run(ByteBuffer file, int offset) {
            goodEnd = offset;
            while (offset < file.limit()) {
                JournalFormat.Decoded record = JournalFormat.readRecord(file, offset, version);
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
                progress.step("journal records read", records, -1);
                highestGeneration = Math.max(highestGeneration, record.generation());
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
        private int nextRecord(ByteBuffer file, int from) {
            for (int at = from; at <= file.limit() - JournalFormat.RECORD_HEADER; at++) {
                if (file.getInt(at) == JournalFormat.RECORD_MAGIC && JournalFormat.readRecord(file, at, version) != null) {
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
     * {@code data} (mapped runs), under a new generation stamped on those pages first: under
     * {@link FsyncPolicy#PER_SEGMENT} the bytes are synced first, then the stamps and the record are written and
     * synced, before this returns; under {@link FsyncPolicy#PER_BATCH} they join the batch. A record for the same
     * key replaces the older one. A record that cannot be written (a key or run list beyond what a record holds,
     * an I/O error) is a write failure: the segment stays cached, not persisted.
     *
     * @param record what is persisted: the key, positions, size, CRC32C and the pages its bytes lie in
     * @param data   the segment's bytes as mapped runs of the extents, in the order of {@code record}'s runs; read
     *               only, still owned by the caller
     */
    public void put(SegmentRecord record, List<MemorySegment> data) {
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
            long generation = nextGeneration++;
            byte[] bytes;
            try {
                bytes = JournalFormat.put(record, generation);
                stamp(bytes, generation); // the pages name their owner before the record claims them
                append(bytes);
            } catch (IOException | RuntimeException e) {
                failed("record segment \"" + record.key() + "\"", e);
                return;
            }
            live.put(record.key(), bytes);
            try {
                if (policy == FsyncPolicy.PER_SEGMENT) {
                    generations.force(false);
                    channel.force(false);
                } else if (policy == FsyncPolicy.PER_BATCH) {
                    for (int slot : record.runChunk()) {
                        unsyncedExtents.add(slot);
                    }
                    joinBatch();
                }
                compactIfDue();
            } catch (IOException | RuntimeException e) {
                failed("sync or compact after recording segment \"" + record.key() + "\"", e);
            }
        }
    }

    /**
     * Records that segment {@code key} no longer lives on DISK, and marks its pages free in the generations
     * file; does nothing when the journal holds no record of it. Call before its pages can be reused. Synced
     * as a put is: before this returns under {@link FsyncPolicy#PER_SEGMENT}, with the batch under
     * {@link FsyncPolicy#PER_BATCH}. Should the REMOVE still be lost (a damaged journal, or a power loss
     * before it was synced), the free pages outvote the record that survived it: recovery refuses it.
     *
     * @param key the key of the segment that left DISK
     */
    public synchronized void remove(String key) {
        if (closed) {
            return;
        }
        byte[] put = live.remove(key);
        if (put == null) {
            return;
        }
        try {
            append(JournalFormat.remove(key));
            stamp(put, 0);
            FsyncPolicy policy = persistence.fsyncPolicy();
            if (policy == FsyncPolicy.PER_SEGMENT) {
                generations.force(false);
                channel.force(false);
            } else if (policy == FsyncPolicy.PER_BATCH) {
                joinBatch();
            }
            compactIfDue();
        } catch (IOException | RuntimeException e) {
            failed("record the removal of segment \"" + key + "\"", e);
        }
    }

    /** {@link FsyncPolicy#PER_BATCH}: one more record in the unsynced batch, which is synced when due. */
    private void joinBatch() throws IOException {
        if (unsyncedRecords == 0) {
            oldestUnsyncedNanos = System.nanoTime();
        }
        unsyncedRecords++;
        if (unsyncedRecords >= BATCHES_BEHIND * persistence.batchRecords()) {
            syncBatch(); // the syncer fell behind: this call waits for it (backpressure)
        } else if (unsyncedRecords % persistence.batchRecords() == 0) {
            batchSyncer.execute(this::syncNow); // a full batch: synced in the background
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
     * Syncs the batch, here and now (with the lock held): the extents written since the last sync, the
     * generations file, then the journal.
     */
    private void syncBatch() throws IOException {
        if (unsyncedRecords == 0) {
            return;
        }
        Set<Integer> extents = unsyncedExtents;
        unsyncedExtents = new HashSet<>();
        unsyncedRecords = 0;
        syncExtents(extents);
        generations.force(false);
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
            generations.force(false);
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
        generations.force(false); // nor before the generations they name
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

    /**
     * Appends that failed (the segments concerned were cached but not persisted).
     *
     * @return the count of failed appends since the journal was opened, {@code >= 0}
     */
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
            try {
                if (generations != null) {
                    generations.close();
                }
            } catch (IOException e) {
                failed("close the generations file", e);
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
