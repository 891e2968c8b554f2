package dev.kvtier.bench.soak;

import java.util.List;

/**
 * The kinds of fault the soak injects, one kind per epoch (an epoch opens a cache, runs the workers while the kind's
 * {@link FaultInjector} fires, closes the cache and checks for leaks), cycling through the kinds of the backend.
 */
enum Fault {
    /** fail=FUNC:N:ERR on cudaMemcpyAsync, cudaMemcpyBatchAsync, cudaMalloc, cudaHostAlloc: a call that fails at once. */
    SYNC_FAIL("sync call failures (fail=)", true),
    /** failasync=FUNC:N:ERR on cudaMemcpyAsync and cudaMemcpyBatchAsync: a copy accepted, skipped, failing later. */
    ASYNC_FAIL("async copy failures (failasync=)", true),
    /** failasync=cudaLaunchHostFunc:N:ERR: a host function that never runs. */
    HOST_FUNC_NEVER("host function never runs (failasync=cudaLaunchHostFunc)", true),
    /** copydelayus bursts longer than the transfer timeout: copies time out. */
    COPY_DELAY("slow copies past the transfer timeout (copydelayus bursts)", true),
    /** stickyasync=1 with an async copy fault: the context dies; the epoch ends, the cache is closed and reopened. */
    STICKY("sticky error: a dead context (stickyasync=1), then close and reopen", true),
    /** The disk directory on a small tmpfs, filled by a ballast file in bursts. */
    DISK_FULL("disk full (ballast on a small tmpfs)", false),
    /** An extent file truncated behind the cache's back, then grown back (the lost pages read as zeros). */
    TRUNCATE_EXTENT("extent file truncated, then grown back", false),
    /** Operating threads interrupted at random. */
    INTERRUPTS("operating threads interrupted", false),
    /** Budgets of a few pages: making room contends all the time. */
    TINY_BUDGETS("tiny budgets (GPU 2 pages, CPU 3)", false);

    final String label;
    /** Needs the fake libcudart's control API. */
    final boolean needsFake;

    Fault(String label, boolean needsFake) {
        this.label = label;
        this.needsFake = needsFake;
    }

    /** The kinds a run cycles through on {@code backend}, in order. */
    static List<Fault> cycle(SoakOptions.BackendChoice backend) {
        return backend == SoakOptions.BackendChoice.HOST
                ? List.of(DISK_FULL, TRUNCATE_EXTENT, INTERRUPTS, TINY_BUDGETS)
                : List.of(SYNC_FAIL, ASYNC_FAIL, HOST_FUNC_NEVER, COPY_DELAY, STICKY, INTERRUPTS, TINY_BUDGETS);
    }
}
