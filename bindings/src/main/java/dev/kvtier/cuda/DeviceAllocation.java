package dev.kvtier.cuda;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

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
public final class DeviceAllocation extends CudaAllocation {

    DeviceAllocation(CudaRuntime runtime, long address, long byteSize) {
        super(runtime, address, byteSize);
    }

    /**
     * The device memory, sized; for CUDA calls only, never dereferenced on the host.
     *
     * @return a segment of {@link #byteSize()} bytes at the {@code cudaMalloc} address, owned by this allocation and
     *         inaccessible once it is closed
     * @throws IllegalStateException if closed

     */
    public MemorySegment segment() {
        return checkedSegment();
    }

    @Override
    MethodHandle freeFunction(BoundCudart calls) {
        return calls.cudaFree;
    }

    @Override
    String freeCallName() {
        return "cudaFree";
    }
}
