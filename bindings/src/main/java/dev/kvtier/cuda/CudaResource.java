package dev.kvtier.cuda;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A CUDA resource owned by one handle: a stream, an event, a device or pinned allocation, or a host registration.
 * {@link #close()} marks the handle closed at once (every use then throws {@link IllegalStateException}) and releases
 * the native resource exactly once. When the release fails
 * (a {@link CudaException}), the handle stays closed and a later {@code close()} tries the release again, so a transient
 * failure does not leak the resource; after a successful release {@code close()} does nothing. Thread-safe.
 */
public abstract sealed class CudaResource implements AutoCloseable
        permits CudaStream, CudaEvent, CudaAllocation, HostRegistration {

    private final AtomicBoolean closed = new AtomicBoolean();
    private boolean released; // guarded by this

    CudaResource() {
    }

    /** @throws IllegalStateException if {@link #close()} has been called */
    final void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    /**
     * Whether {@link #close()} has been called (the handle can no longer be used).
     *
     * @return {@code true} from the first {@code close()} on, even if that close's release failed
     */
    public final boolean isClosed() {

        return closed.get();
    }

    /**
     * Releases the native resource; does nothing once a release has succeeded.
     *
     * @throws CudaException if the runtime reports an error releasing it (the handle stays closed; call again to retry)
     */
    @Override
    public final void close() {
        closed.set(true);
        synchronized (this) {
            if (!released) {
                release();
                released = true;
            }
        }
    }

    /** Releases the native resource; may be called again after it threw. */
    abstract void release();

    final String closedSuffix() {
        return closed.get() ? ", closed]" : "]";
    }
}
