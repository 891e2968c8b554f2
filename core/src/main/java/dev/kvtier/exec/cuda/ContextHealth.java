package dev.kvtier.exec.cuda;

import dev.kvtier.cuda.CudaException;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.CudaStream;
import dev.kvtier.exec.BackendUnusableException;

import java.util.concurrent.CompletionException;

/**
 * Whether the CUDA context still works, for everything of one backend (copy engine, allocators,
 * bounce buffers). On a real device an asynchronous fault (an illegal address, a launch failure) is
 * sticky: every later call in the context fails with it, and nothing clears it short of destroying
 * the context. After each CUDA failure the backend asks {@link #check}: it queries a probe stream of
 * its own (created with the backend), on which nothing is ever enqueued, so that query can fail only
 * for the context's sake (not for a pending error of some copy); it fails twice in a row, with the
 * same error, only when the error is sticky (a one-off injected failure of the query itself fails once). Then the backend is
 * <b>unusable</b> for good: logged once at ERROR with the error's name, and every later device copy
 * or driver allocation fails at once with a {@link BackendUnusableException} ({@link #requireUsable})
 * instead of timing out or failing with a confusing error. Host-to-host copies never ask.
 *
 * <p>{@code cudaGetLastError} would tell the same (a sticky error survives being read), but reading it
 * clears the calling thread's ordinary last error, which belongs to the application; the probe stream
 * disturbs nothing, and costs nothing until a CUDA call has failed. Thread-safe; {@link #close()}
 * destroys the probe stream (a failure there is logged).
 */
final class ContextHealth implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ContextHealth.class.getName());

    /** Never given work: only the context's own error can make a query of it fail. Guarded by this. */
    private final CudaStream probe;
    private boolean closed;
    /** The sticky error that made the context unusable, or null while it works. */
    private volatile CudaException sticky;

    /**
     * Creates the probe stream while the context still works (created later, a stream could fail for
     * a reason that is not sticky, such as a device out of memory, and be mistaken for a dead context).
     *
     * @throws CudaException if the stream cannot be created
     */
    ContextHealth(CudaRuntime cuda) {
        this.probe = cuda.createStream(true);
    }

    /** Whether a sticky error has made the context unusable. */
    boolean isUnusable() {
        return sticky != null;
    }

    /** @throws BackendUnusableException once the context is unusable */
    void requireUsable() {
        CudaException error = sticky;
        if (error != null) {
            throw unusable(error);
        }
    }

    /**
     * After {@code failure} (of a CUDA call, possibly wrapped in a {@link CompletionException} or as
     * another failure's cause): whether the context is still usable. If it is not, the backend is marked
     * unusable (logged once) and the answer is a {@link BackendUnusableException} with {@code failure}
     * as its cause; otherwise {@code failure} itself. A failure that holds no {@code CudaException} is
     * answered as it is, without a probe.
     */
    Throwable check(Throwable failure) {
        if (failure instanceof BackendUnusableException || cudaCause(failure) == null) {
            return failure; // not the driver's: a closed engine, a fault in a mapping, a timeout
        }
        CudaException error = sticky;
        if (error == null) {
            error = probe();
            if (error == null) {
                return failure;
            }
        }
        return unusable(error, failure);
    }

    private BackendUnusableException unusable(CudaException error, Throwable failure) {
        return new BackendUnusableException(error.errorName(), failure == null ? error : failure);
    }

    private BackendUnusableException unusable(CudaException error) {
        return unusable(error, null);
    }

    /**
     * Queries the probe stream twice (creating it first if needed); answers the sticky error, or null
     * when the context works. Marks the backend unusable the first time it finds one.
     */
    private synchronized CudaException probe() {
        if (sticky != null) {
            return sticky;
        }
        CudaException first = query();
        if (first == null) {
            return null;
        }
        CudaException second = query();
        if (second == null || second.code() != first.code()) {
            return null; // a failure of the query itself that cleared: the context works
        }
        sticky = second;
        LOG.log(System.Logger.Level.ERROR, "the CUDA context is unusable: " + second.errorName() + " does not clear ("
                + second.getMessage() + "). Every later device copy and driver allocation fails at once; bytes in"
                + " device memory are lost, bytes in pinned host memory and mapped files stay readable. Close and"
                + " reopen in a new process (or after a device reset) to use the device again.");
        return second;
    }

    /** One query of the probe stream: null when it answers (or after close), else its error. */
    private CudaException query() {
        if (closed) {
            return null;
        }
        try {
            probe.isIdle();
            return null;
        } catch (CudaException e) {
            return e;
        }
    }

    /**
     * Runs {@code free} (a {@code cudaFree}, {@code cudaFreeHost}, {@code cudaHostUnregister},
     * stream or event destroy). If it fails and the context is unusable, the failure is logged and
     * swallowed: a dead context cannot free anything, and its resources go with it when it is destroyed
     * (process exit, device reset), so close() must not throw for them. Other failures are rethrown.
     */
    void free(String what, Runnable free) {
        try {
            free.run();
        } catch (RuntimeException e) {
            if (!(check(e) instanceof BackendUnusableException)) {
                throw e;
            }
            LOG.log(System.Logger.Level.DEBUG, "could not free " + what + " in the unusable CUDA context: " + e);
        }
    }

    /** The {@link CudaException} in {@code failure}'s cause chain, or null. */
    static CudaException cudaCause(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof CudaException e) {
                return e;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }

    /** Destroys the probe stream; idempotent; a failure is logged (in an unusable context it always fails). */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            probe.close();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "could not destroy the probe stream: " + e);
        }
    }
}
