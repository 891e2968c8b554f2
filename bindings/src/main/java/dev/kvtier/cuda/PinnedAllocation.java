package dev.kvtier.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

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
@SuppressWarnings("restricted") // binding native code is this class's job; run with --enable-native-access
public final class PinnedAllocation extends CudaResource {

    private final CudaRuntime runtime;
    private final long address;
    private final long byteSize;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment segment;

    PinnedAllocation(CudaRuntime runtime, long address, long byteSize) {
        this.runtime = runtime;
        this.address = address;
        this.byteSize = byteSize;
        this.segment = MemorySegment.ofAddress(address).reinterpret(byteSize, arena, null);
    }

    /**
     * The pinned host memory, sized; the host may read and write it.
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
            code = (int) runtime.calls().cudaFreeHost.invokeExact(MemorySegment.ofAddress(address));
        } catch (Throwable t) {
            throw CudaRuntime.unexpected(t);
        }
        runtime.check("cudaFreeHost", code, byteSize + " bytes");
    }

    @Override
    public String toString() {
        return "PinnedAllocation[" + byteSize + " bytes at 0x" + Long.toHexString(address) + closedSuffix();
    }
}
