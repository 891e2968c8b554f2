package dev.kvtier.cuda;

import dev.kvtier.cuda.runtime.cudart_h;

/** The device attributes we query ({@code enum cudaDeviceAttr}), for {@link CudaRuntime#deviceAttribute}. */
public enum DeviceAttribute {
    /** {@code cudaDevAttrMultiProcessorCount}: number of streaming multiprocessors. */
    MULTIPROCESSOR_COUNT(cudart_h.cudaDevAttrMultiProcessorCount()),
    /** Number of copy engines: 2 or more copy both directions at once. */
    ASYNC_ENGINE_COUNT(cudart_h.cudaDevAttrAsyncEngineCount()),
    /**
     * {@code cudaDevAttrUnifiedAddressing}: 1 when host and device share one address space, so
     * {@link MemcpyKind#DEFAULT} can infer a copy's direction.
     */
    UNIFIED_ADDRESSING(cudart_h.cudaDevAttrUnifiedAddressing()),
    /** {@code cudaDevAttrComputeCapabilityMajor}: the major compute capability, e.g. 9 for an H100. */
    COMPUTE_CAPABILITY_MAJOR(cudart_h.cudaDevAttrComputeCapabilityMajor()),
    /** {@code cudaDevAttrComputeCapabilityMinor}: the minor compute capability, e.g. 0 for an H100. */
    COMPUTE_CAPABILITY_MINOR(cudart_h.cudaDevAttrComputeCapabilityMinor()),
    /** {@code cudaDevAttrPageableMemoryAccess}: 1 when the device can access pageable host memory without registering it. */
    PAGEABLE_MEMORY_ACCESS(cudart_h.cudaDevAttrPageableMemoryAccess()),
    /** {@code cudaDevAttrConcurrentManagedAccess}: 1 when host and device may access managed memory at the same time. */
    CONCURRENT_MANAGED_ACCESS(cudart_h.cudaDevAttrConcurrentManagedAccess()),
    /** {@code cudaDevAttrHostRegisterSupported}: 1 when {@code cudaHostRegister} works on this device. */
    HOST_REGISTER_SUPPORTED(cudart_h.cudaDevAttrHostRegisterSupported()),
    /** Whether {@code cudaHostRegisterReadOnly} is supported (needed to register read-only file mappings). */
    HOST_REGISTER_READ_ONLY_SUPPORTED(cudart_h.cudaDevAttrHostRegisterReadOnlySupported()),
    /** Whether the device can use the host pointer of registered memory directly (no cudaHostGetDevicePointer). */
    CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM(cudart_h.cudaDevAttrCanUseHostPointerForRegisteredMem());

    private final int code;

    DeviceAttribute(int code) {
        this.code = code;
    }

    /**
     * The {@code cudaDeviceAttr} value.
     *
     * @return the C enumerator's value, as passed to {@code cudaDeviceGetAttribute}
     */
    public int code() {

        return code;
    }
}
