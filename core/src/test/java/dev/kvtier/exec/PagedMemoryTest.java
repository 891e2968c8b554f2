package dev.kvtier.exec;

import dev.kvtier.exec.host.NativeChunkAllocator;


import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PagedMemoryTest {
    private static final int PAGE = 256;

    /** Counts chunks handed out and closed, so leaks show. */
    static final class CountingAllocator implements ChunkAllocator {
        final ChunkAllocator inner = new NativeChunkAllocator("test memory");
        final AtomicInteger open = new AtomicInteger();
        final AtomicInteger allocated = new AtomicInteger();
        int failAfter = Integer.MAX_VALUE;

        @Override
        public MemoryChunk allocate(long bytes) throws IOException {
            if (allocated.get() >= failAfter) {
                throw new IOException("out of memory (test)");
            }
            MemoryChunk chunk = inner.allocate(bytes);
            allocated.incrementAndGet();
            open.incrementAndGet();
            return new MemoryChunk() {
                boolean closed;

                @Override
                public MemorySegment memory() {
                    return chunk.memory();
                }

                @Override
                public void close() {
                    if (!closed) {
                        closed = true;
                        open.decrementAndGet();
                        chunk.close();
                    }
                }
            };
        }

        @Override
        public String description() {
            return "counting";
        }
    }

    private static long total(PageAllocation a) {
        return a.runs().stream().mapToLong(MemorySegment::byteSize).sum();
    }

    @Test
    void allocationsCoverTheirSizeExactlyAndCoalesceContiguousPages() throws IOException {
        try (PagedMemory memory = new PagedMemory(StorageKind.PINNED_HOST, PAGE, 8 * PAGE, new CountingAllocator())) {
            for (long size : new long[] {0, 1, PAGE - 1, PAGE, PAGE + 1, 8L * PAGE}) {
                PageAllocation a = memory.allocate(size);
                assertEquals(size, a.sizeBytes());
                assertEquals(size, total(a));
                assertEquals(size == 0 ? 0 : 1, a.runs().size(), "fresh pages come as one run: " + a);
                memory.release(a);
            }
            assertEquals(0, memory.bytesInUse());
            assertEquals(0, memory.pagesInUse());
        }
    }

    @Test
    void fragmentationNeverFailsAnAllocationAndFreedPagesAreReused() throws IOException {
        CountingAllocator allocator = new CountingAllocator();
        try (PagedMemory memory = new PagedMemory(StorageKind.DEVICE, PAGE, 8 * PAGE, allocator)) {
            List<PageAllocation> singles = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                singles.add(memory.allocate(PAGE));
            }
            for (int i = 0; i < 8; i += 2) {
                memory.release(singles.get(i));
            }
            allocator.failAfter = allocator.allocated.get();   // growing now would fail
            PageAllocation scattered = memory.allocate(4L * PAGE);
            assertEquals(4, scattered.runs().size(), "four free pages, none adjacent: " + scattered);
            assertEquals(4L * PAGE, total(scattered));
            assertEquals(8L * PAGE, memory.bytesReserved(), "reused, not grown");
            IOException e = assertThrows(IOException.class, () -> memory.allocate(1));
            assertTrue(e.getMessage().contains("out of memory"));
            assertEquals(8, memory.pagesInUse(), "a failed allocation takes nothing");
        }
        assertEquals(0, allocator.open.get(), "close frees every chunk");
    }

    /** A capacity that is not a whole number of chunks: the last chunk is smaller, and no page more is taken. */
    @Test
    void aCappedMemoryGrowsALastSmallerChunkToItsExactCapacity() throws IOException {
        CountingAllocator allocator = new CountingAllocator();
        try (PagedMemory memory = new PagedMemory(StorageKind.DEVICE, PAGE, 4 * PAGE, 10L * PAGE, allocator)) {
            List<PageAllocation> singles = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                singles.add(memory.allocate(PAGE));
            }
            assertEquals(10L * PAGE, memory.bytesReserved(), "4 + 4 + 2 pages");
            assertEquals(3, allocator.open.get());
            PhysicallyFullException full = assertThrows(PhysicallyFullException.class, () -> memory.allocate(1));
            assertEquals(PAGE, full.shortBytes());
            PageAllocation inLast = singles.get(9);
            memory.release(singles.get(8));
            memory.release(inLast); // the small chunk is fully free: kept as the one spare
            assertEquals(3, allocator.open.get());
            PageAllocation two = memory.allocate(2L * PAGE);
            assertEquals(1, two.runs().size(), "the small chunk's two pages, one run: " + two);
            assertThrows(PhysicallyFullException.class, () -> memory.allocate(1));
            memory.release(two);
            for (int i = 0; i < 8; i++) {
                memory.release(singles.get(i));
            }
            assertEquals(1, allocator.open.get(), "fully free chunks beyond one spare went back");
            for (int i = 0; i < 10; i++) {
                memory.allocate(PAGE);
            }
            assertEquals(10L * PAGE, memory.bytesReserved(), "grown back to exactly the capacity");
            assertThrows(PhysicallyFullException.class, () -> memory.allocate(1));
        }
        assertEquals(0, allocator.open.get());
    }

    /**
     * The search for free pages starts past the pages a chunk has filled from its front; a page freed below that
     * point is found again (first, since the search goes from the front), and a run freed in the middle too.
     */
    @Test
    void pagesFreedBelowTheFilledFrontAreFoundAgain() throws IOException {
        CountingAllocator allocator = new CountingAllocator();
        try (PagedMemory memory = new PagedMemory(StorageKind.MAPPED_FILE, PAGE, 200 * PAGE, allocator)) {
            List<PageAllocation> singles = new ArrayList<>();
            for (int i = 0; i < 150; i++) {
                PageAllocation one = memory.allocate(PAGE);
                assertEquals(i, one.firstPageOf(0), "a chunk fills front to back");
                singles.add(one);
            }
            memory.release(singles.get(3));
            assertEquals(3, memory.allocate(PAGE).firstPageOf(0), "the freed page below the front, first");
            assertEquals(150, memory.allocate(PAGE).firstPageOf(0), "then past the front");
            memory.release(singles.get(70));
            memory.release(singles.get(71));
            memory.release(singles.get(0));
            PageAllocation two = memory.allocate(2L * PAGE);
            assertEquals(1, two.runs().size(), "one run where two free pages are adjacent: " + two);
            assertEquals(70, two.firstPageOf(0));
            assertEquals(0, memory.allocate(PAGE).firstPageOf(0));
            assertEquals(151, memory.allocate(PAGE).firstPageOf(0));
            assertEquals(1, allocator.allocated.get(), "every allocation from the one chunk");
        }
    }

    /**
     * A one-run allocation takes the run freed last when it fits (on a full tier: the pages making room for it has
     * just freed), most recent first; a remembered run whose pages a search took meanwhile is never handed out twice.
     */
    @Test
    void theRunFreedLastIsTakenFirstAndNeverTwice() throws IOException {
        CountingAllocator allocator = new CountingAllocator();
        try (PagedMemory memory = new PagedMemory(StorageKind.DEVICE, PAGE, 8 * PAGE, allocator)) {
            List<PageAllocation> singles = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                singles.add(memory.allocate(PAGE));
            }
            memory.release(singles.get(6));
            memory.release(singles.get(2));
            assertEquals(2, memory.allocate(PAGE).firstPageOf(0), "the page freed last");
            assertEquals(6, memory.allocate(PAGE).firstPageOf(0), "then the one before it");
            memory.release(singles.get(4));
            memory.release(singles.get(5)); // freed last, but one page: too small for two, and kept
            PageAllocation two = memory.allocate(2L * PAGE);
            assertEquals(List.of(0), List.of(two.chunkOf(0)), "two pages: " + two);
            assertEquals(1, two.runs().size(), "one run, found by the search: " + two);
            assertEquals(1, allocator.allocated.get());
            // Page 4 and 5 were taken by the search above (a run of two): both remembered runs are stale now.
            PageAllocation next = memory.allocate(PAGE);
            assertEquals(1, next.chunkOf(0), "the first chunk is full: nothing remembered may be handed out again");
        }
    }

    /**
     * A one-run allocation (its run kept in fields) and a many-run one (arrays) report their runs alike, reject a run
     * out of range, and give back exactly their pages: the pages of each are taken again, and a second release fails.
     */
    @Test
    void oneRunAndManyRunAllocationsReportAndGiveBackTheirPages() throws IOException {
        try (PagedMemory memory = new PagedMemory(StorageKind.DEVICE, PAGE, 4 * PAGE, new CountingAllocator())) {
            List<PageAllocation> singles = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                singles.add(memory.allocate(PAGE));
            }
            memory.release(singles.get(0));
            memory.release(singles.get(2));
            PageAllocation split = memory.allocate(2L * PAGE - 1); // pages 0 and 2: no run of two is free
            assertEquals(2, split.runs().size(), "two runs: " + split);
            assertEquals(List.of(0, 0), List.of(split.chunkOf(0), split.chunkOf(1)));
            assertEquals(List.of(0, 2), List.of(split.firstPageOf(0), split.firstPageOf(1)));
            assertEquals(List.of(1, 1), List.of(split.pageCountOf(0), split.pageCountOf(1)));
            PageAllocation one = singles.get(3);
            assertEquals(List.of(0, 3, 1), List.of(one.chunkOf(0), one.firstPageOf(0), one.pageCountOf(0)));
            assertThrows(IndexOutOfBoundsException.class, () -> one.chunkOf(1));
            assertThrows(IndexOutOfBoundsException.class, () -> one.pageCountOf(-1));
            assertThrows(IndexOutOfBoundsException.class, () -> split.firstPageOf(2));
            assertEquals(4, memory.pagesInUse());

            memory.release(one);
            assertThrows(IllegalStateException.class, () -> memory.release(one));
            assertEquals(3, memory.pagesInUse());
            assertEquals(3, memory.allocate(PAGE).firstPageOf(0), "the one run's page is free again");
            memory.release(split);
            assertEquals(2, memory.pagesInUse());
            PageAllocation again = memory.allocate(PAGE);
            assertTrue(again.firstPageOf(0) == 0 || again.firstPageOf(0) == 2, "a page of the split one: " + again);
        }
        assertThrows(IllegalStateException.class, () -> PageAllocation.external(StorageKind.DEVICE,
                MemorySegment.ofArray(new byte[8])).chunkOf(0), "external memory has no pages");
    }

    /** The chunks' free-page bits answer as a {@link java.util.BitSet} does, across word boundaries and at the end. */
    @Test
    void pageBitsAnswerAsABitSet() {
        for (int size : new int[] {1, 63, 64, 65, 200, 256}) {
            SplittableRandom random = new SplittableRandom(size);
            PagedMemory.PageBits bits = new PagedMemory.PageBits(size);
            java.util.BitSet model = new java.util.BitSet(size);
            bits.set(0, size);
            model.set(0, size);
            for (int op = 0; op < 2_000; op++) {
                int from = random.nextInt(size);
                int to = from + random.nextInt(Math.min(size - from, 70) + 1);
                if (random.nextBoolean()) {
                    bits.set(from, to);
                    model.set(from, to);
                } else {
                    bits.clear(from, to);
                    model.clear(from, to);
                }
                for (int at = 0; at <= size + 64; at += 1 + random.nextInt(5)) {
                    assertEquals(model.nextSetBit(at), bits.nextSetBit(at), "nextSetBit(" + at + ") of " + size);
                    assertEquals(model.nextClearBit(at), bits.nextClearBit(at), "nextClearBit(" + at + ") of " + size);
                }
            }
        }
    }

    @Test
    void aSegmentLargerThanAChunkSpansChunks() throws IOException {
        try (PagedMemory memory = new PagedMemory(StorageKind.MAPPED_FILE, PAGE, 4 * PAGE, new CountingAllocator())) {
            PageAllocation a = memory.allocate(10L * PAGE + 3);
            assertEquals(10L * PAGE + 3, total(a));
            assertEquals(3, a.runs().size());
            assertEquals(12L * PAGE, memory.bytesReserved());
        }
    }

    @Test
    void releaseIsCheckedAndSingle() throws IOException {
        try (PagedMemory memory = new PagedMemory(StorageKind.PINNED_HOST, PAGE, 4 * PAGE, new CountingAllocator());
             PagedMemory other = new PagedMemory(StorageKind.PINNED_HOST, PAGE, 4 * PAGE, new CountingAllocator())) {
            PageAllocation a = memory.allocate(PAGE);
            assertThrows(IllegalArgumentException.class, () -> other.release(a));
            memory.release(a);
            assertThrows(IllegalStateException.class, () -> memory.release(a));
            assertThrows(IllegalArgumentException.class, () -> memory.allocate(-1));
        }
        assertThrows(IllegalArgumentException.class, () -> new PagedMemory(StorageKind.PINNED_HOST, 0, 4, new CountingAllocator()));
        assertThrows(IllegalArgumentException.class, () -> new PagedMemory(StorageKind.PINNED_HOST, PAGE, PAGE - 1, new CountingAllocator()));
    }

    /** Random allocate/free; each live allocation's pages hold its id, so any overlap is caught. */
    @Test
    void randomWorkloadsNeverOverlapAndEndAtZero() throws IOException {
        for (int seed = 0; seed < 20; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            try (PagedMemory memory = new PagedMemory(StorageKind.DEVICE, PAGE, 16 * PAGE, new CountingAllocator())) {
                Map<Integer, PageAllocation> live = new HashMap<>();
                long bytes = 0;
                for (int op = 0; op < 400; op++) {
                    if (live.isEmpty() || random.nextInt(3) > 0) {
                        int id = op;
                        PageAllocation a = memory.allocate(random.nextInt(20 * PAGE));
                        for (MemorySegment run : a.runs()) {
                            run.fill((byte) id);
                        }
                        live.put(id, a);
                        bytes += a.sizeBytes();
                    } else {
                        Integer victim = live.keySet().stream().skip(random.nextInt(live.size())).findFirst().orElseThrow();
                        PageAllocation a = live.remove(victim);
                        for (MemorySegment run : a.runs()) {
                            for (long i = 0; i < run.byteSize(); i++) {
                                assertEquals((byte) (int) victim, run.get(ValueLayout.JAVA_BYTE, i), "pages overlapped");
                            }
                        }
                        memory.release(a);
                        bytes -= a.sizeBytes();
                    }
                    assertEquals(bytes, memory.bytesInUse());
                }
                live.values().forEach(memory::release);
                assertEquals(0, memory.bytesInUse());
                assertEquals(0, memory.pagesInUse());
            }
        }
    }

    /**
     * In a capped memory, a chunk whose pages are all free goes back once another fully free chunk is
     * kept (one spare); an uncapped one (DISK extents) keeps its chunks.
     */
    @Test
    void fullyFreeChunksBeyondOneSpareGoBackToTheAllocator() throws Exception {
        try (PagedMemory uncapped = new PagedMemory(StorageKind.MAPPED_FILE, 4096, 4 * 4096,
                new NativeChunkAllocator("test memory"))) {
            PageAllocation x = uncapped.allocate(4 * 4096);
            PageAllocation y = uncapped.allocate(4 * 4096);
            uncapped.release(x);
            uncapped.release(y);
            assertEquals(2 * 4 * 4096L, uncapped.bytesReserved(), "an uncapped memory keeps its chunks until close");
        }
        try (PagedMemory memory = new PagedMemory(StorageKind.PINNED_HOST, 4096, 4 * 4096, 8 * 4 * 4096L,
                new NativeChunkAllocator("test memory"))) {
            PageAllocation a = memory.allocate(4 * 4096);
            PageAllocation b = memory.allocate(4 * 4096);
            PageAllocation c = memory.allocate(4 * 4096);
            assertEquals(3 * 4 * 4096L, memory.bytesReserved());
            memory.release(a);
            assertEquals(3 * 4 * 4096L, memory.bytesReserved(), "the first fully free chunk stays as the spare");
            memory.release(b);
            assertEquals(2 * 4 * 4096L, memory.bytesReserved(), "a second fully free chunk goes back");
            assertFalse(b.runs().get(0).scope().isAlive(), "its memory was freed");
            PageAllocation d = memory.allocate(8 * 4096);
            assertEquals(3 * 4 * 4096L, memory.bytesReserved(), "the spare is reused, then the memory grows again");
            memory.release(c);
            memory.release(d);
            assertEquals(4 * 4096L, memory.bytesReserved(), "one spare left");
            assertEquals(0, memory.pagesInUse());
        }
    }
}
