package dev.kvtier.cuda;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

/**
 * A CUDA stream ({@code cudaStream_t}): work enqueued on it runs in order. {@link #close()} destroys it
 * ({@code cudaStreamDestroy}) once, however often it is called (a failed destroy is retried by the next close); work
 * already enqueued still completes. Every
 * other method throws {@link IllegalStateException} once closed. Thread-safe, but close only when no other thread
 * enqueues on it.
 */
public final class CudaStream extends CudaResource {

    private final CudaRuntime runtime;
    private final MemorySegment handle;

    CudaStream(CudaRuntime runtime, MemorySegment handle) {
        this.runtime = runtime;
        this.handle = handle;
    }

    /**
     * The raw {@code cudaStream_t}, for calls through the raw bindings.
     *
     * @return the opaque handle as an address (size 0, never dereferenced); still owned by this object, invalid once it
     *         is closed
     * @throws IllegalStateException if closed
     */
    public MemorySegment handle() {
        checkOpen();
        return handle;
    }

    /**
     * The runtime that created this stream.
     *
     * @return the runtime whose library the handle belongs to; copies and events on this stream must use that library
     */
    public CudaRuntime runtime() {
        return runtime;
    }

    /** {@code cudaStreamSynchronize}: blocks until all work enqueued so far has completed. */
    public void synchronize() {
        int code = CudaRuntime.callWithPointer(runtime.calls().cudaStreamSynchronize, handle());
        runtime.check("cudaStreamSynchronize", code);
    }

    /**
     * {@code cudaStreamQuery}: whether all work enqueued so far has completed; never blocks.
     *
     * @return {@code true} on {@code cudaSuccess}, {@code false} on {@code cudaErrorNotReady}; any other code is thrown
     *         as a {@link CudaException}
     */
    public boolean isIdle() {
        int code = CudaRuntime.callWithPointer(runtime.calls().cudaStreamQuery, handle());
        if (code == NOT_READY) {
            return false;
        }
        runtime.check("cudaStreamQuery", code);
        return true;
    }

    /**
     * {@code cudaStreamWaitEvent}: work enqueued on this stream from now on waits for {@code event}'s last record.
     *
     * @param event an open event of this stream's library, possibly recorded on another stream; a never-recorded
     *              event makes nothing wait
     * @throws IllegalArgumentException if {@code event} belongs to another library
     * @throws IllegalStateException    if this stream or the event is closed
     */
    public void waitFor(CudaEvent event) {
        MemorySegment stream = handle();
        if (!event.runtime().sameLibraryAs(runtime)) {
            throw new IllegalArgumentException("event belongs to the CUDA runtime at " + event.runtime().libraryLocation()
                    + ", not to this stream's at " + runtime.libraryLocation());
        }
        MemorySegment eventHandle = event.handle();
        int code;
        try {
            code = (int) runtime.calls().cudaStreamWaitEvent.invokeExact(stream, eventHandle, 0);
        } catch (Throwable t) {
            throw CudaRuntime.unexpected(t);
        }
        runtime.check("cudaStreamWaitEvent", code);
    }

    /**
     * Shorthand for {@link CudaRuntime#onComplete(CudaStream) runtime().onComplete(this)}.
     *
     * @return a future completed on a kvtier thread once all work enqueued so far has finished
     */
    public CompletableFuture<Void> onComplete() {

        return runtime.onComplete(this);
    }

    @Override
    void release() {
        runtime.check("cudaStreamDestroy", CudaRuntime.callWithPointer(runtime.calls().cudaStreamDestroy, handle));
    }

    @Override
    public String toString() {
        return "CudaStream[0x" + Long.toHexString(handle.address()) + closedSuffix();
    }

    static final int NOT_READY = dev.kvtier.cuda.runtime.cudart_h.cudaErrorNotReady();
}
