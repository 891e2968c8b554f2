package dev.kvtier.exec.cuda;

import dev.kvtier.concurrent.Backoff;
import dev.kvtier.concurrent.KvTierThreads;
import dev.kvtier.cuda.CudaEvent;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.CudaStream;
import dev.kvtier.cuda.MemcpyKind;
import dev.kvtier.exec.BackendUnusableException;
import dev.kvtier.exec.Cleanup;
import dev.kvtier.exec.CopyEngine;
import dev.kvtier.exec.CopyPlan;
import dev.kvtier.exec.CopyRegion;
import dev.kvtier.exec.MemoryKind;
import dev.kvtier.exec.TransferTimeoutException;
import dev.kvtier.exec.host.HostCopyEngine;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Copies over the CUDA runtime. Each submission (one plan, or the plans of one {@link #submitAll})
 * takes a stream of its own from a pool for as long as its copies run, so directions overlap and,
 * above all, <b>a failure belongs to the submission that failed</b>: an asynchronous fault is read
 * from an event recorded after that submission's copies on that submission's stream, and no other
 * thread synchronizes that stream meanwhile (with one shared stream, another thread's clean-up could
 * clear the error between a copy and its event, and a copy that never happened was taken as done).
 * Host-to-host copies (pinned memory to and from file mappings) go to a {@link HostCopyEngine}. The
 * regions of a submission are enqueued as one {@code cudaMemcpyBatchAsync} where the runtime has it
 * (otherwise one {@code cudaMemcpyAsync} per region: the runs are already coalesced).
 *
 * <p>Completion never depends on a host function alone: a {@code cudaLaunchHostFunc} after the
 * copies completes the future on a kvtier thread when it runs, and whoever waits on the future
 * ({@code join}, {@code get}) polls the event itself, so a host function that never runs (as after a
 * device error) cannot hang a waiter. Every wait of this engine has a deadline (the transfer
 * timeout): a copy that does not complete by then fails with {@link TransferTimeoutException}, and its
 * stream is set aside, never reused or destroyed under the device.
 *
 * <p>A device copy whose host side lies in a staged DISK extent (one not registered with
 * {@code cudaHostRegister}) or in heap memory goes through {@link BounceBuffers} instead: chunked,
 * double-buffered, on a pooled stream, on the calling thread for {@link #copyAndWait} and on a
 * staging thread for {@link #submit}.
 *
 * <p>If enqueueing fails part-way (a {@code CudaException} naming the call and error), the copies
 * already enqueued are waited for (up to the deadline) before the returned future fails, so the
 * caller may free both sides as soon as it is done. Thread-safe. {@link #close()} lets staged copies
 * finish, waits (bounded) for every stream, destroys the idle ones and frees the bounce buffers.
 *
 * <p><b>Sticky errors.</b> Every CUDA failure is shown to the backend's {@link ContextHealth}; when the
 * error turns out to be sticky (the context is dead, as after an asynchronous fault on a real device),
 * the failing copy fails with a {@link BackendUnusableException} naming it, and so does every later
 * device copy, at once, without touching the driver; host-to-host copies go on (they never need it).
 * A dead context runs no more work, so {@link #close()} then neither waits for its streams nor leaves
 * them to a reaper: it tries to destroy everything once, logs what the driver refuses, and returns.
 */
final class CudaCopyEngine implements CopyEngine {
    private static final System.Logger LOG = System.getLogger(CudaCopyEngine.class.getName());

    private final CudaRuntime cuda;
    private final ContextHealth health;
    private final HostCopyEngine hostCopies;
    private final boolean batch;
    private final long timeoutNanos;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Completed once no stream can still run a copy: at close, or later by the reaper. */
    private final CompletableFuture<Void> quiescent = new CompletableFuture<>();
    private final ConcurrentLinkedQueue<CudaEvent> idleEvents = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<CudaStream> idleStreams = new ConcurrentLinkedQueue<>();
    /** Events of copies that timed out: destroyed once every stream drained. */
    private final ConcurrentLinkedQueue<CudaEvent> setAsideEvents = new ConcurrentLinkedQueue<>();
    /** Every stream created and not destroyed; those in use are not in {@link #idleStreams}. */
    private final Set<CudaStream> streams = ConcurrentHashMap.newKeySet();
    private final StagedHostMemory staged;
    private final BounceBuffers bounce;
    private final ExecutorService stagingThreads;

    /**
     * @param cuda             the runtime
     * @param health           whether the context still works, shared with the backend's allocators
     * @param hostCopyThreads  threads for host-to-host copies
     * @param batchSmallCopies whether several regions go in one {@code cudaMemcpyBatchAsync} (when
     *                         available); false forces one call per region (the benchmark's baseline)
     * @param transferTimeout  the deadline of every wait, {@code > 0}
     * @param staged           host memory whose device copies are staged; never staged when {@code bounce} is null
     * @param bounce           the bounce buffers (closed by {@link #close()}), or null for none
     */
    CudaCopyEngine(CudaRuntime cuda, ContextHealth health, int hostCopyThreads, boolean batchSmallCopies,
                   Duration transferTimeout, StagedHostMemory staged, BounceBuffers bounce) {
        if (transferTimeout == null || transferTimeout.isNegative() || transferTimeout.isZero()) {
            throw new IllegalArgumentException("transferTimeout must be > 0, was " + transferTimeout);
        }
        this.cuda = cuda;
        this.health = health;
        this.staged = staged;
        this.bounce = bounce;
        this.timeoutNanos = transferTimeout.toNanos();
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
        long deadline = System.nanoTime() + timeoutNanos;
        try {
            return CompletableFuture.runAsync(() -> copyStaged(kind, plan, deadline), stagingThreads);
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("the CUDA copy engine is closed", e);
        }
    }

    /**
     * A staged copy on a pooled stream; a stream that may still run work is set aside. Throws what
     * failed, or the {@link BackendUnusableException} when that was a sticky error.
     */
    private void copyStaged(MemcpyKind kind, CopyPlan plan, long deadline) {
        health.requireUsable();
        CudaStream stream = takeStreamOrFault();
        boolean reusable = false;
        try {
            bounce.copy(kind, plan.regions(), stream, deadline, timeoutNanos);
            reusable = true;
        } catch (TransferTimeoutException e) {
            // A sticky error also ends here: the drain after it never sees the stream clean.
            throw fault(e);
        } catch (RuntimeException e) {
            reusable = true; // the bounce buffers drained the stream (bounded) before rethrowing
            throw fault(e);
        } catch (InternalError e) {
            reusable = true;
            throw e;
        } finally {
            returnStream(stream, reusable);
        }
    }

    /**
     * What to throw for {@code failure} of a device copy: the {@link BackendUnusableException} when the
     * CUDA error in it (or kept as suppressed on it, as by a drain that gave up) is sticky, else {@code failure}.
     */
    private RuntimeException fault(RuntimeException failure) {
        Throwable evidence = failure;
        if (ContextHealth.cudaCause(failure) == null) {
            for (Throwable suppressed : failure.getSuppressed()) {
                if (ContextHealth.cudaCause(suppressed) != null) {
                    evidence = suppressed;
                    break;
                }
            }
        }
        Throwable answer = health.check(evidence);
        return answer instanceof BackendUnusableException unusable ? unusable : failure;
    }

    /** {@link #takeStream()}, a failure (creating one) shown to {@link #health} first. */
    private CudaStream takeStreamOrFault() {
        try {
            return takeStream();
        } catch (RuntimeException e) {
            throw fault(e);
        }
    }

    /** Whether any plan reads or writes device memory (needs the driver). */
    private static boolean anyDevicePlan(List<CopyPlan> plans) {
        for (CopyPlan plan : plans) {
            if (isDevicePlan(plan)) {
                return true;
            }
        }
        return false;
    }

    private static boolean isDevicePlan(CopyPlan plan) {
        return !plan.regions().isEmpty()
                && (plan.sourceKind() != MemoryKind.HOST || plan.destinationKind() != MemoryKind.HOST);
    }

    @Override
    public CompletableFuture<Void> submit(CopyPlan plan) {
        return submitAll(List.of(plan));
    }

    /**
     * Enqueues every plan, the device copies of each direction on a stream of their own in one call,
     * with one completion for all.
     */
    @Override
    public CompletableFuture<Void> submitAll(List<CopyPlan> plans) {
        ensureOpen();
        if (health.isUnusable() && anyDevicePlan(plans)) {
            // Fail fast, starting nothing: the driver would fail every call (or never answer).
            try {
                health.requireUsable();
            } catch (BackendUnusableException unusable) {
                return CompletableFuture.failedFuture(unusable);
            }
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
        if (parts.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        if (parts.size() == 1) {
            return parts.get(0);
        }
        return new AllOf(parts);
    }

    /**
     * The device plans are enqueued first ({@link #submitAll}: one batch per direction), then the host-to-host
     * ones (pinned memory to and from file mappings) are copied on the calling thread while the device works,
     * instead of being handed to a host copy thread and waited for; then the device copies are awaited, up to
     * the same deadline. A failure of either part is thrown only once both parts are done, so nothing this
     * call started can still touch the memory when it returns (short of a device copy that timed out).
     */
    @Override
    public void copyAllAndWait(List<CopyPlan> plans, long timeoutNanos) {
        List<CopyPlan> hostPlans = new ArrayList<>(plans.size());
        List<CopyPlan> devicePlans = new ArrayList<>(plans.size());
        long deviceBytes = 0;
        for (CopyPlan plan : plans) {
            if (plan.sourceKind() == MemoryKind.HOST && plan.destinationKind() == MemoryKind.HOST) {
                hostPlans.add(plan);
            } else {
                devicePlans.add(plan);
                deviceBytes += plan.totalBytes();
            }
        }
        if (hostPlans.isEmpty()) {
            CopyEngine.super.copyAllAndWait(plans, timeoutNanos);
            return;
        }
        long deadline = System.nanoTime() + timeoutNanos;
        CompletableFuture<Void> deviceCopies = devicePlans.isEmpty() ? null : submitAll(devicePlans);
        RuntimeException hostFailure = null;
        try {
            hostCopies.copyAllAndWait(hostPlans, timeoutNanos);
        } catch (RuntimeException e) {
            hostFailure = e;
        }
        if (deviceCopies != null) {
            try {
                CopyEngine.await(deviceCopies, Math.max(0, deadline - System.nanoTime()), deviceBytes);
            } catch (RuntimeException e) {
                if (hostFailure != null) {
                    e.addSuppressed(hostFailure);
                }
                throw e;
            }
        }
        if (hostFailure != null) {
            throw hostFailure;
        }
    }

    /**
     * Host-to-host plans are copied on the calling thread; device copies are enqueued on a stream of
     * their own and waited for on this thread by polling their event, up to the deadline.
     */
    @Override
    public void copyAndWait(CopyPlan plan, long timeoutNanos) {
        ensureOpen();
        if (isDevicePlan(plan) && health.isUnusable()) {
            try {
                health.requireUsable();
            } catch (BackendUnusableException unusable) {
                throw new CompletionException(unusable);
            }
        }
        long deadline = System.nanoTime() + timeoutNanos;
        if (plan.sourceKind() == MemoryKind.HOST && plan.destinationKind() == MemoryKind.HOST) {
            hostCopies.copyAndWait(plan, timeoutNanos);
        } else if (!plan.regions().isEmpty() && needsStaging(plan)) {
            try {
                copyStaged(kindOf(plan), plan, deadline);
            } catch (TransferTimeoutException e) {
                throw e;
            } catch (RuntimeException | InternalError failure) {
                // InternalError: a fault while reading or writing a file mapping.
                throw new CompletionException(failure);
            }
        } else if (!plan.regions().isEmpty()) {
            MemcpyKind kind = kindOf(plan);
            CudaStream stream;
            try {
                stream = takeStreamOrFault();
            } catch (RuntimeException e) {
                throw new CompletionException(e);
            }
            CudaEvent marker;
            try {
                marker = enqueueCopies(kind, plan.regions(), stream);
            } catch (RuntimeException enqueueFailure) {
                throw new CompletionException(afterEnqueueFailure(stream, enqueueFailure, deadline));
            }
            EventCompletion completion = new EventCompletion(marker, stream, plan.totalBytes());
            completion.awaitUntil(deadline, timeoutNanos);
        }
    }

    private static MemcpyKind kindOf(CopyPlan plan) {
        if (plan.sourceKind() == MemoryKind.DEVICE) {
            return plan.destinationKind() == MemoryKind.DEVICE ? MemcpyKind.DEVICE_TO_DEVICE : MemcpyKind.DEVICE_TO_HOST;
        }
        return MemcpyKind.HOST_TO_DEVICE;
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

    /** Asynchronous: completed by a host function when it runs, or by whoever waits, polling the event. */
    private CompletableFuture<Void> enqueue(MemcpyKind kind, List<CopyRegion> regions) {
        CudaStream stream;
        try {
            stream = takeStreamOrFault();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        CudaEvent marker;
        try {
            marker = enqueueCopies(kind, regions, stream);
        } catch (RuntimeException enqueueFailure) {
            return CompletableFuture.failedFuture(afterEnqueueFailure(stream, enqueueFailure,
                    System.nanoTime() + timeoutNanos));
        }
        long bytes = 0;
        for (CopyRegion region : regions) {
            bytes += region.byteSize();
        }
        EventCompletion completion = new EventCompletion(marker, stream, bytes);
        outstanding.add(completion);
        try {
            // Runs on a kvtier completer thread (never the CUDA callback thread), where CUDA calls are allowed.
            completion.callback = stream.onComplete();
            completion.callback.thenRun(completion::poll);
        } catch (RuntimeException launchFailure) {
            // Waiters poll the event themselves; the missing callback only costs an idle consumer latency.
            LOG.log(System.Logger.Level.DEBUG, "cudaLaunchHostFunc failed, completion by polling: " + launchFailure);
        }
        return completion;
    }

    /**
     * After a failed enqueue: waits (bounded) for what was enqueued before it, then gives the stream
     * back; answers what to throw. After a sticky error nothing will run on the stream any more and no
     * query can say so: it is left for {@link #close()} to destroy.
     */
    private RuntimeException afterEnqueueFailure(CudaStream stream, RuntimeException failure, long deadline) {
        RuntimeException answer = fault(failure);
        if (!(answer instanceof BackendUnusableException)) {
            returnStream(stream, StreamWaits.drain(stream, failure, deadline));
        }
        return answer;
    }

    /**
     * The completion of one submission's device copies: the event recorded after them on their own
     * stream. Completed exactly once, by the host function's callback or by a waiter that sees the
     * event complete; the one that completes it recycles the event and gives the stream back.
     */
    /** How close waits for a completion another thread is finishing (microseconds of work): spin, then short parks. */
    private static final Backoff FINISHING = new Backoff(50_000, 10, TimeUnit.MICROSECONDS.toNanos(20),
            TimeUnit.MILLISECONDS.toNanos(1));
    /** Submitted completions not finished yet (a timed-out one stays until close): what close completes. */
    private final Set<EventCompletion> outstanding = ConcurrentHashMap.newKeySet();

    private final class EventCompletion extends CompletableFuture<Void> {
        private final CudaEvent marker;
        private final CudaStream stream;
        private final long bytes;
        private final AtomicBoolean claimed = new AtomicBoolean();
        /** The host function launched after the marker, or null; it may still be queued when the marker is done. */
        volatile CompletableFuture<Void> callback;

        EventCompletion(CudaEvent marker, CudaStream stream, long bytes) {
            this.marker = marker;
            this.stream = stream;
            this.bytes = bytes;
        }

        /**
         * Close's part: completes this future if its copies are done; when another thread already claimed it and
         * is finishing it (recycling the event, giving the stream back), waits for that, at most until
         * {@code deadline}. A completion whose copies are not done (set aside after a timeout) is left as it is.
         */
        void finishBy(long deadline) {
            poll();
            for (int attempt = 0; !isDone() && claimed.get() && System.nanoTime() < deadline; attempt++) {
                FINISHING.idle(attempt);
            }
        }

        /** Completes this future if the copies are done (or failed); never blocks. */
        void poll() {
            if (isDone()) {
                return;
            }
            boolean complete;
            RuntimeException fault = null;
            try {
                complete = marker.isComplete();
            } catch (RuntimeException asyncFault) {
                complete = true;
                fault = asyncFault;
            }
            if (complete && claimed.compareAndSet(false, true)) {
                finish(fault);
            }
        }

        private void finish(RuntimeException fault) {
            // Leaves the outstanding set only once completed: close() waits for the completions it finds there,
            // and one removed first (while this thread still recycled the event) let close return before its
            // future was done (CopyEngineContract.closeWaitsForSubmittedCopiesThenRefusesWork, seen failing).
            try {
                if (fault == null) {
                    recycle(marker, true);
                    giveBackWhenIdle();
                    complete(null);
                    return;
                }
                recycle(marker, false);
                RuntimeException answer = fault(fault);
                if (!(answer instanceof BackendUnusableException)) {
                    // Only this submission's work ran on the stream: draining it reads nobody else's error.
                    returnStream(stream, StreamWaits.drain(stream, fault, System.nanoTime() + timeoutNanos));
                } // else a dead context: nothing runs on the stream any more; close() destroys it
                completeExceptionally(answer);
            } finally {
                outstanding.remove(this);
            }
        }

        /**
         * The copies are done, but the host function after them may still be queued (or have failed
         * without running, leaving its error on the stream): the stream goes back only once nothing of
         * this submission is left on it, clean, so the next submission inherits no work and no error.
         */
        private void giveBackWhenIdle() {
            boolean idle;
            try {
                idle = stream.isIdle();
            } catch (RuntimeException errorAfterTheCopies) {
                idle = true; // the query read and cleared it; it was not the copies' (the marker was clean)
            }
            CompletableFuture<Void> pending = callback;
            if (idle) {
                returnStream(stream, true);
            } else if (pending != null) {
                pending.whenComplete((ignored, failure) -> giveBackWhenIdleAfterCallback());
            } else {
                setAside(stream);
            }
        }

        private void giveBackWhenIdleAfterCallback() {
            returnStream(stream, StreamWaits.drain(stream, new RuntimeException("after the host function"),
                    System.nanoTime() + timeoutNanos));
        }

        /** Waits until done or {@code deadline}; on a timeout the stream is set aside and the copy may still run. */
        void awaitUntil(long deadline, long timeout) {
            boolean complete;
            try {
                complete = StreamWaits.await(marker, deadline);
            } catch (RuntimeException asyncFault) {
                if (claimed.compareAndSet(false, true)) {
                    finish(asyncFault);
                }
                join(); // throws what finish() completed this with (the fault, or the sticky error it revealed)
                throw new CompletionException(asyncFault);
            }
            if (!complete) {
                setAside(stream); // no callback was launched: nothing will give it back
                setAsideEvents.add(marker);
                throw new TransferTimeoutException("a device copy of " + bytes + " bytes", Duration.ofNanos(timeout));
            }
            poll();
            join();
        }

        @Override
        public Void get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
            long deadline = System.nanoTime() + unit.toNanos(timeout);
            try {
                if (!StreamWaits.await(marker, deadline)) {
                    throw new TimeoutException("device copy of " + bytes + " bytes not complete");
                }
            } catch (RuntimeException asyncFault) {
                // poll() below completes the future with it
            }
            poll();
            return super.get(timeout, unit);
        }

        @Override
        public Void get() throws InterruptedException, ExecutionException {
            try {
                return get(Long.MAX_VALUE / 2, TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public Void join() {
            if (!isDone()) {
                try {
                    StreamWaits.await(marker, System.nanoTime() + Long.MAX_VALUE / 2);
                } catch (RuntimeException asyncFault) {
                    // poll() below completes the future with it
                }
                poll();
            }
            return super.join();
        }

        @Override
        public <U> CompletableFuture<U> newIncompleteFuture() {
            return new CompletableFuture<>();
        }
    }

    /** Several submissions' completions as one future whose waits reach each part's own polling. */
    private static final class AllOf extends CompletableFuture<Void> {
        private final List<CompletableFuture<Void>> parts;

        AllOf(List<CompletableFuture<Void>> parts) {
            this.parts = parts;
            CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).whenComplete((ignored, failure) -> {
                if (failure == null) {
                    complete(null);
                } else {
                    completeExceptionally(failure instanceof CompletionException && failure.getCause() != null
                            ? failure.getCause() : failure);
                }
            });
        }

        @Override
        public Void get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
            long deadline = System.nanoTime() + unit.toNanos(timeout);
            for (CompletableFuture<Void> part : parts) {
                try {
                    part.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (ExecutionException e) {
                    // the aggregate completes exceptionally with it once every part is done
                }
            }
            return super.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }

        @Override
        public Void join() {
            for (CompletableFuture<Void> part : parts) {
                try {
                    part.join();
                } catch (RuntimeException e) {
                    // the aggregate completes exceptionally with it once every part is done
                }
            }
            return super.join();
        }

        @Override
        public <U> CompletableFuture<U> newIncompleteFuture() {
            return new CompletableFuture<>();
        }
    }

    private CudaStream takeStream() {
        CudaStream stream = idleStreams.poll();
        if (stream == null) {
            stream = cuda.createStream(true);
            streams.add(stream);
        }
        return stream;
    }

    /** Gives a stream back for the next submission, or sets it aside when work may still run on it. */
    private void returnStream(CudaStream stream, boolean idle) {
        if (!idle) {
            setAside(stream);
        } else if (closed.get()) {
            destroy(stream);
        } else {
            idleStreams.offer(stream);
        }
    }

    /** A stream a timed-out copy may still use: never reused, destroyed at close only if it drained by then. */
    private void setAside(CudaStream stream) {
        // In a dead context every stream fails its queries: that is the sticky error (logged once), not a wedge.
        LOG.log(health.isUnusable() ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                "a copy on " + stream + " did not complete in time; the stream is set aside");
    }

    private void destroy(CudaStream stream) {
        if (streams.remove(stream)) {
            try {
                stream.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "could not destroy " + stream + ": " + e);
            }
        }
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

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("the CUDA copy engine is closed");
        }
    }

    /** Runs {@code action} once every stream drained: at once if close() saw them drain, else by the reaper. */
    @Override
    public void whenQuiescent(Runnable action) {
        quiescent.thenRun(() -> {
            try {
                action.run();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "freeing memory after the last copy drained failed: " + e);
            }
        });
    }

    /**
     * After close: polls the streams that were still running until each drains (then destroys it and,
     * after the last, completes {@link #quiescent}), for at most {@link #REAPER_PATIENCE_TIMEOUTS}
     * transfer timeouts; a device that never finishes keeps its memory for the life of the process.
     */
    private void reap(List<CudaStream> running) {
        long giveUp = System.nanoTime() + REAPER_PATIENCE_TIMEOUTS * timeoutNanos;
        List<CudaStream> left = new ArrayList<>(running);
        while (!left.isEmpty() && System.nanoTime() - giveUp < 0) {
            left.removeIf(stream -> {
                if (StreamWaits.drain(stream, new RuntimeException("pending errors"), System.nanoTime())) {
                    destroy(stream);
                    return true;
                }
                return false;
            });
            if (!left.isEmpty()) {
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
            }
        }
        if (left.isEmpty()) {
            becameQuiescent();
        } else {
            LOG.log(System.Logger.Level.ERROR, left.size() + " stream(s) never drained; their memory stays allocated");
        }
    }

    /** No copy can run any more: destroys the events set aside, then runs what waited for this. */
    private void becameQuiescent() {
        for (CudaEvent event = setAsideEvents.poll(); event != null; event = setAsideEvents.poll()) {
            recycle(event, false);
        }
        if (bounce != null) {
            try {
                bounce.freeAbandoned();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "could not free bounce buffers abandoned by timed-out copies: " + e);
            }
        }
        quiescent.complete(null);
    }

    /** How many transfer timeouts the reaper waits for a wedged stream before it gives up. */
    private static final int REAPER_PATIENCE_TIMEOUTS = 20;

    /** Whether regions are batched (and the runtime has {@code cudaMemcpyBatchAsync}). */
    public boolean batches() {
        return batch && cuda.isBatchCopyAvailable();
    }

    @Override
    public String description() {
        return "cudaMemcpyAsync on a stream per submission, "
                + (batches() ? "small copies batched (" + cuda.batchCopyPath() + ")" : "one call per run")
                + ", host-to-host by " + hostCopies.description();
    }

    /**
     * Lets staged copies finish, then waits for every stream up to the transfer timeout and destroys
     * those that drained; a stream a wedged copy still uses is left (logged) rather than destroyed
     * under the device. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Cleanup cleanup = new Cleanup();
        if (stagingThreads != null) {
            // Staged copies enqueue on the streams and hold bounce buffers: let them finish (each is bounded).
            KvTierThreads.shutdownAndAwait(stagingThreads);
        }
        long deadline = System.nanoTime() + timeoutNanos;
        List<CudaStream> running = new ArrayList<>();
        List<CudaStream> drained = new ArrayList<>();
        for (CudaStream stream : List.copyOf(streams)) {
            RuntimeException pending = new RuntimeException("pending errors at close");
            if (health.isUnusable() || StreamWaits.drain(stream, pending, deadline)) {
                drained.add(stream);
            } else if (fault(pending) instanceof BackendUnusableException) {
                // The drain failed on a sticky error: a dead context runs nothing more, no query will ever
                // say the stream is idle, and waiting (or a reaper) would only delay close.
                drained.add(stream);
            } else {
                running.add(stream);
            }
        }
        // The copies on drained streams are done, but their futures are completed by a completer thread that
        // may not have run yet: complete them here, before their streams go, so that no future submitted
        // before close is still pending when close returns (the engine's promise).
        for (EventCompletion completion : List.copyOf(outstanding)) {
            completion.finishBy(deadline);
        }
        drained.forEach(this::destroy);
        if (health.isUnusable()) {
            running.forEach(this::destroy); // found dead while draining later streams
            running.clear();
        }
        if (running.isEmpty()) {
            becameQuiescent();
        } else {
            LOG.log(System.Logger.Level.ERROR, running.size() + " stream(s) still run a copy at close; they, and the"
                    + " memory those copies may touch, are freed by a reaper thread once they drain");
            KvTierThreads.factory("reaper").newThread(() -> reap(running)).start();
        }
        idleStreams.clear();
        hostCopies.close();
        if (bounce != null) {
            cleanup.run(() -> health.free("the bounce buffers", bounce::close));
        }
        for (CudaEvent event = idleEvents.poll(); event != null; event = idleEvents.poll()) {
            CudaEvent idle = event;
            cleanup.run(() -> health.free(idle.toString(), idle::close));
        }
        cleanup.rethrowFirst();
    }
}
