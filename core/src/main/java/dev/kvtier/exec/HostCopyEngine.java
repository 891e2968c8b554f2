package dev.kvtier.exec;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Copies with {@link MemorySegment#copy} on a small pool of daemon threads, so transfers are
 * asynchronous exactly as on a GPU. Used by the host backend for every copy and by the CUDA
 * backend for host-to-host copies (pinned memory to and from file mappings).
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
        try {
            return CompletableFuture.runAsync(() -> copyNow(plan), threads);
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("the host copy engine is closed", e);
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
