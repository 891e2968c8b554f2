package dev.kvtier;

/**
 * How the CUDA backend moves bytes between DISK extents (file mappings) and device memory. DISK to
 * CPU and back is a host-side copy in every mode; the host backend ignores this setting.
 *
 * <p>{@link #AUTO} is the default and keeps registration wherever the device supports it, because
 * that is what the measurements so far say: staging was never clearly faster than copying straight
 * from a registered mapping, and from a warm mapping it was slower (the extra host copy). The
 * figures, and why they measure the host side only (no GPU was lent for them), are in
 * {@code bench/RESULTS.md}, Copies ({@code ColdDiskToGpuBenchmark}). Change the default only
 * on the same benchmark run on a GPU.
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
