package dev.kvtier.exec;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvtier.testing.FaultLogRouting;

/**
 * The physical side of a persistent DISK tier: extents named by slot that keep their bytes across a
 * close, pages claimed back by coordinates, and a lock that leaves persistent extents to their owner.
 */
@Tag(FaultLogRouting.TAG)
class PersistentExtentsTest {
    private static final long PAGE = 4096;
    private static final long EXTENT = 8 * PAGE;

    @TempDir
    Path directory;

    @Test
    void aPersistentExtentIsNamedBySlotAndKeepsItsBytesAcrossAClose() throws IOException {
        MappedFileChunkAllocator allocator = MappedFileChunkAllocator.persistent(directory);
        Path file = MappedFileChunkAllocator.persistentExtent(directory, 3);
        try (MemoryChunk extent = allocator.allocate(EXTENT, 3)) {
            extent.memory().set(ValueLayout.JAVA_LONG, 5 * PAGE, 0x1234_5678_9ABC_DEF0L);
        }
        assertTrue(Files.isRegularFile(file), "closing a persistent extent keeps its file");
        try (MemoryChunk again = allocator.allocate(EXTENT, 3)) {
            assertEquals(0x1234_5678_9ABC_DEF0L, again.memory().get(ValueLayout.JAVA_LONG, 5 * PAGE));
        }
        try (MemoryChunk resized = allocator.allocate(2 * EXTENT, 3)) { // another size: its bytes cannot be trusted
            assertEquals(0L, resized.memory().get(ValueLayout.JAVA_LONG, 5 * PAGE));
            assertEquals(2 * EXTENT, Files.size(file));
        }
        assertThrows(IllegalStateException.class, () -> allocator.allocate(EXTENT));
    }

    @Test
    void aReopenedMemoryClaimsExactlyThePagesNamedAndNeverHandsThemOut() throws IOException {
        try (PagedMemory memory = new PagedMemory(StorageKind.MAPPED_FILE, PAGE, EXTENT,
                MappedFileChunkAllocator.persistent(directory))) {
            memory.growTo(2);
            assertEquals(2 * EXTENT, memory.bytesReserved());
            assertTrue(Files.exists(MappedFileChunkAllocator.persistentExtent(directory, 1)));
            PageAllocation claimed = memory.claim(3 * PAGE - 100, new int[] {1, 0}, new int[] {6, 2}, new int[] {2, 1});
            assertEquals(List.of(1, 0), List.of(claimed.chunkOf(0), claimed.chunkOf(1)));
            assertEquals(2 * PAGE - 100, claimed.runs().get(1).byteSize() + PAGE); // the last run ends at the last byte
            assertEquals(3, memory.pagesInUse());
            IllegalArgumentException overlap = assertThrows(IllegalArgumentException.class,
                    () -> memory.claim(2 * PAGE, new int[] {0, 1}, new int[] {4, 7}, new int[] {1, 1}));
            assertTrue(overlap.getMessage().contains("run 1"), overlap.getMessage());
            assertEquals(3, memory.pagesInUse(), "a refused claim takes nothing");
            memory.claim(PAGE, new int[] {0}, new int[] {4}, new int[] {1}); // its first page was given back
            assertThrows(IllegalArgumentException.class, () -> memory.claim(PAGE, new int[] {2}, new int[] {0}, new int[] {1}));
            assertThrows(IllegalArgumentException.class, () -> memory.claim(3 * PAGE, new int[] {0}, new int[] {0}, new int[] {1}));
            // Ordinary allocations fill the 12 free pages and never one of the 4 claimed.
            for (int i = 0; i < 12; i++) {
                PageAllocation page = memory.allocate(PAGE);
                boolean claimedPage = (page.chunkOf(0) == 1 && page.firstPageOf(0) >= 6)
                        || (page.chunkOf(0) == 0 && (page.firstPageOf(0) == 2 || page.firstPageOf(0) == 4));
                assertFalse(claimedPage, "handed out claimed page " + page.chunkOf(0) + "/" + page.firstPageOf(0));
            }
            assertEquals(2 * EXTENT, memory.bytesReserved());
        }
        assertTrue(Files.exists(MappedFileChunkAllocator.persistentExtent(directory, 0)), "kept after close");
    }

    @Test
    void theLockKeepsPersistentExtentsWhenAskedAndReclaimsTheRest() throws IOException {
        Files.write(MappedFileChunkAllocator.persistentExtent(directory, 0), new byte[16]);
        Files.write(directory.resolve("kvtier-0123456789abcdef-1.extent"), new byte[16]);
        try (DiskDirectoryLock ignored = DiskDirectoryLock.acquire(directory, true)) {
            assertTrue(Files.exists(MappedFileChunkAllocator.persistentExtent(directory, 0)));
            assertFalse(Files.exists(directory.resolve("kvtier-0123456789abcdef-1.extent")));
        }
        try (DiskDirectoryLock ignored = DiskDirectoryLock.acquire(directory)) {
            assertFalse(Files.exists(MappedFileChunkAllocator.persistentExtent(directory, 0)),
                    "a volatile cache reclaims every extent");
        }
    }

    @Test
    void externalMemoryHasNoPageCoordinates() {
        PageAllocation external = PageAllocation.external(StorageKind.DEVICE, MemorySegment.ofArray(new byte[8]));
        assertThrows(IllegalStateException.class, () -> external.chunkOf(0));
    }
}
