package dev.kvtier.exec;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One kind of memory cut into fixed-size pages, grown lazily a chunk at a time from a
 * {@link ChunkAllocator}. A segment gets any free pages, preferring one contiguous run, so
 * allocation never fails for fragmentation: it fails only when the allocator cannot supply
 * another chunk (device out of memory, disk full), and then gives back the chunks it grew for that
 * request. Freed pages are reused before the memory grows. In a capped memory (a tier with a budget:
 * device, pinned host) a chunk whose pages are all free goes back to its allocator as soon as another
 * fully free chunk is kept: one spare stays, because growing is what is slow (pinning). Uncapped
 * memory (DISK extents) keeps its chunks until close: re-creating a zero-filled extent costs far more
 * than the disk space it holds (measured in the simulator: returning extents cost ~15% of requests/s).
 *
 * <p>Thread-safe: every method is atomic. The caller guarantees that pages are released only
 * when no copy can still touch them, and that {@link #close()} runs after the last copy.
 */
final class PagedMemory implements AutoCloseable {

    /**
     * A chunk and its free pages; {@code freeCount} is the cardinality of {@code freePages}, kept beside it.
     * {@code firstFree}: no page below it is free, so a search for free pages starts there. Pages are taken
     * from the low end and a chunk fills front to back (a DISK extent of 16,384 pages holding small segments
     * was scanned from its first word for every allocation: up to 256 words of pages in use).
     */
    private static final class Chunk {
        final MemoryChunk memory;
        /** Pages in this chunk: the memory's chunk size, or fewer for the last chunk of a capped memory. */
        final int pages;
        final PageBits freePages;
        int freeCount;
        int firstFree;

        Chunk(MemoryChunk memory, int pages) {
            this.memory = memory;
            this.pages = pages;
            this.freePages = new PageBits(pages);
            this.freePages.set(0, pages);
            this.freeCount = pages;
        }

        /** Marks pages {@code [first, first + count)} used; they were free. */
        void take(int first, int count) {
            freePages.clear(first, first + count);
            freeCount -= count;
            if (first == firstFree) {
                firstFree = first + count; // the next free page, if any, is at or above it
            }
        }

        /** Marks pages {@code [first, first + count)} free; they were used. */
        void free(int first, int count) {
            freePages.set(first, first + count);
            freeCount += count;
            firstFree = Math.min(firstFree, first);
        }
    }

    /**
     * The free pages of a chunk, bit {@code i} set when page {@code i} is free: {@link java.util.BitSet}'s meaning
     * for the four methods used, on a plain word array. BitSet re-counts its words in use from the top after every
     * range clear, and on a full tier (almost every word 0) that scanned the chunk's words on every allocation.
     * Bits at and beyond the chunk's page count are clear, as in a BitSet.
     */
    static final class PageBits {
        private final long[] words;

        PageBits(int bits) {
            this.words = new long[(bits + 63) >>> 6];
        }

        /** The first set bit at or after {@code from}, or -1. */
        int nextSetBit(int from) {
            int w = from >>> 6;
            if (w >= words.length) {
                return -1;
            }
            long word = words[w] & (-1L << from); // a shift by from takes its low 6 bits
            while (word == 0) {
                if (++w == words.length) {
                    return -1;
                }
                word = words[w];
            }
            return (w << 6) + Long.numberOfTrailingZeros(word);
        }

        /** The first clear bit at or after {@code from}. */
        int nextClearBit(int from) {
            int w = from >>> 6;
            if (w >= words.length) {
                return from;
            }
            long word = ~words[w] & (-1L << from);
            while (word == 0) {
                if (++w == words.length) {
                    return w << 6;
                }
                word = ~words[w];
            }
            return (w << 6) + Long.numberOfTrailingZeros(word);
        }

        /** Sets bits {@code [from, to)}. */
        void set(int from, int to) {
            for (int i = from; i < to; i++) {
                words[i >>> 6] |= 1L << i;
            }
        }

        /** Clears bits {@code [from, to)}. */
        void clear(int from, int to) {
            for (int i = from; i < to; i++) {
                words[i >>> 6] &= ~(1L << i);
            }
        }
    }

    private final StorageKind kind;
    private final long pageSize;
    private final int pagesPerChunk;
    /** Pages this memory may hold at most in all its chunks (its budget); {@link Long#MAX_VALUE} for an uncapped one. */
    private final long capacityPages;
    private final ChunkAllocator allocator;
    /** Fully free chunks kept for reuse before another fully free one goes back to its allocator. */
    static final int SPARE_CHUNKS = 1;

    /** Chunk slots by index (the index a {@link PageAllocation} names); null where a chunk was given back. */
    private final List<Chunk> chunks = new ArrayList<>();
    private int liveChunks;
    /** Pages in the chunks held, used or free. */
    private long reservedPages;
    /** Where the last one-run allocation found its pages: looked at first next time (small segments come in streams). */
    private int hintChunk;
    /**
     * The runs the last releases freed, most recent on top ({@code recentCount} of them): a one-run allocation that
     * fits takes the top one before any bit search. On a full tier the pages an allocation needs are the ones that
     * making room for it has just freed (a promotion onto the GPU takes the pages of the victim demoted for it), so
     * they are found without scanning for free bits (issue 11: the scan was ~3% of a trace reference), and their
     * lines are still in the CPU's cache. An entry is checked before use (its chunk still there, its pages still
     * free): a stale one is dropped.
     */
    private static final int RECENT_RUNS = 8;
    private final Chunk[] recentChunk = new Chunk[RECENT_RUNS];
    private final int[] recentSlot = new int[RECENT_RUNS];
    private final int[] recentFirst = new int[RECENT_RUNS];
    private final int[] recentPages = new int[RECENT_RUNS];
    private int recentCount;
    private long freePageCount;
    private long pagesInUse;
    private long bytesInUse;
    private long quarantinedBytes;
    private boolean closed;

    /**
     * @param kind       what memory this is (for messages and {@link PageAllocation#storage()})
     * @param pageSize   bytes per page, {@code > 0}
     * @param chunkBytes bytes per chunk, rounded up to whole pages, {@code >= pageSize}
     * @param allocator  where chunks come from
     * @throws IllegalArgumentException naming the argument for a non-positive page size, a chunk
     *                                  smaller than a page or of more than {@code 2^31-1} pages
     */
    public PagedMemory(StorageKind kind, long pageSize, long chunkBytes, ChunkAllocator allocator) {
        this(kind, pageSize, chunkBytes, Long.MAX_VALUE, allocator);
    }

    /**
     * As {@link #PagedMemory(StorageKind, long, long, ChunkAllocator)}, holding at most {@code capacityBytes}
     * (rounded down to whole pages) in all its chunks: the last chunk it grows is smaller when the capacity is
     * not a whole number of chunks, so the memory holds exactly its capacity, and a request beyond it fails
     * with {@link PhysicallyFullException}. (Chunks of equal size that only came to a page under a budget let
     * the store count one block more than the pages could hold: every allocation on a full tier then failed
     * once and made room a second time, which cost a third of the simulator's time in issue 11.)
     *
     * @throws IllegalArgumentException if {@code capacityBytes < pageSize}
     */
    public PagedMemory(StorageKind kind, long pageSize, long chunkBytes, long capacityBytes, ChunkAllocator allocator) {
        if (kind == null || allocator == null) {
            throw new IllegalArgumentException("kind and allocator must not be null");
        }
        if (pageSize <= 0) {
            throw new IllegalArgumentException("pageSize must be > 0, was " + pageSize);
        }
        if (chunkBytes < pageSize) {
            throw new IllegalArgumentException("chunkBytes must be >= pageSize (" + pageSize + "), was " + chunkBytes);
        }
        long pages = (chunkBytes + pageSize - 1) / pageSize;
        if (pages > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("chunkBytes must be at most 2^31-1 pages, was " + chunkBytes);
        }
        this.kind = kind;
        this.pageSize = pageSize;
        this.pagesPerChunk = (int) pages;
        if (capacityBytes < pageSize) {
            throw new IllegalArgumentException("capacityBytes must be >= pageSize (" + pageSize + "), was " + capacityBytes);
        }
        this.capacityPages = capacityBytes == Long.MAX_VALUE ? Long.MAX_VALUE : capacityBytes / pageSize;
        this.allocator = allocator;
    }

    /**
     * Allocates {@code bytes} bytes as whole pages, growing the memory by as many chunks as needed.
     * A zero-byte request gets an allocation with no runs.
     *
     * @throws IOException           when the allocator cannot supply a chunk; nothing was allocated
     * @throws IllegalStateException after {@link #close()}
     */
    public synchronized PageAllocation allocate(long bytes) throws IOException {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes must be >= 0, was " + bytes);
        }
        ensureOpen();
        long needed = (bytes + pageSize - 1) / pageSize;
        List<Integer> grown = null;
        try {
            while (freePageCount < needed) {
                if (reservedPages >= capacityPages) {
                    throw new PhysicallyFullException(kind, bytes, (needed - freePageCount) * pageSize,
                            capacityPages * pageSize);
                }
                if (grown == null) {
                    grown = new ArrayList<>(1);
                }
                grown.add(grow(freeSlot()));
            }
        } catch (IOException | RuntimeException e) {
            // Nothing was allocated: give back the chunks grown for this request (an oversized DISK put
            // must not keep the extents it made, and the disk space with them, until close).
            for (int slot : grown == null ? List.<Integer>of() : grown) {
                try {
                    giveBack(slot);
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
        if (needed > 0 && needed <= pagesPerChunk) {
            PageAllocation single = takeOneRun(bytes, (int) needed);
            if (single != null) {
                return single;
            }
        }
        List<int[]> runs = takePages(needed);
        List<MemorySegment> segments = new ArrayList<>(runs.size());
        int[] runChunk = new int[runs.size()];
        int[] runFirst = new int[runs.size()];
        int[] runCount = new int[runs.size()];
        long remaining = bytes;
        for (int i = 0; i < runs.size(); i++) {
            int[] run = runs.get(i);
            runChunk[i] = run[0];
            runFirst[i] = run[1];
            runCount[i] = run[2];
            long length = Math.min(remaining, (long) run[2] * pageSize);
            segments.add(chunks.get(run[0]).memory.memory().asSlice((long) run[1] * pageSize, length));
            remaining -= length;
        }
        pagesInUse += needed;
        bytesInUse += bytes;
        freePageCount -= needed;
        return new PageAllocation(kind, bytes, segments, this, runChunk, runFirst, runCount);
    }

    /**
     * The common case without lists: {@code needed} contiguous free pages in one chunk, taken from the run freed
     * last when it is large enough, else looked for first in the chunk that served the last such request, then in
     * the others in order; null when no chunk has such a run.
     */
    private PageAllocation takeOneRun(long bytes, int needed) {
        while (recentCount > 0) {
            int top = recentCount - 1;
            Chunk chunk = recentChunk[top];
            int slot = recentSlot[top];
            int first = recentFirst[top];
            if (chunks.get(slot) != chunk || chunk.freePages.nextClearBit(first) < first + recentPages[top]) {
                recentChunk[top] = null; // given back, or (some of) its pages taken meanwhile by a search
                recentCount--;
                continue;
            }
            if (needed > recentPages[top]) {
                break; // too small for this one: kept for the next
            }
            if (needed < recentPages[top]) {
                recentFirst[top] += needed;
                recentPages[top] -= needed;
            } else {
                recentChunk[top] = null;
                recentCount--;
            }
            return takeRun(slot, chunk, first, needed, bytes);
        }
        int count = chunks.size();
        for (int i = 0; i < count; i++) {
            int c = i == 0 ? hintChunk : (i <= hintChunk ? i - 1 : i);
            if (c >= count) {
                continue;
            }
            Chunk chunk = chunks.get(c);
            if (chunk == null || chunk.freeCount < needed) {
                continue;
            }
            PageBits free = chunk.freePages;
            for (int start = free.nextSetBit(chunk.firstFree); start >= 0; start = free.nextSetBit(start)) {
                int end = needed == 1 ? start + 1 : free.nextClearBit(start);
                if (end - start >= needed) {
                    hintChunk = c;
                    return takeRun(c, chunk, start, needed, bytes);
                }
                start = end;
            }
        }
        return null;
    }

    /** Takes the free pages {@code [first, first + needed)} of the chunk in {@code slot} as one allocation. */
    private PageAllocation takeRun(int slot, Chunk chunk, int first, int needed, long bytes) {
        chunk.take(first, needed);
        pagesInUse += needed;
        bytesInUse += bytes;
        freePageCount -= needed;
        MemorySegment run = chunk.memory.memory().asSlice((long) first * pageSize, bytes);
        return new PageAllocation(kind, bytes, run, this, slot, first, needed);
    }

    /** Remembers a run just freed (see {@link #recentChunk}); the oldest is forgotten when all entries are taken. */
    private void freedRecently(int slot, int first, int pages) {
        if (recentCount == RECENT_RUNS) {
            System.arraycopy(recentChunk, 1, recentChunk, 0, RECENT_RUNS - 1);
            System.arraycopy(recentSlot, 1, recentSlot, 0, RECENT_RUNS - 1);
            System.arraycopy(recentFirst, 1, recentFirst, 0, RECENT_RUNS - 1);
            System.arraycopy(recentPages, 1, recentPages, 0, RECENT_RUNS - 1);
            recentCount--;
        }
        recentChunk[recentCount] = chunks.get(slot);
        recentSlot[recentCount] = slot;
        recentFirst[recentCount] = first;
        recentPages[recentCount] = pages;
        recentCount++;
    }

    /**
     * Takes a chunk from the allocator into {@code slot} (free), all its pages free; returns the slot. The chunk
     * has the memory's chunk size, or what is left of its capacity when that is less.
     */
    private int grow(int slot) throws IOException {
        int pages = (int) Math.min(pagesPerChunk, capacityPages - reservedPages);
        MemoryChunk memory = allocator.allocate((long) pages * pageSize, slot);
        place(slot, new Chunk(memory, pages));
        freePageCount += pages;
        reservedPages += pages;
        return slot;
    }

    /**
     * Grows this memory until slots {@code 0..chunkCount-1} all hold a chunk, every new page free: how a
     * reopened DISK memory takes back the extents a journal names before {@link #claim}ing their pages.
     *
     * @throws IOException             when the allocator cannot supply a chunk (the chunks grown stay)
     * @throws PhysicallyFullException when that is more chunks than this memory may take
     */
    public synchronized void growTo(int chunkCount) throws IOException {
        ensureOpen();
        long maxChunks = capacityPages == Long.MAX_VALUE ? Long.MAX_VALUE : (capacityPages + pagesPerChunk - 1) / pagesPerChunk;
        if (chunkCount > maxChunks) {
            throw new PhysicallyFullException(kind, (long) chunkCount * pagesPerChunk * pageSize,
                    (long) chunkCount * pagesPerChunk * pageSize - capacityPages * pageSize, capacityPages * pageSize);
        }
        for (int slot = 0; slot < chunkCount; slot++) {
            if (slot >= chunks.size() || chunks.get(slot) == null) {
                grow(slot);
            }
        }
    }

    /**
     * Takes exactly the pages named (per run: chunk slot, first page, page count, in segment order) as the
     * allocation of a {@code bytes}-byte segment, as {@link #allocate} would have handed them out: how a
     * reopened DISK memory gives a recovered segment back the pages its bytes are in.
     *
     * @throws IllegalArgumentException naming the run when a run lies outside the chunks held, a page is
     *                                  already in use, or the pages do not fit {@code bytes}; nothing is taken then
     */
    public synchronized PageAllocation claim(long bytes, int[] runChunk, int[] runFirst, int[] runCount) {
        ensureOpen();
        if (runChunk.length != runFirst.length || runChunk.length != runCount.length) {
            throw new IllegalArgumentException("run arrays differ in length: " + runChunk.length + ", "
                    + runFirst.length + ", " + runCount.length);
        }
        long pages = 0;
        for (int count : runCount) {
            pages += count;
        }
        if (bytes < 0 || pages != (bytes + pageSize - 1) / pageSize) {
            throw new IllegalArgumentException(pages + " pages of " + pageSize + " bytes cannot hold exactly a "
                    + bytes + "-byte segment");
        }
        int taken = 0;
        try {
            for (; taken < runChunk.length; taken++) {
                int c = runChunk[taken];
                int first = runFirst[taken];
                int count = runCount[taken];
                if (c < 0 || c >= chunks.size() || chunks.get(c) == null || first < 0 || count <= 0
                        || first > chunks.get(c).pages - count) {
                    throw new IllegalArgumentException("run " + taken + " (chunk " + c + ", pages " + first + "+"
                            + count + ") lies outside the " + liveChunks + " chunks of " + pagesPerChunk + " pages held");
                }
                PageBits free = chunks.get(c).freePages;
                if (free.nextClearBit(first) < first + count) {
                    throw new IllegalArgumentException("run " + taken + " (chunk " + c + ", pages " + first + "+"
                            + count + ") overlaps pages already in use");
                }
                chunks.get(c).take(first, count);
            }
        } catch (IllegalArgumentException e) {
            for (int i = 0; i < taken; i++) {
                chunks.get(runChunk[i]).free(runFirst[i], runCount[i]);
            }
            throw e;
        }
        List<MemorySegment> segments = new ArrayList<>(runChunk.length);
        long remaining = bytes;
        for (int i = 0; i < runChunk.length; i++) {
            long length = Math.min(remaining, (long) runCount[i] * pageSize);
            segments.add(chunks.get(runChunk[i]).memory.memory().asSlice((long) runFirst[i] * pageSize, length));
            remaining -= length;
        }
        pagesInUse += pages;
        bytesInUse += bytes;
        freePageCount -= pages;
        return new PageAllocation(kind, bytes, segments, this, runChunk.clone(), runFirst.clone(), runCount.clone());
    }

    /** Picks {@code needed} free pages as (chunk, first page, count) runs: one run if any chunk has one. */
    private List<int[]> takePages(long needed) {
        List<int[]> runs = new ArrayList<>();
        if (needed == 0) {
            return runs;
        }
        if (needed <= pagesPerChunk) {
            for (int c = 0; c < chunks.size(); c++) {
                if (chunks.get(c) == null) {
                    continue;
                }
                PageBits free = chunks.get(c).freePages;
                for (int start = free.nextSetBit(chunks.get(c).firstFree); start >= 0; start = free.nextSetBit(start)) {
                    int end = free.nextClearBit(start);
                    if (end - start >= needed) {
                        chunks.get(c).take(start, (int) needed);
                        runs.add(new int[] {c, start, (int) needed});
                        return runs;
                    }
                    start = end;
                }
            }
        }
        long left = needed;
        for (int c = 0; c < chunks.size() && left > 0; c++) {
            if (chunks.get(c) == null) {
                continue;
            }
            PageBits free = chunks.get(c).freePages;
            for (int start = free.nextSetBit(chunks.get(c).firstFree); start >= 0 && left > 0; start = free.nextSetBit(start)) {
                int end = (int) Math.min(free.nextClearBit(start), start + left);
                chunks.get(c).take(start, end - start);
                runs.add(new int[] {c, start, end - start});
                left -= end - start;
                start = end;
            }
        }
        if (left > 0) {
            throw new IllegalStateException("page accounting broken: " + left + " pages missing in " + kind);
        }
        return runs;
    }

    /**
     * Returns the allocation's pages for reuse. The caller guarantees no copy can still touch them.
     *
     * @throws IllegalArgumentException if the allocation belongs to another memory
     * @throws IllegalStateException    if it was already released
     */
    public synchronized void release(PageAllocation allocation) {
        if (allocation.owner != this) {
            throw new IllegalArgumentException("allocation " + allocation + " does not belong to the " + kind + " memory");
        }
        if (!allocation.markReleased()) {
            throw new IllegalStateException("allocation " + allocation + " was already released");
        }
        if (closed) {
            return;
        }
        if (allocation.isQuarantined()) {
            quarantinedBytes += allocation.sizeBytes(); // a timed-out copy may still write them: never reused
            return;
        }
        if (allocation.isOneRun()) {
            freeRun(allocation.chunk, allocation.firstPage, allocation.pageCount);
            bytesInUse -= allocation.sizeBytes();
            giveBackIfSpare(allocation.chunk);
            return;
        }
        for (int i = 0; i < allocation.runChunk.length; i++) {
            freeRun(allocation.runChunk[i], allocation.runFirstPage[i], allocation.runPageCount[i]);
        }
        bytesInUse -= allocation.sizeBytes();
        for (int i = 0; i < allocation.runChunk.length; i++) {
            giveBackIfSpare(allocation.runChunk[i]);
        }
    }

    /** Frees one run's pages and counts them free. */
    private void freeRun(int slot, int first, int pages) {
        chunks.get(slot).free(first, pages);
        freedRecently(slot, first, pages);
        pagesInUse -= pages;
        freePageCount += pages;
    }

    /** In a capped memory, gives the chunk in {@code slot} back when all its pages are free and another such is kept. */
    private void giveBackIfSpare(int slot) {
        if (capacityPages != Long.MAX_VALUE && chunks.get(slot) != null && isFullyFree(slot) && anotherFullyFree(slot)) {
            giveBack(slot);
        }
    }

    /** The first slot holding no chunk (one past the end when all do). */
    private int freeSlot() {
        int slot = chunks.indexOf(null);
        return slot >= 0 ? slot : chunks.size();
    }

    /** Puts a new chunk in {@code slot}, which holds none (slots below it are filled with empty ones). */
    private void place(int slot, Chunk chunk) {
        liveChunks++;
        while (chunks.size() <= slot) {
            chunks.add(null);
        }
        chunks.set(slot, chunk);
    }

    /**
     * Closes the chunk in {@code slot}, frees the slot and counts its pages out. Called only for a chunk no
     * page of which is in use, so no copy can touch it.
     */
    private void giveBack(int slot) {
        Chunk chunk = chunks.set(slot, null);
        liveChunks--;
        freePageCount -= chunk.pages;
        reservedPages -= chunk.pages;
        chunk.memory.close();
    }

    private boolean isFullyFree(int slot) {
        return chunks.get(slot).freeCount == chunks.get(slot).pages;
    }

    private boolean anotherFullyFree(int slot) {
        int others = 0;
        for (int c = 0; c < chunks.size(); c++) {
            if (c != slot && chunks.get(c) != null && isFullyFree(c) && ++others >= SPARE_CHUNKS) {
                return true;
            }
        }
        return false;
    }

    /** Bytes of live segments (not rounded to pages). */
    public synchronized long bytesInUse() {
        return bytesInUse;
    }

    /** Bytes given back while quarantined: held for good, since a copy that timed out may still write them. */
    synchronized long quarantinedBytes() {
        return quarantinedBytes;
    }

    /** Pages held by live segments. */
    public synchronized long pagesInUse() {
        return pagesInUse;
    }

    /** Bytes of all chunks taken from the allocator so far. */
    public synchronized long bytesReserved() {
        return reservedPages * pageSize;
    }

    /** Bytes per page. */
    public long pageSize() {
        return pageSize;
    }

    /** Bytes per chunk (whole pages). */
    public long chunkBytes() {
        return (long) pagesPerChunk * pageSize;
    }

    /** What memory this is. */
    public StorageKind kind() {
        return kind;
    }

    /** Where chunks come from. */
    public String allocatorDescription() {
        return allocator.description();
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the " + kind + " memory is closed");
        }
    }

    /** Frees every chunk; idempotent. Call only after the last copy touching this memory completed. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        Cleanup cleanup = new Cleanup();
        for (Chunk chunk : chunks) {
            if (chunk != null) {
                cleanup.run(chunk.memory::close);
            }
        }
        chunks.clear();
        freePageCount = 0;
        Arrays.fill(recentChunk, null);
        recentCount = 0;
        cleanup.rethrowFirst();
    }
}
