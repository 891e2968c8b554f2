package dev.kvtier.exec.host;

import dev.kvtier.concurrent.Backoff;
import dev.kvtier.concurrent.KvTierThreads;
import dev.kvtier.exec.CopyEngine;
import dev.kvtier.exec.CopyPlan;
import dev.kvtier.exec.CopyRegion;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Copies with {@link MemorySegment#copy} on a small set of daemon threads, so transfers are
 * asynchronous exactly as on a GPU. Used by the host backend for every copy and by the CUDA
 * backend for host-to-host copies (pinned memory to and from file mappings).
 *
 * <p>Two hand-offs are avoided because each costs about as much as copying a megabyte (waking a
 * parked thread: 5-7 us measured in a small VM):
 * <ul>
 *   <li>a thread that waits for a copy no copy thread has started yet runs it itself (see
 *       {@code HostCopy}), and one that finds it running spins briefly for its end before parking;</li>
 *   <li>a copy thread that runs out of work keeps looking for a short while before it parks (one
 *       thread at a time, so an idle engine never burns more than one core for
 *       longer than {@link Backoff#BRIEF_SPIN} spins), so a steady stream of copies is taken up without waking
 *       anyone.</li>
 * </ul>
 *
 * <p>Thread-safe. {@link #close()} lets submitted copies finish, then stops the threads; a
 * {@link #submit} after it throws {@link IllegalStateException}.
 */
public final class HostCopyEngine implements CopyEngine {
    private final int threadCount;
    private final List<Thread> workers = new ArrayList<>();
    private final ConcurrentLinkedQueue<HostCopy> pending = new ConcurrentLinkedQueue<>();
    /** Copy threads parked (or about to park) waiting for work; a submit wakes one. */
    private final ConcurrentLinkedQueue<Thread> parked = new ConcurrentLinkedQueue<>();
    /** Held by the one copy thread spinning for work, so at most one core spins. */
    private final AtomicBoolean spinning = new AtomicBoolean();
    /** Copies running on copy threads now. */
    private final AtomicInteger copiesRunning = new AtomicInteger();
    /** Submits between their closed-check and their enqueue; close waits for these to land. */
    private final AtomicInteger submitting = new AtomicInteger();
    private volatile boolean closed;

    /** @param threadCount copy threads, {@code >= 1} */
    public HostCopyEngine(int threadCount) {
        if (threadCount < 1) {
            throw new IllegalArgumentException("threadCount must be >= 1, was " + threadCount);
        }
        this.threadCount = threadCount;
        ThreadFactory threads = KvTierThreads.factory("host-copy");
        for (int i = 1; i <= threadCount; i++) {
            Thread worker = threads.newThread(this::work);
            workers.add(worker);
            worker.start();
        }
    }

    @Override
    public CompletableFuture<Void> submit(CopyPlan plan) {
        if (plan.regions().isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        HostCopy copy = new HostCopy(plan);
        // The increment is seen by close() before it drains, or this sees closed: never a copy left queued.
        submitting.incrementAndGet();
        try {
            if (closed) {
                throw new IllegalStateException("the host copy engine is closed");
            }
            pending.offer(copy);
        } finally {
            submitting.decrementAndGet();
        }
        // A spinning copy thread takes it without being woken: it clears the flag before its last look
        // at the queue, so if this still sees the flag set, that look sees the copy.
        if (!spinning.get()) {
            Thread idle = parked.poll();
            if (idle != null) {
                LockSupport.unpark(idle);
            }
        }
        return copy;
    }

    /** A copy thread: runs queued copies; when there are none, spins a little (one thread), then parks. */
    private void work() {
        Thread self = Thread.currentThread();
        while (true) {
            HostCopy copy = pending.poll();
            boolean spin;
            if (copy != null) {
                if (!copy.claim()) {
                    continue; // its waiter runs it
                }
                copiesRunning.incrementAndGet();
                // The spin flag is taken before the waiter can see this copy done, so the waiter's next
                // submit finds a thread looking for work and wakes nobody. (Completing runs the future's
                // dependents here first; a submit meanwhile waits for them, not for a wake-up.)
                spin = copy.runClaimed(() -> {
                    copiesRunning.decrementAndGet();
                    return takeSpinFlag();
                });
                if (!spin) {
                    continue;
                }
            } else {
                if (closed) {
                    return; // close() waited for every submit to enqueue, and the queue is empty
                }
                // Not beside a copy in progress: with the copier and a waiter spinning for it, a third busy
                // thread oversubscribes a small machine; the copier takes the flag when it is done.
                spin = copiesRunning.get() == 0 && takeSpinFlag();
            }
            if (spin) {
                spinForWork();
                if (!pending.isEmpty() || closed) {
                    continue;
                }
            }
            // Announce, then look again: a submit either sees this thread in parked or its copy is seen here.
            parked.offer(self);
            if (!pending.isEmpty() || closed) {
                parked.remove(self);
                continue;
            }
            LockSupport.park(this);
            parked.remove(self);
        }
    }

    private boolean takeSpinFlag() {
        return spinning.compareAndSet(false, true);
    }

    /** With the spin flag held: spins briefly ({@link Backoff#BRIEF_SPIN}) for work, then gives the flag back. */
    private void spinForWork() {
        try {
            Backoff.BRIEF_SPIN.spinUntil(() -> !pending.isEmpty() || closed);
        } finally {
            spinning.set(false);
        }
    }

    /**
     * A queued copy. Whoever claims it first runs it: a copy thread, or a thread that waits for it
     * ({@link #join()}, {@link #get()}) before a copy thread got to it. Blocking callers (every
     * facade call) so skip the hand-off to another thread and back; the bytes moved are the same.
     */
    private static final class HostCopy extends CompletableFuture<Void> {
        private final CopyPlan plan;
        private final AtomicBoolean claimed = new AtomicBoolean();

        HostCopy(CopyPlan plan) {
            this.plan = plan;
        }

        /** Claims the copy for the calling thread; false if another thread already has. */
        boolean claim() {
            return claimed.compareAndSet(false, true);
        }

        /**
         * Runs a copy this thread has {@link #claim claimed}, then completes this future.
         *
         * @param beforeCompleting asked after the copy, before completing (so before any waiter wakes)
         * @return what {@code beforeCompleting} answered
         */
        boolean runClaimed(BooleanSupplier beforeCompleting) {
            Throwable failure = null;
            try {
                copyNow(plan);
            } catch (Throwable t) {
                failure = t;
            }
            boolean answer = beforeCompleting.getAsBoolean();
            if (failure == null) {
                complete(null);
            } else {
                completeExceptionally(failure);
            }
            return answer;
        }

        @Override
        public Void join() {
            runOrAwaitBriefly();
            return super.join();
        }

        @Override
        public Void get() throws InterruptedException, java.util.concurrent.ExecutionException {
            runOrAwaitBriefly();
            return super.get();
        }

        @Override
        public Void get(long timeout, java.util.concurrent.TimeUnit unit)
                throws InterruptedException, java.util.concurrent.ExecutionException, java.util.concurrent.TimeoutException {
            runOrAwaitBriefly();
            return super.get(timeout, unit);
        }

        /**
         * Runs the copy if no copy thread has claimed it; otherwise it is running on another core now,
         * and a short spin for its end beats parking and being woken. Bounded, so a long copy is
         * waited for by parking as usual.
         */
        private void runOrAwaitBriefly() {
            if (claim()) {
                runClaimed(() -> false);
            }
            Backoff.BRIEF_SPIN.spinUntil(this::isDone);
        }

        @Override
        public <U> CompletableFuture<U> newIncompleteFuture() {
            return new CompletableFuture<>();
        }
    }

    /** Always: every copy is a {@code MemorySegment.copy}, which takes heap memory as it is. */
    @Override
    public boolean acceptsHeapMemory() {
        return true;
    }

    /**
     * Copies on the calling thread: a blocking caller gains nothing from another thread. The copy
     * itself is not bounded by {@code timeoutNanos} (a {@code memcpy} cannot be abandoned halfway).
     */
    @Override
    public void copyAndWait(CopyPlan plan, long timeoutNanos) {
        if (closed) {
            throw new IllegalStateException("the host copy engine is closed");
        }
        try {
            copyNow(plan);
        } catch (RuntimeException | InternalError e) {
            // InternalError: a fault while touching a file mapping (the file shrank or the disk failed).
            throw new java.util.concurrent.CompletionException(e);
        }
    }

    /**
     * Submits the plans as one copy (one task for a copy thread, one future), as the CUDA engine enqueues a
     * batch with one call: a batch of many small regions (one layer of many KV blocks) does not pay a queue
     * entry, a future and a wake-up per region.
     */
    @Override
    public CompletableFuture<Void> submitAll(List<CopyPlan> plans) {
        if (plans.size() == 1) {
            return submit(plans.get(0));
        }
        List<CopyRegion> regions = new ArrayList<>();
        for (CopyPlan plan : plans) {
            regions.addAll(plan.regions());
        }
        if (regions.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        // The kinds only label the plan: this engine copies host memory to host memory whatever they say.
        return submit(new CopyPlan(plans.get(0).sourceKind(), plans.get(0).destinationKind(), regions));
    }

    @Override
    public boolean copiesWithTheCpu() {
        return true;
    }

    /** Copies every plan on the calling thread, as {@link #copyAndWait} does for one. */
    @Override
    public void copyAllAndWait(List<CopyPlan> plans, long timeoutNanos) {
        if (closed) {
            throw new IllegalStateException("the host copy engine is closed");
        }
        try {
            for (CopyPlan plan : plans) {
                copyNow(plan);
            }
        } catch (RuntimeException | InternalError e) {
            // InternalError: a fault while touching a file mapping (the file shrank or the disk failed).
            throw new java.util.concurrent.CompletionException(e);
        }
    }

    /** Copies every region on the calling thread. */
    static void copyNow(CopyPlan plan) {
        for (CopyRegion region : plan.regions()) {
            MemorySegment.copy(region.source(), 0, region.destination(), 0, region.byteSize());
        }
    }

    @Override
    public String description() {
        return "MemorySegment.copy on " + threadCount + " thread(s)";
    }

    /** Lets every submitted copy finish, then stops the threads; idempotent. */
    @Override
    public void close() {
        closed = true;
        while (submitting.get() != 0) {
            Thread.onSpinWait(); // a submit between its check and its enqueue: nanoseconds
        }
        workers.forEach(LockSupport::unpark);
        for (Thread worker : workers) {
            // A copy thread closing the engine (from a future's dependent) cannot wait for itself; it exits
            // its loop after that dependent returns, as the others do after draining.
            if (worker != Thread.currentThread()) {
                KvTierThreads.joinUninterruptibly(worker);
            }
        }
    }
}
