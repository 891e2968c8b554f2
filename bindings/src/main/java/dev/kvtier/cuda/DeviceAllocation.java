package dev.kvtier.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Device memory from {@code cudaMalloc}, as a sized {@link MemorySegment} that the host must never read or write
 * (it is a device address): pass it only to copies and other CUDA calls.
 *
 * <p>Owns the memory: {@link #close()} frees it ({@code cudaFree}) exactly once, however often it is called; the segment is
 * then inaccessible (its arena is closed) and {@link #segment()} throws {@link IllegalStateException}. Close only after
 * every asynchronous copy using the memory has completed. Thread-safe; closing while another thread uses the segment in a
 * call fails with {@link IllegalStateException} and leaves the allocation open.
 */
public final class DeviceAllocation implements AutoCloseable {

    private final CudaRuntime runtime;
    private final long address;
    private final long byteSize;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment segment;
    private final AtomicBoolean closed = new AtomicBoolean();

    DeviceAllocation(CudaRuntime runtime, long address, long byteSize) {
        this.runtime = runtime;
        this.address = address;
        this.byteSize = byteSize;
        this.segment = MemorySegment.ofAddress(address).reinterpret(byteSize, arena, null);
    }

    /**
     * The device memory, sized; for CUDA calls only, never dereferenced on the host.
     *
     * @throws IllegalStateException if closed
     */
    public MemorySegment segment() {
        if (closed.get()) {
            throw new IllegalStateException(this + " is closed");
        }
        return segment;
    }

    /** The size in bytes. */
    public long byteSize() {
        return byteSize;
    }

    /** Whether {@link #close()} has run. */
    public boolean isClosed() {
        return closed.get();
    }

    /**
     * Frees the memory ({@code cudaFree}); later calls do nothing.
     *
     * @throws CudaException if the runtime reports an error freeing it (the handle is closed regardless)
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            arena.close();
        } catch (IllegalStateException inUse) {
            closed.set(false);
            throw new IllegalStateException(this + " cannot be closed while another thread uses it", inUse);
        }
        int code;
        try {
            code = (int) runtime.calls().cudaFree.invokeExact(MemorySegment.ofAddress(address));
        } catch (Throwable t) {
            throw CudaRuntime.unexpected(t);
        }
        runtime.check("cudaFree", code, byteSize + " bytes");
    }

    @Override
    public String toString() {
        return "DeviceAllocation[" + byteSize + " bytes at 0x" + Long.toHexString(address) + (closed.get() ? ", closed]" : "]");
    }
}
