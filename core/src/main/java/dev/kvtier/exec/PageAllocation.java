package dev.kvtier.exec;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The memory holding one segment in one kind of storage: a list of runs, each a contiguous stretch of pages
 * (already coalesced), whose lengths add up to {@link #sizeBytes()}. The last run ends at the
 * segment's last byte, not at the page boundary.
 *
 * <p>An allocation is either owned by a {@link PagedMemory} (returned to it by
 * {@link TransferExecutor#release}) or <em>external</em>: memory the caller owns (an adopted
 * device buffer) that the executor only references and never frees.
 *
 * <p>Immutable apart from its released flag; safe to share between threads.
 */
public final class PageAllocation {
    private final StorageKind storage;
    private final long sizeBytes;
    private final List<MemorySegment> runs;
    /** The memory that owns these pages; null for external memory. */
    final PagedMemory owner;
    /**
     * Per run: chunk index, first page, page count (owned allocations of two or more runs; null otherwise). A
     * one-run allocation (every small segment) keeps its run in {@link #chunk}, {@link #firstPage} and
     * {@link #pageCount} instead: releasing it then reads this object's own line, not three arrays more.
     */
    final int[] runChunk;
    final int[] runFirstPage;
    final int[] runPageCount;
    /** The run of a one-run owned allocation (see {@link #runChunk}); 0 otherwise. */
    final int chunk;
    final int firstPage;
    final int pageCount;
    private volatile boolean released;
    /** Written by a copy that timed out and may still run: its pages are never reused. */
    private volatile boolean quarantined;

    PageAllocation(StorageKind storage, long sizeBytes, List<MemorySegment> runs, PagedMemory owner,
                   int[] runChunk, int[] runFirstPage, int[] runPageCount) {
        this.storage = storage;
        this.sizeBytes = sizeBytes;
        this.runs = List.copyOf(runs);
        this.owner = owner;
        this.runChunk = runChunk;
        this.runFirstPage = runFirstPage;
        this.runPageCount = runPageCount;
        this.chunk = 0;
        this.firstPage = 0;
        this.pageCount = 0;
    }

    /** An owned allocation of one run: {@code pageCount} pages from {@code firstPage} of chunk slot {@code chunk}. */
    PageAllocation(StorageKind storage, long sizeBytes, MemorySegment run, PagedMemory owner, int chunk, int firstPage,
                   int pageCount) {
        this.storage = storage;
        this.sizeBytes = sizeBytes;
        this.runs = List.of(run);
        this.owner = owner;
        this.runChunk = null;
        this.runFirstPage = null;
        this.runPageCount = null;
        this.chunk = chunk;
        this.firstPage = firstPage;
        this.pageCount = pageCount;
    }

    /** Whether this owned allocation keeps its one run in fields rather than arrays. */
    boolean isOneRun() {
        return owner != null && runChunk == null;
    }

    /** Memory the caller owns, referenced as one run and never freed by the executor. */
    static PageAllocation external(StorageKind storage, MemorySegment memory) {
        return new PageAllocation(storage, memory.byteSize(), memory.byteSize() == 0 ? List.of() : List.of(memory),
                null, null, null, null);
    }

    /** What kind of memory this is. */
    public StorageKind storage() {
        return storage;
    }

    /** Device or host memory. */
    public MemoryKind kind() {
        return storage.side();
    }

    /** The segment's size in bytes: the sum of the runs' lengths. */
    public long sizeBytes() {
        return sizeBytes;
    }

    /** The contiguous runs in segment order; empty for a zero-byte segment. */
    public List<MemorySegment> runs() {
        return runs;
    }

    /**
     * The slot of the chunk that run {@code run} of {@link #runs()} lies in (with
     * {@link #firstPageOf} and {@link #pageCountOf}: where the run is in its memory, which is what a
     * persisted DISK segment records, see {@link TransferExecutor#claim}).
     *
     * @throws IllegalStateException for external memory, which has no pages
     */
    public int chunkOf(int run) {
        return isOneRun(run) ? chunk : runChunk[run];
    }

    /** The first page of run {@code run} within its chunk; see {@link #chunkOf}. */
    public int firstPageOf(int run) {
        return isOneRun(run) ? firstPage : runFirstPage[run];
    }

    /** The pages run {@code run} spans; see {@link #chunkOf}. */
    public int pageCountOf(int run) {
        return isOneRun(run) ? pageCount : runPageCount[run];
    }

    /** Whether the run is kept in fields; throws for external memory and for a run out of range. */
    private boolean isOneRun(int run) {
        if (owner == null) {
            throw new IllegalStateException("external memory has no pages: " + this);
        }
        if (run < 0 || run >= runs.size()) {
            throw new IndexOutOfBoundsException("run " + run + " of " + runs.size() + " in " + this);
        }
        return runChunk == null;
    }

    /** Whether this is caller-owned memory (adopted) that the executor never frees. */
    public boolean isExternal() {
        return owner == null;
    }

    boolean markReleased() {
        synchronized (this) {
            if (released) {
                return false;
            }
            released = true;
            return true;
        }
    }

    /** Marks the pages as possibly still written by a copy that timed out: never reused or freed. */
    void quarantine() {
        quarantined = true;
    }

    /** Whether a copy that timed out may still write these pages (they are never reused or freed). */
    public boolean isQuarantined() {
        return quarantined;
    }

    /** Whether the pages have been given back; a released allocation must not be used again. */
    public boolean isReleased() {
        return released;
    }

    @Override
    public String toString() {
        return "PageAllocation[" + storage + ", " + sizeBytes + " bytes in " + runs.size() + " run(s)"
                + (isExternal() ? ", external" : "") + (quarantined ? ", quarantined" : "") + "]";
    }
}
