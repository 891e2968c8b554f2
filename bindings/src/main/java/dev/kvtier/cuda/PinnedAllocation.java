package dev.kvtier.cuda;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * Page-locked host memory from {@code cudaHostAlloc}: readable and writable by the host, and copied to and from
 * devices asynchronously at full bus speed.
 *
 * <p>Owns the memory: {@link #close()} frees it ({@code cudaFreeHost}) once, however often it is called (a failed free is retried
 * by the next close); from the first close the segment is inaccessible (its arena is closed) and {@link #segment()}
 * throws {@link IllegalStateException}. Close only after every asynchronous copy using the memory has completed.
 * Thread-safe; closing while another thread uses the segment in a call throws {@link IllegalStateException} and frees
 * nothing (close again later).
 */
public final class PinnedAllocation extends CudaAllocation {

    PinnedAllocation(CudaRuntime runtime, long address, long byteSize) {
        super(runtime, address, byteSize);
    }

    /**
     * The pinned host memory, sized; the host may read and write it.
     *
     * @return a segment of {@link #byteSize()} bytes at the {@code cudaHostAlloc} address, owned by this allocation and
     *         inaccessible once it is closed
     * @throws IllegalStateException if closed

     */
    public MemorySegment segment() {
        return checkedSegment();
    }

    @Override
    MethodHandle freeFunction(BoundCudart calls) {
        return calls.cudaFreeHost;
    }

    @Override
    String freeCallName() {
        return "cudaFreeHost";
    }
}
