package dev.kvtier.exec;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Copies with {@link MemorySegment#copy} on a small pool of daemon threads, so transfers are
 * asynchronous exactly as on a GPU. Used by the host backend for every copy and by the CUDA
 * backend for host-to-host copies (pinned memory to and from file mappings).
 *
 * <p>A thread that waits for a copy no pool thread has started yet runs it itself (see
 * {@code HostCopy}), so blocking callers pay no hand-off.
 *
 * <p>Thread-safe. {@link #close()} lets submitted copies finish, then stops the threads.
 */
public final class HostCopyEngine implements CopyEngine {
    private final ExecutorService threads;
    private final int threadCount;

    /** @param threadCount copy threads, {@code >= 1} */
    public HostCopyEngine(int threadCount) {
        if (threadCount < 1) {
            throw new IllegalArgumentException("threadCount must be >= 1, was " + threadCount);
        }
        this.threadCount = threadCount;
        AtomicInteger counter = new AtomicInteger();
        this.threads = Executors.newFixedThreadPool(threadCount, r -> {
            Thread t = new Thread(r, "kvtier-host-copy-" + counter.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public CompletableFuture<Void> submit(CopyPlan plan) {
        if (plan.regions().isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        HostCopy copy = new HostCopy(plan);
        try {
            threads.execute(copy::runIfUnclaimed);
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("the host copy engine is closed", e);
        }
        return copy;
    }

    /**
     * A copy handed to the pool. Whoever claims it first runs it: a pool thread, or a thread that
     * waits for it ({@link #join()}, {@link #get()}) before a pool thread got to it. Blocking callers
     * (every facade call) so skip the hand-off to another thread and back, which costs more than
     * copying a megabyte on a busy machine; the bytes moved are the same.
     */
    private static final class HostCopy extends CompletableFuture<Void> {
        private final CopyPlan plan;
        private final AtomicBoolean claimed = new AtomicBoolean();

        HostCopy(CopyPlan plan) {
            this.plan = plan;
        }

        void runIfUnclaimed() {
            if (!claimed.compareAndSet(false, true)) {
                return;
            }
            try {
                copyNow(plan);
                complete(null);
            } catch (Throwable t) {
                completeExceptionally(t);
            }
        }

        @Override
        public Void join() {
            runIfUnclaimed();
            return super.join();
        }

        @Override
        public Void get() throws InterruptedException, java.util.concurrent.ExecutionException {
            runIfUnclaimed();
            return super.get();
        }

        @Override
        public <U> CompletableFuture<U> newIncompleteFuture() {
            return new CompletableFuture<>();
        }
    }

    /** Copies on the calling thread: a blocking caller gains nothing from another thread. */
    @Override
    public void copyAndWait(CopyPlan plan) {
        if (threads.isShutdown()) {
            throw new IllegalStateException("the host copy engine is closed");
        }
        try {
            copyNow(plan);
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

    @Override
    public void close() {
        shutdownAndAwait(threads);
    }

    /** Shuts {@code threads} down and waits, uninterruptibly, until every task it accepted has run. */
    static void shutdownAndAwait(ExecutorService threads) {
        threads.shutdown();
        boolean interrupted = false;
        while (true) {
            try {
                if (threads.awaitTermination(1, TimeUnit.MINUTES)) {
                    break;
                }
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
