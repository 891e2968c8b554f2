package dev.kvtier.cuda;

import java.lang.foreign.MemorySegment;

/**
 * Existing host memory (for instance a file mapping) page-locked with {@code cudaHostRegister}. Does not own the memory:
 * {@link #close()} unregisters it ({@code cudaHostUnregister}) once, however often it is called (a failure is
 * retried by the next close). Close before the
 * memory is freed or unmapped, and only after every asynchronous copy using it has completed. Thread-safe.
 */
public final class HostRegistration extends CudaResource {

    private final CudaRuntime runtime;
    private final MemorySegment hostMemory;
    private final boolean readOnly;

    HostRegistration(CudaRuntime runtime, MemorySegment hostMemory, boolean readOnly) {
        this.runtime = runtime;
        this.hostMemory = hostMemory;
        this.readOnly = readOnly;
    }

    /**
     * The registered memory (the segment given to {@link CudaRuntime#registerHost}).
     *
     * @return the caller's segment itself, still owned by the caller (this registration neither frees nor unmaps it)
     * @throws IllegalStateException if closed
     */
    public MemorySegment segment() {
        checkOpen();
        return hostMemory;
    }

    /**
     * Whether it was registered with {@code cudaHostRegisterReadOnly} (the device only reads it).
     *
     * @return the {@code readOnly} argument given to {@link CudaRuntime#registerHost}
     */
    public boolean isReadOnly() {

        return readOnly;
    }

    @Override
    void release() {
        // By address: the caller's segment may already be closed; the registration is keyed by address in CUDA.
        int code = CudaRuntime.callWithPointer(runtime.calls().cudaHostUnregister,
                MemorySegment.ofAddress(hostMemory.address()));
        runtime.check("cudaHostUnregister", code, hostMemory.byteSize() + " bytes");
    }

    @Override
    public String toString() {
        return "HostRegistration[" + hostMemory.byteSize() + " bytes at 0x" + Long.toHexString(hostMemory.address())
                + (readOnly ? ", read-only" : "") + closedSuffix();
    }
}
