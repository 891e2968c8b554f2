package dev.kvtier.tiering;

import dev.kvtier.KvTierConfig;
import dev.kvtier.exec.Checksums;
import dev.kvtier.exec.ExecutionBackend;
import dev.kvtier.exec.PageAllocation;
import dev.kvtier.exec.StorageKind;
import dev.kvtier.exec.TransferExecutor;
import dev.kvtier.store.Tier;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The only place a {@link Tier} meets memory: GPU is {@link StorageKind#DEVICE}, CPU
 * {@link StorageKind#PINNED_HOST}, DISK {@link StorageKind#MAPPED_FILE}. Everything below speaks
 * storage kinds; everything above speaks tiers. Copies go through the same
 * {@link TransferExecutor}. Thread-safe; {@link #close()} frees all memory and the backend.
 */
final class TierMemories implements AutoCloseable {
    private final TransferExecutor executor;
    private final String backendName;

    private TierMemories(TransferExecutor executor) {
        this.executor = executor;
        String description = executor.description();
        int space = description.indexOf(' ');
        this.backendName = space < 0 ? description : description.substring(0, space);
    }

    /**
     * Builds the executor over {@code backend}, sizing chunks from the config's budgets; closes the
     * backend if that fails.
     */
    static TierMemories open(ExecutionBackend backend, KvTierConfig config) {
        Map<StorageKind, Long> chunkBudgets = new EnumMap<>(StorageKind.class);
        chunkBudgets.put(storageOf(Tier.GPU), config.gpuBudgetBytes());
        chunkBudgets.put(storageOf(Tier.CPU), config.cpuBudgetBytes());
        chunkBudgets.put(storageOf(Tier.DISK), config.diskExtentBytes());
        // GPU and CPU never hold more memory than their budgets: growth beyond is refused and room made instead.
        Map<StorageKind, Long> capacities = new EnumMap<>(StorageKind.class);
        capacities.put(storageOf(Tier.GPU), config.gpuBudgetBytes());
        capacities.put(storageOf(Tier.CPU), config.cpuBudgetBytes());
        try {
            return new TierMemories(new TransferExecutor(backend, config.pageSizeBytes(), chunkBudgets, capacities,
                    config.maxBytesInFlight(), config.transferTimeout()));
        } catch (RuntimeException e) {
            backend.close();
            throw e;
        }
    }

    /** What memory backs {@code tier}. */
    static StorageKind storageOf(Tier tier) {
        return switch (tier) {
            case GPU -> StorageKind.DEVICE;
            case CPU -> StorageKind.PINNED_HOST;
            case DISK -> StorageKind.MAPPED_FILE;
        };
    }

    /** @throws IOException when the tier's memory cannot grow (device out of memory, disk full) */
    PageAllocation allocate(Tier tier, long bytes) throws IOException {
        return executor.allocate(storageOf(tier), bytes);
    }

    /** Bytes of each DISK extent file. */
    long diskExtentBytes() {
        return executor.chunkBytes(storageOf(Tier.DISK));
    }

    /** Maps the DISK extents in slots {@code 0..extents-1} again (persistent extents keep their bytes). */
    void reopenDisk(int extents) throws IOException {
        executor.growTo(storageOf(Tier.DISK), extents);
    }

    /**
     * The DISK pages a recovered record names, as the allocation of its segment.
     *
     * @throws IllegalArgumentException when they lie outside the extents or overlap pages in use
     */
    PageAllocation claimDisk(long bytes, int[] runChunk, int[] runFirst, int[] runCount) {
        return executor.claim(storageOf(Tier.DISK), bytes, runChunk, runFirst, runCount);
    }

    /** References caller-owned memory on {@code tier} (adopted device memory); never freed. */
    PageAllocation external(Tier tier, MemorySegment memory) {
        return executor.external(storageOf(tier), memory);
    }

    void release(PageAllocation allocation) {
        executor.release(allocation);
    }

    /** @see TransferExecutor#copyIn */
    void copyIn(MemorySegment source, PageAllocation to) {
        executor.copyIn(source, to);
    }

    /** @see TransferExecutor#copyOut */
    void copyOut(PageAllocation from, MemorySegment destination) {
        executor.copyOut(from, destination);
    }

    /** @see TransferExecutor#transferAndWait */
    void transferAndWait(PageAllocation from, PageAllocation to) {
        executor.transferAndWait(from, to);
    }

    /** @see TransferExecutor#transferAllAndWait */
    void transferAllAndWait(List<PageAllocation> from, List<PageAllocation> to) {
        executor.transferAllAndWait(from, to);
    }

    /** @see TransferExecutor#transferRanges */
    java.util.concurrent.CompletableFuture<Void> transferRanges(List<PageAllocation> from, List<PageAllocation> to,
                                                                long[] offsets, long[] lengths) {
        return executor.transferRanges(from, to, offsets, lengths);
    }

    /** @see TransferExecutor#gatherRanges */
    java.util.concurrent.CompletableFuture<Void> gatherRanges(List<PageAllocation> from, long[] offsets, long[] lengths,
                                                              PageAllocation to, long[] toStarts) {
        return executor.gatherRanges(from, offsets, lengths, to, toStarts);
    }

    /** @see TransferExecutor#transferRangesAndWait */
    void transferRangesAndWait(List<PageAllocation> from, List<PageAllocation> to, long[] offsets, long[] lengths) {
        executor.transferRangesAndWait(from, to, offsets, lengths);
    }

    /** @see TransferExecutor#awaitTransfer */
    void awaitTransfer(java.util.concurrent.CompletableFuture<Void> copy, List<PageAllocation> destinations) {
        executor.awaitTransfer(copy, destinations);
    }

    /** @see TransferExecutor#copiesWithTheCpu() */
    boolean copiesWithTheCpu() {
        return executor.copiesWithTheCpu();
    }

    /** The CRC32C of the caller's host memory (native or heap). */
    int crc32c(MemorySegment hostBytes) {
        return Checksums.crc32c(List.of(hostBytes));
    }

    /** The CRC32C of host memory (a CPU or DISK placement). */
    int crc32c(PageAllocation allocation) {
        return executor.crc32c(allocation);
    }

    /** Bytes of segments held in the executor's own pages on {@code tier}. */
    long bytesInUse(Tier tier) {
        return executor.bytesInUse(storageOf(tier));
    }

    /** The backend's short name, the first word of its description: {@code host} or {@code cuda}. */
    String backendName() {
        return backendName;
    }

    String description() {
        return executor.description();
    }

    @Override
    public void close() {
        executor.close();
    }
}
