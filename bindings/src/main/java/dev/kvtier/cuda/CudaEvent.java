package dev.kvtier.cuda;

import dev.kvtier.cuda.runtime.cudart_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A CUDA event ({@code cudaEvent_t}): a marker recorded into a stream, complete once the work before it has run. Used to
 * know when an asynchronous copy's buffers may be reused, to order streams ({@link CudaStream#waitFor}) and, for timing
 * events, to measure. {@link #close()} destroys it ({@code cudaEventDestroy}) once, however often it is called (a failed destroy is
 * retried by the next close);
 * every other method throws {@link IllegalStateException} once closed. Thread-safe, but close only when no other thread
 * uses it.
 */
public final class CudaEvent extends CudaResource {

    private final CudaRuntime runtime;
    private final MemorySegment handle;
    private final boolean timing;

    CudaEvent(CudaRuntime runtime, MemorySegment handle, boolean timing) {
        this.runtime = runtime;
        this.handle = handle;
        this.timing = timing;
    }

    /**
     * The raw {@code cudaEvent_t}, for calls through the raw bindings.
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
     * The runtime that created this event.
     *
     * @return the runtime whose library the handle belongs to; it can be used only with streams of that library
     */
    public CudaRuntime runtime() {
        return runtime;
    }

    /**
     * Whether this event records time ({@link #elapsedMillisSince} works).
     *
     * @return {@code false} when created with {@code cudaEventDisableTiming}
     */
    public boolean isTiming() {
        return timing;
    }

    /**
     * {@code cudaEventRecord}: marks the point in {@code stream} after all work enqueued on it so far.
     *
     * @param stream the stream to record into, of this event's library; a later record replaces the earlier one
     * @throws IllegalArgumentException if {@code stream} is null or belongs to another library
     * @throws IllegalStateException    if this event or the stream is closed
     */
    public void record(CudaStream stream) {
        Arguments.requireNonNull(stream, "stream");
        MemorySegment event = handle();
        MemorySegment streamHandle = runtime.ownHandle(stream);
        int code;
        try {
            code = (int) runtime.calls().cudaEventRecord.invokeExact(event, streamHandle);
        } catch (Throwable t) {
            throw CudaRuntime.unexpected(t);
        }
        runtime.check("cudaEventRecord", code);
    }

    /**
     * {@code cudaEventQuery}: whether the work before the last record has completed (true for a never-recorded event);
     * never blocks.
     *
     * @return {@code true} once the recorded work has run ({@code cudaSuccess}), {@code false} on
     *         {@code cudaErrorNotReady}; any other code is thrown as a {@link CudaException}
     */
    public boolean isComplete() {
        int code = CudaRuntime.callWithPointer(runtime.calls().cudaEventQuery, handle());
        if (code == CudaStream.NOT_READY) {
            return false;
        }
        runtime.check("cudaEventQuery", code);
        return true;
    }

    /** {@code cudaEventSynchronize}: blocks until the work before the last record has completed. */
    public void synchronize() {
        int code = CudaRuntime.callWithPointer(runtime.calls().cudaEventSynchronize, handle());
        runtime.check("cudaEventSynchronize", code);
    }

    /**
     * {@code cudaEventElapsedTime(start, this)}: milliseconds between {@code start} and this event, both timing events
     * and both complete.
     *
     * @param start the earlier timing event, of the same library
     * @return elapsed time in milliseconds from {@code start} to this event, with CUDA's resolution of about half a
     *         microsecond
     * @throws IllegalArgumentException if either event was created without timing

     */
    public float elapsedMillisSince(CudaEvent start) {
        Arguments.requireNonNull(start, "start");
        if (!timing || !start.timing) {
            throw new IllegalArgumentException("both events must be timing events (createEvent(true)); start.isTiming()="
                    + start.timing + ", this.isTiming()=" + timing);
        }
        if (!start.runtime.sameLibraryAs(runtime)) {
            throw new IllegalArgumentException("start belongs to the CUDA runtime at " + start.runtime.libraryLocation()
                    + ", not to this event's at " + runtime.libraryLocation());
        }
        MemorySegment end = handle();
        MemorySegment begin = start.handle();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment millis = arena.allocate(cudart_h.C_FLOAT);
            int code;
            try {
                code = (int) runtime.calls().cudaEventElapsedTime.invokeExact(millis, begin, end);
            } catch (Throwable t) {
                throw CudaRuntime.unexpected(t);
            }
            runtime.check("cudaEventElapsedTime", code);
            return millis.get(cudart_h.C_FLOAT, 0);
        }
    }

    @Override
    void release() {
        runtime.check("cudaEventDestroy", CudaRuntime.callWithPointer(runtime.calls().cudaEventDestroy, handle));
    }

    @Override
    public String toString() {
        return "CudaEvent[0x" + Long.toHexString(handle.address()) + (timing ? ", timing" : "")
                + closedSuffix();
    }
}
