package dev.kvtier.exec;

import java.util.concurrent.CompletableFuture;

/**
 * Moves bytes asynchronously: the one thing a backend must do besides supplying memory. The CUDA
 * implementation issues {@code cudaMemcpyAsync}/batch copies on dedicated device-to-host and
 * host-to-device streams; the host implementation copies with {@code MemorySegment.copy} on its
 * own threads.
 *
 * <p>Contract, for every implementation (checked by the contract suite):
 * <ul>
 *   <li>{@link #submit} never blocks for the copy itself and never runs caller code on a driver
 *       callback thread beyond completing the returned future;</li>
 *   <li>the returned future completes, normally or exceptionally, only when no copy it started
 *       can still read or write either side, so the caller may then free or reuse both;</li>
 *   <li>a failure completes the future exceptionally with the cause (the CUDA call and error
 *       name, or the Java exception); it never surfaces as wrong bytes.</li>
 * </ul>
 * Thread-safe.
 */
public interface CopyEngine extends AutoCloseable {

    /**
     * Starts every region of {@code plan}; the future completes when all bytes are in place.
     *
     * @throws IllegalStateException after {@link #close()}
     */
    CompletableFuture<Void> submit(CopyPlan plan);

    /**
     * Starts every plan; the future completes when all of them are in place. Engines that can
     * (CUDA) enqueue the plans' regions together, paying the per-call cost once; the default
     * submits them one by one.
     *
     * @throws IllegalStateException after {@link #close()}
     */
    default CompletableFuture<Void> submitAll(java.util.List<CopyPlan> plans) {
        CompletableFuture<?>[] parts = new CompletableFuture<?>[plans.size()];
        for (int i = 0; i < parts.length; i++) {
            parts[i] = submit(plans.get(i));
        }
        return CompletableFuture.allOf(parts);
    }

    /**
     * Copies {@code plan} and returns when the bytes are in place, waiting at most {@code timeoutNanos}.
     * The default submits and {@link #await awaits}; engines that copy with the CPU do it on the
     * calling thread, saving the hand-off.
     *
     * @throws java.util.concurrent.CompletionException wrapping what failed
     * @throws TransferTimeoutException                 if the bytes were not in place in time (the copy
     *                                                  may still be running)
     * @throws IllegalStateException                    after {@link #close()}
     */
    default void copyAndWait(CopyPlan plan, long timeoutNanos) {
        await(submit(plan), timeoutNanos, plan.totalBytes());
    }

    /**
     * Copies every plan and returns when all their bytes are in place, waiting at most {@code timeoutNanos}.
     * The default {@link #submitAll submits them together} (one batch per direction on CUDA) and
     * {@link #await awaits}; engines that copy with the CPU copy them on the calling thread: no future,
     * no hand-off to a copy thread and no wake-up, which for small segments cost far more than the copies.
     *
     * @throws java.util.concurrent.CompletionException wrapping what failed (then no plan may be assumed copied)
     * @throws TransferTimeoutException                 if the bytes were not in place in time (copies may
     *                                                  still be running)
     * @throws IllegalStateException                    after {@link #close()}
     */
    default void copyAllAndWait(java.util.List<CopyPlan> plans, long timeoutNanos) {
        long bytes = 0;
        for (CopyPlan plan : plans) {
            bytes += plan.totalBytes();
        }
        await(submitAll(plans), timeoutNanos, bytes);
    }

    /**
     * Waits for a copy's future at most {@code timeoutNanos}, uninterruptibly (an interrupt is kept in
     * the thread's flag: abandoning the wait would let the caller free memory under a running copy).
     *
     * @throws java.util.concurrent.CompletionException wrapping what failed
     * @throws TransferTimeoutException                 if it did not complete in time
     */
    static void await(CompletableFuture<Void> copy, long timeoutNanos, long bytes) {
        long deadline = System.nanoTime() + timeoutNanos;
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    copy.get(Math.max(0, deadline - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS);
                    return;
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (java.util.concurrent.ExecutionException e) {
                    throw new java.util.concurrent.CompletionException(e.getCause());
                } catch (java.util.concurrent.TimeoutException e) {
                    throw new TransferTimeoutException("a copy of " + bytes + " bytes",
                            java.time.Duration.ofNanos(timeoutNanos));
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Whether plans may name heap memory on the host side: true for an engine that only copies with
     * {@code MemorySegment.copy}; false (the default) where addresses go to a driver, which needs
     * native memory, so the executor stages heap bytes first.
     */
    default boolean acceptsHeapMemory() {
        return false;
    }

    /**
     * Runs {@code action} once no copy this engine started can still read or write memory: at once
     * for an engine whose {@link #close()} waited for every copy (the default), or, when a copy that
     * timed out was still running as {@code close()} gave up waiting, later, on a kvtier thread, when
     * it has drained (never, if it never does). Call after {@code close()}; this is how memory a
     * wedged copy may still touch is freed without freeing it under the device.
     */
    default void whenQuiescent(Runnable action) {
        action.run();
    }

    /**
     * Whether this engine's copies are work of the CPU ({@code MemorySegment.copy}) rather than of a device
     * engine running beside it: then starting a copy before waiting for the one before buys no overlap, and a
     * waiter that finds a copy not yet started runs it itself, saving a hand-off. False by default.
     */
    default boolean copiesWithTheCpu() {
        return false;
    }

    /** For logs: how copies are done, e.g. {@code "MemorySegment.copy on 2 threads"}. */
    String description();

    /** Waits for submitted copies to finish, then frees streams and threads; idempotent. */
    @Override
    void close();
}
