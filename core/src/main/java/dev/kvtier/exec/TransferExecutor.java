package dev.kvtier.exec;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The physical half of kvtier: paged memory of each {@link StorageKind} and asynchronous copies between them,
 * over one {@link ExecutionBackend}. It knows nothing of keys, budgets or policy: the caller
 * (the facade) decides what moves and holds the per-key order; the executor guarantees that bytes
 * land exactly, that a burst waits for room ({@code maxBytesInFlight}) and that memory is freed
 * only by the caller after the copies touching it have completed.
 *
 * <p>Two ways to copy: {@link #transfer}/{@link #transferAll} start copies and return a future;
 * {@link #transferAndWait}, {@link #transferAllAndWait}, {@link #copyIn} and {@link #copyOut} return when
 * the bytes are in place (the host backend then copies on the calling thread, with no future and no copy
 * thread to wake; the CUDA backend waits on an event, copying host-to-host plans on the calling thread
 * meanwhile). Both count against {@code maxBytesInFlight}.
 *
 * <p>Thread-safe. Ownership: every {@link PageAllocation} from {@link #allocate} must go back
 * through {@link #release} (or is freed by {@link #close()}); external allocations
 * ({@link #external}) are only referenced, never freed.
 */
public final class TransferExecutor implements AutoCloseable {
    private final ExecutionBackend backend;
    private final CopyEngine engine;
    private final Map<StorageKind, PagedMemory> memories = new EnumMap<>(StorageKind.class);
    private final BytesInFlightLimiter limiter;
    private final Duration transferTimeout;
    private final long timeoutNanos;
    /** Set once a copy timed out: its destination may still be written, so close() frees no memory. */
    private volatile boolean anyQuarantined;
    /** Native memory for heap bytes going to or from device memory when the engine cannot take heap memory itself. */
    private final StagingBuffers staging = new StagingBuffers();
    private volatile boolean closed;

    /**
     * An executor whose memories are all uncapped (they grow while the backend supplies chunks); see
     * {@link #TransferExecutor(ExecutionBackend, long, Map, Map, long, Duration)}.
     */
    public TransferExecutor(ExecutionBackend backend, long pageSize, Map<StorageKind, Long> budgets, long maxBytesInFlight,
                            Duration transferTimeout) {
        this(backend, pageSize, budgets, Map.of(), maxBytesInFlight, transferTimeout);
    }

    /**
     * @param backend          memory and copies; closed by {@link #close()}
     * @param pageSize         page size for every kind of memory, {@code > 0}
     * @param budgets          per kind, the budget used to size chunks (mapped files: the extent size); a
     *                         kind not named gets chunks of one page
     * @param capacities       per kind, the most bytes of chunks it may ever hold (its budget): its chunks are
     *                         sized to divide it and a request beyond it fails with
     *                         {@link PhysicallyFullException} instead of growing; a kind not named is uncapped
     * @param maxBytesInFlight bound on the bytes of unfinished copies, {@code > 0}
     * @param transferTimeout  how long a blocking copy (or the wait for room in flight) may take before it
     *                         fails with {@link TransferTimeoutException}, {@code > 0}
     */
    public TransferExecutor(ExecutionBackend backend, long pageSize, Map<StorageKind, Long> budgets,
                            Map<StorageKind, Long> capacities, long maxBytesInFlight, Duration transferTimeout) {
        if (backend == null) {
            throw new IllegalArgumentException("backend must not be null");
        }
        if (pageSize <= 0) {
            throw new IllegalArgumentException("pageSize must be > 0, was " + pageSize);
        }
        if (transferTimeout == null || transferTimeout.isNegative() || transferTimeout.isZero()) {
            throw new IllegalArgumentException("transferTimeout must be > 0, was " + transferTimeout);
        }
        this.transferTimeout = transferTimeout;
        this.timeoutNanos = transferTimeout.toNanos();
        this.backend = backend;
        this.engine = backend.copyEngine();
        this.limiter = new BytesInFlightLimiter(maxBytesInFlight);
        for (StorageKind kind : StorageKind.values()) {
            long budget = budgets.getOrDefault(kind, pageSize);
            long preferred = backend.chunkBytes(kind, budget, pageSize);
            Long capacity = capacities.get(kind);
            if (capacity == null) {
                memories.put(kind, new PagedMemory(kind, pageSize, preferred, backend.chunkAllocator(kind)));
            } else {
                // k chunks of (nearly) equal size that together hold exactly the capacity's pages: physical ==
                // budget, so the store's books and the pages agree on how many segments fit.
                long capacityPages = Math.max(1, capacity / pageSize);
                long preferredPages = Math.max(1, preferred / pageSize);
                long chunks = (capacityPages + preferredPages - 1) / preferredPages;
                long chunkPages = (capacityPages + chunks - 1) / chunks;
                memories.put(kind, new PagedMemory(kind, pageSize, chunkPages * pageSize, capacityPages * pageSize,
                        backend.chunkAllocator(kind)));
            }
        }
    }

    /**
     * Allocates pages for {@code bytes} bytes of {@code kind}.
     *
     * @throws IOException when that memory cannot grow (device out of memory, disk full)
     */
    public PageAllocation allocate(StorageKind kind, long bytes) throws IOException {
        ensureOpen();
        return memories.get(kind).allocate(bytes);
    }

    /**
     * Grows {@code kind}'s memory until its chunk slots {@code 0..chunkCount-1} are all held (reopening
     * persistent DISK extents); see {@code PagedMemory.growTo}.
     *
     * @throws IOException when that memory cannot grow
     */
    public void growTo(StorageKind kind, int chunkCount) throws IOException {
        ensureOpen();
        memories.get(kind).growTo(chunkCount);
    }

    /**
     * The pages named (per run: chunk slot, first page, page count, as {@link PageAllocation#chunkOf} and
     * friends report them) as the allocation of a {@code bytes}-byte segment of {@code kind}: a recovered
     * DISK segment gets back the pages its bytes are in. Release it like any allocation.
     *
     * @throws IllegalArgumentException when a run lies outside the memory or overlaps pages in use
     */
    public PageAllocation claim(StorageKind kind, long bytes, int[] runChunk, int[] runFirst, int[] runCount) {
        ensureOpen();
        return memories.get(kind).claim(bytes, runChunk, runFirst, runCount);
    }

    /** Bytes per chunk of {@code kind} (for DISK: the size of each extent file). */
    public long chunkBytes(StorageKind kind) {
        return memories.get(kind).chunkBytes();
    }

    /** References caller-owned memory of {@code kind} (an adopted device buffer) without copying or owning it. */
    public PageAllocation external(StorageKind kind, MemorySegment memory) {
        ensureOpen();
        return PageAllocation.external(kind, memory);
    }

    /**
     * Gives an allocation back; external memory is just forgotten. The caller guarantees that every
     * copy touching it has completed (its future is done).
     */
    public void release(PageAllocation allocation) {
        if (allocation.isExternal()) {
            allocation.markReleased();
            return;
        }
        allocation.owner.release(allocation);
    }

    /**
     * Copies every byte of {@code from} into {@code to} (same size) asynchronously. May wait first
     * while {@code maxBytesInFlight} is exhausted. The future completes only when no copy can still
     * touch either allocation.
     */
    public CompletableFuture<Void> transfer(PageAllocation from, PageAllocation to) {
        requireLive(from, "from");
        requireLive(to, "to");
        return submit(plan(from, to));
    }

    /**
     * {@link #transfer} for many pairs at once ({@code from.get(i)} into {@code to.get(i)}): the engine
     * may enqueue all their copies together (one {@code cudaMemcpyBatchAsync} per direction on the
     * CUDA backend), which is what makes many small segments cheap to move. One future for all.
     *
     * @throws IllegalArgumentException if the lists differ in length or a pair differs in size
     */
    public CompletableFuture<Void> transferAll(List<PageAllocation> from, List<PageAllocation> to) {
        return submit(plans(from, to));
    }

    /** The plans copying {@code from.get(i)} into {@code to.get(i)}, every allocation checked live. */
    private static List<CopyPlan> plans(List<PageAllocation> from, List<PageAllocation> to) {
        if (from.size() != to.size()) {
            throw new IllegalArgumentException("from and to must have the same length, were " + from.size() + " and " + to.size());
        }
        List<CopyPlan> plans = new ArrayList<>(from.size());
        for (int i = 0; i < from.size(); i++) {
            PageAllocation source = from.get(i);
            PageAllocation destination = to.get(i);
            if (source == null || source.isReleased() || destination == null || destination.isReleased()) {
                requireLive(source, "from[" + i + "]"); // the message only once it is needed
                requireLive(destination, "to[" + i + "]");
            }
            plans.add(plan(source, destination));
        }
        return plans;
    }

    /**
     * {@link #transfer}, returning when the bytes are in place. The host backend copies on the
     * calling thread (no hand-off to wait for); the CUDA backend enqueues and waits.
     *
     * @throws java.util.concurrent.CompletionException wrapping what failed (a {@code CudaException},
     *                                                  an I/O error, a fault in a mapping)
     */
    public void transferAndWait(PageAllocation from, PageAllocation to) {
        requireLive(from, "from");
        requireLive(to, "to");
        runAndWait(plan(from, to), to);
    }

    /**
     * {@link #transferAll}, returning when every byte is in place or failing after the transfer
     * timeout; then every destination is quarantined (a copy may still write it).
     *
     * @throws java.util.concurrent.CompletionException wrapping what failed
     * @throws TransferTimeoutException                 if the copies did not complete in time
     */
    public void transferAllAndWait(List<PageAllocation> from, List<PageAllocation> to) {
        runAllAndWait(plans(from, to), sizeOf(to), to);
    }

    /**
     * Copies {@code plans} and waits, at most the transfer timeout: on this thread where the engine copies with
     * the CPU, else enqueued together; on a timeout every one of {@code destinations} is quarantined.
     */
    private void runAllAndWait(List<CopyPlan> plans, long bytes, List<PageAllocation> destinations) {
        ensureOpen();
        long grant = limiter.acquire(bytes, timeoutNanos);
        boolean timedOut = false;
        try {
            engine.copyAllAndWait(plans, timeoutNanos);
        } catch (TransferTimeoutException e) {
            timedOut = true;
            destinations.forEach(this::quarantine);
            throw e;
        } finally {
            if (!timedOut) {
                limiter.release(grant); // a copy that may still run keeps its bytes in flight
            }
        }
    }

    /**
     * Copies the same byte ranges of many equally sized pairs ({@code from.get(i)} into {@code to.get(i)},
     * range {@code r} being {@code [offsets[r], offsets[r] + lengths[r])} of each) asynchronously, as one
     * submission: one {@code cudaMemcpyBatchAsync} per direction on the CUDA backend. This is how one layer
     * of many KV blocks moves at once (a layer is the same regions of every block). The future completes only
     * when no copy can still touch either side; wait for it with {@link #awaitTransfer}.
     *
     * @throws IllegalArgumentException if the lists differ in length, a pair differs in size, the arrays differ
     *                                  in length, or a range lies outside the allocations (naming it)
     */
    public CompletableFuture<Void> transferRanges(List<PageAllocation> from, List<PageAllocation> to, long[] offsets,
                                                  long[] lengths) {
        return submit(rangePlans(from, to, offsets, lengths));
    }

    /**
     * {@link #transferRanges}, returning when the bytes are in place (the host engine copies on the calling
     * thread), or failing after the transfer timeout, when every destination is quarantined.
     *
     * @throws java.util.concurrent.CompletionException wrapping what failed
     * @throws TransferTimeoutException                 if the copies did not complete in time
     */
    public void transferRangesAndWait(List<PageAllocation> from, List<PageAllocation> to, long[] offsets, long[] lengths) {
        List<CopyPlan> plans = rangePlans(from, to, offsets, lengths);
        long bytes = 0;
        for (CopyPlan plan : plans) {
            bytes += plan.totalBytes();
        }
        runAllAndWait(plans, bytes, to);
    }

    /**
     * Copies the same byte ranges of several allocations into one, packed: the ranges of {@code from.get(i)}
     * ({@code [offsets[r], offsets[r] + lengths[r])}, in order) land back to back in {@code to} from byte
     * {@code toStarts[i]}. Asynchronous, as one submission (one {@code cudaMemcpyBatchAsync} per direction on the
     * CUDA backend): how one layer of many KV blocks is gathered into a staging area smaller than the blocks.
     * Wait with {@link #awaitTransfer}.
     *
     * @throws IllegalArgumentException if the lists or arrays differ in length, or a range lies outside its source
     *                                  or its place outside {@code to} (naming it)
     */
    public CompletableFuture<Void> gatherRanges(List<PageAllocation> from, long[] offsets, long[] lengths,
                                                PageAllocation to, long[] toStarts) {
        if (from.size() != toStarts.length || offsets.length != lengths.length) {
            throw new IllegalArgumentException("from and toStarts, offsets and lengths must have the same lengths, were "
                    + from.size() + ", " + toStarts.length + ", " + offsets.length + ", " + lengths.length);
        }
        requireLive(to, "to");
        List<CopyPlan> plans = new ArrayList<>(from.size() * offsets.length);
        for (int i = 0; i < from.size(); i++) {
            PageAllocation source = from.get(i);
            requireLive(source, "from[" + i + "]");
            long at = toStarts[i];
            for (int r = 0; r < offsets.length; r++) {
                if (offsets[r] < 0 || lengths[r] < 0 || offsets[r] + lengths[r] > source.sizeBytes()) {
                    throw new IllegalArgumentException("range " + r + " [" + offsets[r] + ", " + (offsets[r] + lengths[r])
                            + ") lies outside the " + source.sizeBytes() + " bytes of from[" + i + "]");
                }
                if (at < 0 || at + lengths[r] > to.sizeBytes()) {
                    throw new IllegalArgumentException("range " + r + " of from[" + i + "] would land at [" + at + ", "
                            + (at + lengths[r]) + "), outside the " + to.sizeBytes() + " bytes of to");
                }
                plans.add(CopyPlan.between(source.kind(), slice(source.runs(), offsets[r], lengths[r]),
                        to.kind(), slice(to.runs(), at, lengths[r])));
                at += lengths[r];
            }
        }
        return submit(plans);
    }

    private static List<CopyPlan> rangePlans(List<PageAllocation> from, List<PageAllocation> to, long[] offsets,
                                             long[] lengths) {
        if (from.size() != to.size()) {
            throw new IllegalArgumentException("from and to must have the same length, were " + from.size() + " and " + to.size());
        }
        if (offsets.length != lengths.length) {
            throw new IllegalArgumentException("offsets and lengths must have the same length, were " + offsets.length
                    + " and " + lengths.length);
        }
        List<CopyPlan> plans = new ArrayList<>(from.size() * offsets.length);
        for (int i = 0; i < from.size(); i++) {
            PageAllocation source = from.get(i);
            PageAllocation destination = to.get(i);
            requireLive(source, "from[" + i + "]");
            requireLive(destination, "to[" + i + "]");
            if (source.sizeBytes() != destination.sizeBytes()) {
                throw new IllegalArgumentException("from[" + i + "] holds " + source.sizeBytes() + " bytes but to[" + i
                        + "] holds " + destination.sizeBytes());
            }
            for (int r = 0; r < offsets.length; r++) {
                if (offsets[r] < 0 || lengths[r] < 0 || offsets[r] + lengths[r] > source.sizeBytes()) {
                    throw new IllegalArgumentException("range " + r + " [" + offsets[r] + ", " + (offsets[r] + lengths[r])
                            + ") lies outside the " + source.sizeBytes() + " bytes of from[" + i + "]");
                }
                plans.add(CopyPlan.between(source.kind(), slice(source.runs(), offsets[r], lengths[r]),
                        destination.kind(), slice(destination.runs(), offsets[r], lengths[r])));
            }
        }
        return plans;
    }

    /**
     * Waits for a copy started by {@link #transfer}, {@link #transferAll} or {@link #transferRanges} at most
     * the transfer timeout (uninterruptibly: the flag is kept); on a timeout every one of
     * {@code destinations} is quarantined (a copy may still write it).
     *
     * @throws java.util.concurrent.CompletionException wrapping what failed
     * @throws TransferTimeoutException                 if the copies did not complete in time
     */
    public void awaitTransfer(CompletableFuture<Void> copy, List<PageAllocation> destinations) {
        try {
            CopyEngine.await(copy, timeoutNanos, sizeOf(destinations));
        } catch (TransferTimeoutException e) {
            destinations.forEach(this::quarantine);
            throw e;
        }
    }

    /** @see CopyEngine#copiesWithTheCpu() */
    public boolean copiesWithTheCpu() {
        return engine.copiesWithTheCpu();
    }

    /** The runs covering bytes {@code [offset, offset + length)} of a run list, as slices of its runs. */
    private static List<MemorySegment> slice(List<MemorySegment> runs, long offset, long length) {
        List<MemorySegment> slices = new ArrayList<>(2);
        long skip = offset;
        long left = length;
        for (int i = 0; i < runs.size() && left > 0; i++) {
            MemorySegment run = runs.get(i);
            if (skip >= run.byteSize()) {
                skip -= run.byteSize();
                continue;
            }
            long take = Math.min(run.byteSize() - skip, left);
            slices.add(run.asSlice(skip, take));
            left -= take;
            skip = 0;
        }
        return slices;
    }

    private static long sizeOf(List<PageAllocation> allocations) {
        long bytes = 0;
        for (PageAllocation allocation : allocations) {
            bytes += allocation.sizeBytes();
        }
        return bytes;
    }

    /** A copy into {@code allocation} timed out and may still run: its pages are never reused or freed. */
    private void quarantine(PageAllocation allocation) {
        allocation.quarantine();
        anyQuarantined = true;
    }

    /**
     * Copies all of {@code source} (host memory: native or heap, any arena) into {@code to} and
     * returns when the bytes are in place; {@code source} is not referenced afterwards. Heap bytes
     * bound for device memory are staged through native memory first, unless the engine takes heap
     * memory as it is ({@link CopyEngine#acceptsHeapMemory()}).
     *
     * @throws java.util.concurrent.CompletionException wrapping what failed
     */
    public void copyIn(MemorySegment source, PageAllocation to) {
        requireLive(to, "to");
        if (source.isNative() || to.kind() == MemoryKind.HOST || engine.acceptsHeapMemory()) {
            runAndWait(CopyPlan.between(MemoryKind.HOST, runsOf(source), to.kind(), to.runs()), to);
            return;
        }
        try (StagingBuffers.Buffer stage = staging.acquire(source.byteSize())) {
            MemorySegment staged = stage.segment();
            MemorySegment.copy(source, 0, staged, 0, source.byteSize());
            try {
                runAndWait(CopyPlan.between(MemoryKind.HOST, runsOf(staged), to.kind(), to.runs()), to);
            } catch (TransferTimeoutException e) {
                stage.abandon(); // the copy may still read it
                throw e;
            }
        }
    }

    /**
     * Copies all of {@code from} into the first {@code from.sizeBytes()} bytes of {@code destination}
     * (host memory: native or heap, any arena) and returns when they are in place. Device bytes bound
     * for heap memory are staged through native memory, unless the engine takes heap memory as it is.
     *
     * @throws java.util.concurrent.CompletionException wrapping what failed
     */
    public void copyOut(PageAllocation from, MemorySegment destination) {
        requireLive(from, "from");
        MemorySegment target = destination.asSlice(0, from.sizeBytes());
        if (target.isNative() || from.kind() == MemoryKind.HOST || engine.acceptsHeapMemory()) {
            runAndWait(CopyPlan.between(from.kind(), from.runs(), MemoryKind.HOST, runsOf(target)), null);
            return;
        }
        try (StagingBuffers.Buffer stage = staging.acquire(target.byteSize())) {
            MemorySegment staged = stage.segment();
            try {
                runAndWait(CopyPlan.between(from.kind(), from.runs(), MemoryKind.HOST, runsOf(staged)), null);
            } catch (TransferTimeoutException e) {
                stage.abandon(); // the copy may still write it
                throw e;
            }
            MemorySegment.copy(staged, 0, target, 0, target.byteSize());
        }
    }

    /**
     * Copies {@code plan} and waits, at most the transfer timeout; on a timeout {@code destination}
     * (when it is ours; null for the caller's memory) is quarantined.
     */
    private void runAndWait(CopyPlan plan, PageAllocation destination) {
        ensureOpen();
        long grant = limiter.acquire(plan.totalBytes(), timeoutNanos);
        boolean timedOut = false;
        try {
            engine.copyAndWait(plan, timeoutNanos);
        } catch (TransferTimeoutException e) {
            timedOut = true;
            if (destination != null) {
                quarantine(destination);
            }
            anyQuarantined = true;
            throw e;
        } finally {
            if (!timedOut) {
                limiter.release(grant); // a copy that may still run keeps its bytes in flight
            }
        }
    }

    /**
     * The CRC32C of a host-memory allocation's bytes (pinned or mapped).
     *
     * @throws IllegalArgumentException for device memory
     */
    public int crc32c(PageAllocation allocation) {
        requireLive(allocation, "allocation");
        if (allocation.kind() != MemoryKind.HOST) {
            throw new IllegalArgumentException("allocation must be host memory to checksum, was " + allocation);
        }
        return Checksums.crc32c(allocation.runs());
    }

    private static CopyPlan plan(PageAllocation from, PageAllocation to) {
        return CopyPlan.between(from.kind(), from.runs(), to.kind(), to.runs());
    }

    private static List<MemorySegment> runsOf(MemorySegment segment) {
        return segment.byteSize() == 0 ? List.of() : List.of(segment);
    }

    private CompletableFuture<Void> submit(CopyPlan plan) {
        return submit(List.of(plan));
    }

    private CompletableFuture<Void> submit(List<CopyPlan> plans) {
        ensureOpen();
        long bytes = 0;
        for (CopyPlan plan : plans) {
            bytes += plan.totalBytes();
        }
        long grant = limiter.acquire(bytes, timeoutNanos);
        CompletableFuture<Void> copy;
        try {
            copy = plans.size() == 1 ? engine.submit(plans.get(0)) : engine.submitAll(plans);
        } catch (RuntimeException e) {
            limiter.release(grant);
            return CompletableFuture.failedFuture(e);
        }
        // Hand back the engine's own future (a host copy runs on the thread that waits for it if no
        // copy thread has started it); the bookkeeping rides on it.
        copy.whenComplete((ignored, failure) -> {
            limiter.release(grant);
        });
        return copy;
    }

    private static void requireLive(PageAllocation allocation, String name) {
        if (allocation == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        if (allocation.isReleased()) {
            throw new IllegalStateException(name + " was already released: " + allocation);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the transfer executor is closed");
        }
    }

    /** Bytes of live segments in {@code kind} as the executor sees them (owned pages only). */
    public long bytesInUse(StorageKind kind) {
        return memories.get(kind).bytesInUse();
    }

    /** Pages held by live segments in {@code kind}. */
    public long pagesInUse(StorageKind kind) {
        return memories.get(kind).pagesInUse();
    }

    /** Bytes of chunks taken from the backend for {@code kind}, used or free. */
    public long bytesReserved(StorageKind kind) {
        return memories.get(kind).bytesReserved();
    }

    /** Bytes of copies started and not yet completed. */
    public long bytesInFlight() {
        return limiter.bytesInFlight();
    }

    /** The page size shared by every kind of memory. */
    public long pageSize() {
        return memories.get(StorageKind.DEVICE).pageSize();
    }

    /** How long a blocking copy may take. */
    public Duration transferTimeout() {
        return transferTimeout;
    }

    /** The backend's one-line description. */
    public String description() {
        return backend.description();
    }

    /**
     * Waits for every submitted copy (the engine drains), then frees all memory and the
     * backend. Idempotent. Later calls throw {@link IllegalStateException}.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            engine.close();
        } finally {
            if (anyQuarantined) {
                // A copy timed out: free nothing it may still write until the engine says it drained.
                engine.whenQuiescent(this::freeEverything);
            } else {
                freeEverything();
            }
        }
    }

    /** Frees every memory, the staging buffers and the backend; runs once no copy can touch them. */
    private void freeEverything() {
        try {
            for (PagedMemory memory : memories.values()) {
                memory.close();
            }
        } finally {
            try {
                staging.close();
            } finally {
                backend.close();
            }
        }
    }
}
