package dev.kvtier.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Device memory from {@code cudaMalloc}, as a sized {@link MemorySegment} that the host must never read or write
 * (it is a device address): pass it only to copies and other CUDA calls.
 *
 * <p>Owns the memory: {@link #close()} frees it ({@code cudaFree}) once, however often it is called (a failed free is retried
 * by the next close); from the first close the segment is inaccessible (its arena is closed) and {@link #segment()}
 * throws {@link IllegalStateException}. Close only after every asynchronous copy using the memory has completed.
 * Thread-safe; closing while another thread uses the segment in a call throws {@link IllegalStateException} and frees
 * nothing (close again later).
 */
@SuppressWarnings("restricted") // binding native code is this class's job; run with --enable-native-access
public final class DeviceAllocation extends CudaResource {

    private final CudaRuntime runtime;
    private final long address;
    private final long byteSize;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment segment;

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
        checkOpen();
        return segment;
    }

    /** The size in bytes. */
    public long byteSize() {
        return byteSize;
    }

    @Override
    void release() {
        if (arena.scope().isAlive()) {
            try {
                arena.close();
            } catch (IllegalStateException inUse) {
                throw new IllegalStateException(this + " cannot be released while another thread uses it", inUse);
            }
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
        return "DeviceAllocation[" + byteSize + " bytes at 0x" + Long.toHexString(address) + closedSuffix();
    }
}
