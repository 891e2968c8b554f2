package dev.kvtier.exec.cuda;

import dev.kvtier.concurrent.KvTierThreads;
import dev.kvtier.cuda.CudaEvent;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.CudaStream;
import dev.kvtier.cuda.MemcpyKind;
import dev.kvtier.exec.Cleanup;
import dev.kvtier.exec.CopyEngine;
import dev.kvtier.exec.CopyPlan;
import dev.kvtier.exec.CopyRegion;
import dev.kvtier.exec.MemoryKind;
import dev.kvtier.exec.host.HostCopyEngine;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Copies over the CUDA runtime: device-to-host copies on one dedicated stream, host-to-device (and
 * device-to-device) copies on another, so both directions overlap; host-to-host copies (pinned
 * memory to and from file mappings) go to a {@link HostCopyEngine}. A plan of several regions, or
 * several plans given to {@link #submitAll}, is enqueued as one {@code cudaMemcpyBatchAsync} where
 * the runtime has it (otherwise one {@code cudaMemcpyAsync} per region: the runs are already
 * coalesced). Completion is a {@code cudaLaunchHostFunc} after the copies, whose future the bindings
 * complete on a kvtier thread, never on the CUDA callback thread; an event recorded after the
 * copies then says whether they failed asynchronously (the future then fails with that error).
 *
 * <p>A device copy whose host side lies in a staged DISK extent (one not registered with
 * {@code cudaHostRegister}, see {@link DiskTransferMode}) goes through {@link BounceBuffers}
 * instead: chunked, double-buffered, on the same stream as its direction, on the calling thread for
 * {@link #copyAndWait} and on a staging thread for {@link #submit}.
 *
 * <p>If enqueueing fails part-way (a {@code CudaException} naming the call and error), the copies
 * already enqueued are waited for before the returned future fails, so the caller may free both
 * sides as soon as it is done. Thread-safe. {@link #close()} lets staged copies finish, waits for
 * both streams, then destroys them and frees the bounce buffers.
 */
final class CudaCopyEngine implements CopyEngine {
    private final CudaRuntime cuda;
    private final CudaStream toHost;
    private final CudaStream toDevice;
    private final HostCopyEngine hostCopies;
    private final boolean batch;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final ConcurrentLinkedQueue<CudaEvent> idleEvents = new ConcurrentLinkedQueue<>();
    private final StagedHostMemory staged;
    private final BounceBuffers bounce;
    private final ExecutorService stagingThreads;

    /**
     * @param cuda             the runtime
     * @param hostCopyThreads  threads for host-to-host copies
     * @param batchSmallCopies whether several regions go in one {@code cudaMemcpyBatchAsync} (when
     *                         available); false forces one call per region (the benchmark's baseline)
     */
    public CudaCopyEngine(CudaRuntime cuda, int hostCopyThreads, boolean batchSmallCopies) {
        this(cuda, hostCopyThreads, batchSmallCopies, new StagedHostMemory(), null);
    }

    /**
     * @param staged host memory whose device copies are staged; never staged when {@code bounce} is null
     * @param bounce the bounce buffers (closed by {@link #close()}), or null for none
     */
    CudaCopyEngine(CudaRuntime cuda, int hostCopyThreads, boolean batchSmallCopies, StagedHostMemory staged,
                   BounceBuffers bounce) {
        this.cuda = cuda;
        this.staged = staged;
        this.bounce = bounce;
        this.toHost = cuda.createStream(true);
        CudaStream second;
        try {
            second = cuda.createStream(true);
        } catch (RuntimeException e) {
            toHost.close();
            throw e;
        }
        this.toDevice = second;
        this.hostCopies = new HostCopyEngine(hostCopyThreads);
        this.batch = batchSmallCopies;
        // As many threads as pairs: a staged copy holds a pair for its whole length.
        this.stagingThreads = bounce == null ? null
                : Executors.newFixedThreadPool(bounce.pairCount(), KvTierThreads.factory("staging"));
    }

    /**
     * Whether {@code plan} is a device copy whose host side lies in a staged extent or in heap memory:
     * both go through the pinned bounce buffers (the driver needs native, ideally pinned, addresses).
     */
    private boolean needsStaging(CopyPlan plan) {
        if (bounce == null || plan.sourceKind() == plan.destinationKind()) {
            return false;
        }
        for (CopyRegion region : plan.regions()) {
            MemorySegment host = plan.sourceKind() == MemoryKind.HOST ? region.source() : region.destination();
            if (!host.isNative() || (!staged.isEmpty() && staged.contains(host))) {
                return true;
            }
        }
        return false;
    }

    /** With bounce buffers, heap memory is staged through them: no separate staging copy is needed. */
    @Override
    public boolean acceptsHeapMemory() {
        return bounce != null;
    }

    private CompletableFuture<Void> submitStaged(CopyPlan plan) {
        MemcpyKind kind = kindOf(plan);
        try {
            return CompletableFuture.runAsync(() -> bounce.copy(kind, plan.regions(), streamFor(kind)), stagingThreads);
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("the CUDA copy engine is closed", e);
        }
    }

    @Override
    public CompletableFuture<Void> submit(CopyPlan plan) {
        return submitAll(List.of(plan));
    }

    /**
     * Enqueues every plan, batching each direction's regions into one call, with one completion for all.
     */
    @Override
    public CompletableFuture<Void> submitAll(List<CopyPlan> plans) {
        if (closed.get()) {
            throw new IllegalStateException("the CUDA copy engine is closed");
        }
        Map<MemcpyKind, List<CopyRegion>> byKind = new EnumMap<>(MemcpyKind.class);
        List<CompletableFuture<Void>> parts = new ArrayList<>();
        for (CopyPlan plan : plans) {
            if (plan.sourceKind() == MemoryKind.HOST && plan.destinationKind() == MemoryKind.HOST) {
                parts.add(hostCopies.submit(plan));
            } else if (!plan.regions().isEmpty() && needsStaging(plan)) {
                parts.add(submitStaged(plan));
            } else if (!plan.regions().isEmpty()) {
                byKind.computeIfAbsent(kindOf(plan), k -> new ArrayList<>()).addAll(plan.regions());
            }
        }
        for (Map.Entry<MemcpyKind, List<CopyRegion>> entry : byKind.entrySet()) {
            parts.add(enqueue(entry.getKey(), entry.getValue()));
        }
        if (parts.size() == 1) {
            return parts.get(0);
        }
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new));
    }

    /**
     * Host-to-host plans are copied on the calling thread; device copies are enqueued and waited for
     * on this thread with {@code cudaEventSynchronize} (no host-function round trip).
     */
    @Override
    public void copyAndWait(CopyPlan plan) {
        if (closed.get()) {
            throw new IllegalStateException("the CUDA copy engine is closed");
        }
        if (plan.sourceKind() == MemoryKind.HOST && plan.destinationKind() == MemoryKind.HOST) {
            hostCopies.copyAndWait(plan);
        } else if (!plan.regions().isEmpty() && needsStaging(plan)) {
            MemcpyKind kind = kindOf(plan);
            try {
                bounce.copy(kind, plan.regions(), streamFor(kind));
            } catch (RuntimeException | InternalError failure) {
                // InternalError: a fault while reading or writing a file mapping.
                throw new CompletionException(failure);
            }
        } else if (!plan.regions().isEmpty()) {
            // Blocking: wait on the event from this thread (cudaEventSynchronize), no callback hop.
            MemcpyKind kind = kindOf(plan);
            CudaStream stream = streamFor(kind);
            CudaEvent marker;
            try {
                marker = enqueueCopies(kind, plan.regions(), stream);
            } catch (RuntimeException enqueueFailure) {
                failAfterDraining(stream, enqueueFailure).join();
                return;
            }
            try {
                awaitMarker(marker, stream);
            } catch (RuntimeException failure) {
                throw new CompletionException(failure);
            }
        }
    }

    private static MemcpyKind kindOf(CopyPlan plan) {
        if (plan.sourceKind() == MemoryKind.DEVICE) {
            return plan.destinationKind() == MemoryKind.DEVICE ? MemcpyKind.DEVICE_TO_DEVICE : MemcpyKind.DEVICE_TO_HOST;
        }
        return MemcpyKind.HOST_TO_DEVICE;
    }

    private CudaStream streamFor(MemcpyKind kind) {
        return kind == MemcpyKind.DEVICE_TO_HOST ? toHost : toDevice;
    }

    /**
     * Enqueues the regions (one batch call, or one call each) and records an event after them; the
     * event also carries an asynchronous fault of those copies. Throws what enqueueing threw.
     */
    private CudaEvent enqueueCopies(MemcpyKind kind, List<CopyRegion> regions, CudaStream stream) {
        CudaEvent done = takeEvent();
        try {
            if (batch && regions.size() > 1 && cuda.isBatchCopyAvailable()) {
                List<MemorySegment> dsts = new ArrayList<>(regions.size());
                List<MemorySegment> srcs = new ArrayList<>(regions.size());
                long[] sizes = new long[regions.size()];
                for (int i = 0; i < regions.size(); i++) {
                    dsts.add(regions.get(i).destination());
                    srcs.add(regions.get(i).source());
                    sizes[i] = regions.get(i).byteSize();
                }
                cuda.memcpyBatchAsync(dsts, srcs, sizes, kind, stream);
            } else {
                for (CopyRegion region : regions) {
                    cuda.memcpyAsync(region.destination(), region.source(), region.byteSize(), kind, stream);
                }
            }
            done.record(stream);
            return done;
        } catch (RuntimeException e) {
            recycle(done, false);
            throw e;
        }
    }

    /** Asynchronous: completion by a host function, then the event says whether the copies succeeded. */
    private CompletableFuture<Void> enqueue(MemcpyKind kind, List<CopyRegion> regions) {
        CudaStream stream = streamFor(kind);
        CudaEvent marker;
        try {
            marker = enqueueCopies(kind, regions, stream);
        } catch (RuntimeException enqueueFailure) {
            return failAfterDraining(stream, enqueueFailure);
        }
        CompletableFuture<Void> hostFunc;
        try {
            hostFunc = stream.onComplete();
        } catch (RuntimeException launchFailure) {
            recycle(marker, false);
            return failAfterDraining(stream, launchFailure);
        }
        // Runs on a kvtier completer thread (never the CUDA callback thread), where CUDA calls are allowed.
        return hostFunc.thenRun(() -> awaitMarker(marker, stream));
    }

    /** Waits for the event after a plan's copies; an asynchronous fault is thrown (and cleared from the stream). */
    private void awaitMarker(CudaEvent marker, CudaStream stream) {
        boolean healthy = false;
        try {
            marker.synchronize();
            healthy = true;
        } catch (RuntimeException asyncFault) {
            PendingErrors.clear(stream, asyncFault);
            throw asyncFault;
        } finally {
            recycle(marker, healthy);
        }
    }

    /** Fails only once the copies enqueued before the failure cannot touch either side any more. */
    private static CompletableFuture<Void> failAfterDraining(CudaStream stream, RuntimeException failure) {
        CompletableFuture<Void> failed = new CompletableFuture<>();
        CompletableFuture<Void> drained;
        try {
            drained = stream.onComplete();
        } catch (RuntimeException alsoFailed) {
            failure.addSuppressed(alsoFailed);
            try {
                stream.synchronize();
            } catch (RuntimeException syncFailed) {
                failure.addSuppressed(syncFailed);
            }
            drained = CompletableFuture.completedFuture(null);
        }
        drained.whenComplete((ignored, drainFailure) -> {
            if (drainFailure != null) {
                failure.addSuppressed(drainFailure);
            }
            PendingErrors.clear(stream, failure);
            failed.completeExceptionally(failure);
        });
        return failed;
    }

    private CudaEvent takeEvent() {
        CudaEvent event = idleEvents.poll();
        return event != null ? event : cuda.createEvent(false);
    }

    private void recycle(CudaEvent event, boolean healthy) {
        if (healthy && !closed.get()) {
            idleEvents.offer(event);
        } else {
            try {
                event.close();
            } catch (RuntimeException ignored) {
                // An event that cannot be destroyed holds no memory of ours; nothing else to do.
            }
        }
    }

    /** Whether regions are batched (and the runtime has {@code cudaMemcpyBatchAsync}). */
    public boolean batches() {
        return batch && cuda.isBatchCopyAvailable();
    }

    @Override
    public String description() {
        return "cudaMemcpyAsync on a D2H and an H2D stream, "
                + (batches() ? "small copies batched (" + cuda.batchCopyPath() + ")" : "one call per run")
                + ", host-to-host by " + hostCopies.description();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Cleanup cleanup = new Cleanup();
        if (stagingThreads != null) {
            // Staged copies enqueue on the streams and hold bounce buffers: let them finish first.
            KvTierThreads.shutdownAndAwait(stagingThreads);
        }
        for (CudaStream stream : new CudaStream[] {toHost, toDevice}) {
            cleanup.run(() -> {
                try {
                    stream.synchronize();
                } finally {
                    stream.close();
                }
            });
        }
        hostCopies.close();
        if (bounce != null) {
            cleanup.run(bounce::close);
        }
        for (CudaEvent event = idleEvents.poll(); event != null; event = idleEvents.poll()) {
            cleanup.run(event::close);
        }
        cleanup.rethrowFirst();
    }
}
