package dev.kvtier.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * What {@link DeviceAllocation} and {@link PinnedAllocation} share: memory at a native address, handed out as a sized
 * {@link MemorySegment} bound to this handle's own shared arena, and freed by one CUDA call. The arena is closed first,
 * so from the first {@link #close()} the segment is inaccessible; closing it fails (and nothing is freed) while another
 * thread uses the segment in a call. Only the free call and the descriptions differ between the two.
 */
@SuppressWarnings("restricted") // binding native code is this class's job; run with --enable-native-access
abstract sealed class CudaAllocation extends CudaResource permits DeviceAllocation, PinnedAllocation {

    private final CudaRuntime runtime;
    private final long address;
    private final long byteSize;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment segment;

    CudaAllocation(CudaRuntime runtime, long address, long byteSize) {
        this.runtime = runtime;
        this.address = address;
        this.byteSize = byteSize;
        this.segment = MemorySegment.ofAddress(address).reinterpret(byteSize, arena, null);
    }

    /** The memory, sized; the subclasses' public {@code segment()} says what the host may do with it. */
    final MemorySegment checkedSegment() {
        checkOpen();
        return segment;
    }

    /**
     * The size in bytes.
     *
     * @return the size requested from CUDA, positive; {@code segment().byteSize()} equals it
     */
    // Not final: javac then emits a public bridge in each public subclass, so reflection and Javadoc see it there.
    public long byteSize() {
        return byteSize;
    }

    /** The bound function that frees this kind of memory: {@code cudaError_t f(void*)}. */
    abstract MethodHandle freeFunction(BoundCudart calls);

    /** The name of the free call, for {@link CudaException}s. */
    abstract String freeCallName();

    @Override
    final void release() {
        if (arena.scope().isAlive()) {
            try {
                arena.close();
            } catch (IllegalStateException inUse) {
                throw new IllegalStateException(this + " cannot be released while another thread uses it", inUse);
            }
        }
        int code = CudaRuntime.callWithPointer(freeFunction(runtime.calls()), MemorySegment.ofAddress(address));
        runtime.check(freeCallName(), code, byteSize + " bytes");
    }

    @Override
    public final String toString() {
        return getClass().getSimpleName() + "[" + byteSize + " bytes at 0x" + Long.toHexString(address) + closedSuffix();
    }
}
