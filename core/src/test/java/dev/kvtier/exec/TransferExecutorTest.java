package dev.kvtier.exec;

import dev.kvtier.KvTierConfig;
import dev.kvtier.exec.host.HostExecutionBackend;


import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class TransferExecutorTest {
    private static final int PAGE = 1024;

    @TempDir
    Path directory;

    private TransferExecutor executor(long maxBytesInFlight) {
        Map<StorageKind, Long> budgets = new EnumMap<>(StorageKind.class);
        for (StorageKind tier : StorageKind.values()) {
            budgets.put(tier, 64L * PAGE);
        }
        return new TransferExecutor(new HostExecutionBackend(directory, 2, "test"), PAGE, budgets, maxBytesInFlight,
                KvTierConfig.DEFAULT_TRANSFER_TIMEOUT);
    }

    private static byte[] random(long seed, int size) {
        byte[] bytes = new byte[size];
        new SplittableRandom(seed).nextBytes(bytes);
        return bytes;
    }

    private static byte[] contentOf(TransferExecutor executor, PageAllocation allocation) {
        byte[] out = new byte[(int) allocation.sizeBytes()];
        executor.copyOut(allocation, MemorySegment.ofArray(out));
        return out;
    }

    /**
     * A capped kind holds exactly the pages of its capacity, also when they are not a whole number of chunks
     * (2,949 pages in chunks of about a quarter): one page fewer let the store count a segment the pages could
     * not hold, and every allocation on a full tier failed once first.
     */
    @Test
    void aCappedMemoryHoldsExactlyItsCapacityInPages() throws IOException {
        long capacity = 2949L * PAGE;
        Map<StorageKind, Long> budgets = new EnumMap<>(StorageKind.class);
        budgets.put(StorageKind.DEVICE, capacity);
        try (TransferExecutor executor = new TransferExecutor(new HostExecutionBackend(directory, 2, "test"), PAGE, budgets,
                Map.of(StorageKind.DEVICE, capacity), 1L << 20, KvTierConfig.DEFAULT_TRANSFER_TIMEOUT)) {
            List<PageAllocation> pages = new ArrayList<>();
            for (int i = 0; i < 2949; i++) {
                pages.add(executor.allocate(StorageKind.DEVICE, PAGE));
            }
            assertEquals(capacity, executor.bytesReserved(StorageKind.DEVICE), "never more than the capacity");
            PhysicallyFullException full = assertThrows(PhysicallyFullException.class,
                    () -> executor.allocate(StorageKind.DEVICE, 1));
            assertEquals(PAGE, full.shortBytes());
            executor.release(pages.remove(0));
            pages.add(executor.allocate(StorageKind.DEVICE, PAGE));
            pages.forEach(executor::release);
        }
    }

    /**
     * An engine that cannot take heap memory (a driver needs native addresses) gets heap bytes staged
     * through native buffers on the way in and out, exactly, and never sees a heap segment.
     */
    @Test
    void heapBytesAreStagedForAnEngineThatCannotTakeThem() throws IOException {
        HostExecutionBackend host = new HostExecutionBackend(directory, 2, "test");
        List<String> heapSegmentsSeen = new java.util.concurrent.CopyOnWriteArrayList<>();
        CopyEngine nativeOnly = new CopyEngine() {
            @Override
            public CompletableFuture<Void> submit(CopyPlan plan) {
                plan.regions().forEach(r -> {
                    if (!r.source().isNative() || !r.destination().isNative()) {
                        heapSegmentsSeen.add(r.toString());
                    }
                });
                return host.copyEngine().submit(plan);
            }

            @Override
            public String description() {
                return "native only";
            }

            @Override
            public void close() {
                host.copyEngine().close();
            }
        };
        ExecutionBackend backend = new ExecutionBackend() {
            @Override
            public String description() {
                return host.description();
            }

            @Override
            public ChunkAllocator chunkAllocator(StorageKind tier) {
                return host.chunkAllocator(tier);
            }

            @Override
            public CopyEngine copyEngine() {
                return nativeOnly;
            }

            @Override
            public void close() {
                host.close();
            }
        };
        Map<StorageKind, Long> budgets = new EnumMap<>(StorageKind.class);
        for (StorageKind tier : StorageKind.values()) {
            budgets.put(tier, 64L * PAGE);
        }
        try (TransferExecutor executor = new TransferExecutor(backend, PAGE, budgets, 1L << 20, KvTierConfig.DEFAULT_TRANSFER_TIMEOUT)) {
            for (int size : new int[] {0, 1, PAGE - 1, 5 * PAGE + 3}) {
                PageAllocation device = executor.allocate(StorageKind.DEVICE, size);
                executor.copyIn(MemorySegment.ofArray(random(size, size)), device);
                assertArrayEquals(random(size, size), contentOf(executor, device), "size " + size);
                executor.release(device);
            }
            assertEquals(List.of(), heapSegmentsSeen);
        }
    }

    /** Many asynchronous transfers at once under a bound of two pages in flight: all land, the bound drains to zero. */
    @Test
    void asynchronousTransfersUnderBackpressureAllLandExactly() throws IOException {
        try (TransferExecutor executor = executor(2L * PAGE)) {
            List<PageAllocation> sources = new ArrayList<>();
            List<PageAllocation> destinations = new ArrayList<>();
            List<CompletableFuture<Void>> copies = new ArrayList<>();
            StorageKind[] tiers = StorageKind.values();
            for (int i = 0; i < 24; i++) {
                int size = 1 + (i * 997) % (5 * PAGE);
                PageAllocation source = executor.allocate(tiers[i % 3], size);
                executor.copyIn(MemorySegment.ofArray(random(i, size)), source);
                PageAllocation destination = executor.allocate(tiers[(i + 1) % 3], size);
                sources.add(source);
                destinations.add(destination);
                copies.add(executor.transfer(source, destination));
            }
            CompletableFuture.allOf(copies.toArray(CompletableFuture[]::new)).join();
            for (int i = 0; i < 24; i++) {
                assertArrayEquals(random(i, (int) sources.get(i).sizeBytes()), contentOf(executor, destinations.get(i)));
            }
            assertEquals(0, executor.bytesInFlight());
            CompletableFuture<Void> all = executor.transferAll(destinations, sources);
            all.join();
            for (int i = 0; i < 24; i++) {
                assertArrayEquals(random(i, (int) sources.get(i).sizeBytes()), contentOf(executor, sources.get(i)));
                executor.release(sources.get(i));
                executor.release(destinations.get(i));
            }
            for (StorageKind tier : StorageKind.values()) {
                assertEquals(0, executor.bytesInUse(tier));
            }
            assertThrows(IllegalStateException.class, () -> executor.transfer(sources.get(0), destinations.get(0)));
        }
    }

    @Test
    void checksumsAreOfHostTiersOnlyAndUseAfterCloseIsRefused() throws IOException {
        TransferExecutor executor = executor(1L << 20);
        PageAllocation disk = executor.allocate(StorageKind.MAPPED_FILE, 3 * PAGE + 1);
        byte[] data = random(9, 3 * PAGE + 1);
        executor.copyIn(MemorySegment.ofArray(data), disk);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(data);
        assertEquals((int) crc.getValue(), executor.crc32c(disk));
        PageAllocation gpu = executor.allocate(StorageKind.DEVICE, 10);
        assertThrows(IllegalArgumentException.class, () -> executor.crc32c(gpu));
        assertEquals(data.length, MemorySegment.ofArray(contentOf(executor, disk)).toArray(ValueLayout.JAVA_BYTE).length);
        executor.close();
        executor.close();
        assertThrows(IllegalStateException.class, () -> executor.allocate(StorageKind.PINNED_HOST, 1));
    }
}
