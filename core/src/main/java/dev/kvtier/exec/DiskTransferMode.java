package dev.kvtier.exec;

/**
 * How the CUDA backend moves bytes between DISK extents (file mappings) and device memory. DISK to
 * CPU and back is a host-side copy in every mode; the host backend ignores this setting.
 *
 * <p>{@link #AUTO} is the default. It keeps registration where the device supports it because
 * registration was the existing behaviour and the only measurement so far (bench/results/copy.md,
 * "DISK to GPU from a cold mapping") ran over the host-emulated libcudart, which measures the
 * host-side cost only: there the direct copy from a registered mapping was the faster of the two,
 * with staging paying an extra host memcpy. The real choice needs the same benchmark on a GPU,
 * where a cold registered mapping also pays page faults inside the DMA path and pinning on
 * registration; change the default only on such a figure.
 */
public enum DiskTransferMode {
    /** {@link #REGISTERED} where the device reports {@code cudaDevAttrHostRegisterSupported}, else {@link #STAGED}. */
    AUTO,
    /**
     * Each extent registered with {@code cudaHostRegister} as it is mapped; copies go straight
     * between the mapping and the device. An extent the driver refuses to register (or every extent,
     * on a device without the capability) is staged instead.
     */
    REGISTERED,
    /**
     * Extents are never registered; copies go mapping to a pinned bounce buffer (a small pool from
     * {@code cudaHostAlloc}, allocated on first use) to device and back, in bounce-sized chunks,
     * double-buffered so the host memcpy of one chunk overlaps the DMA of the previous one.
     */
    STAGED
}
