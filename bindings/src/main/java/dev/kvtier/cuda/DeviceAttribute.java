package dev.kvtier.cuda;

import dev.kvtier.cuda.runtime.cudart_h;

/** The device attributes we query ({@code enum cudaDeviceAttr}), for {@link CudaRuntime#deviceAttribute}. */
public enum DeviceAttribute {
    MULTIPROCESSOR_COUNT(cudart_h.cudaDevAttrMultiProcessorCount()),
    /** Number of copy engines: 2 or more copy both directions at once. */
    ASYNC_ENGINE_COUNT(cudart_h.cudaDevAttrAsyncEngineCount()),
    UNIFIED_ADDRESSING(cudart_h.cudaDevAttrUnifiedAddressing()),
    COMPUTE_CAPABILITY_MAJOR(cudart_h.cudaDevAttrComputeCapabilityMajor()),
    COMPUTE_CAPABILITY_MINOR(cudart_h.cudaDevAttrComputeCapabilityMinor()),
    PAGEABLE_MEMORY_ACCESS(cudart_h.cudaDevAttrPageableMemoryAccess()),
    CONCURRENT_MANAGED_ACCESS(cudart_h.cudaDevAttrConcurrentManagedAccess()),
    HOST_REGISTER_SUPPORTED(cudart_h.cudaDevAttrHostRegisterSupported()),
    /** Whether {@code cudaHostRegisterReadOnly} is supported (needed to register read-only file mappings). */
    HOST_REGISTER_READ_ONLY_SUPPORTED(cudart_h.cudaDevAttrHostRegisterReadOnlySupported()),
    /** Whether the device can use the host pointer of registered memory directly (no cudaHostGetDevicePointer). */
    CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM(cudart_h.cudaDevAttrCanUseHostPointerForRegisteredMem());

    private final int code;

    DeviceAttribute(int code) {
        this.code = code;
    }

    /** The {@code cudaDeviceAttr} value. */
    public int code() {
        return code;
    }
}
