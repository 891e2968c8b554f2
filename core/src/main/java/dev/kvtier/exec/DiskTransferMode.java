package dev.kvtier.exec;

/**
 * How the CUDA backend moves bytes between DISK extents (file mappings) and device memory. DISK to
 * CPU and back is a host-side copy in every mode; the host backend ignores this setting.
 *
 * <p>{@link #AUTO} is the default and keeps registration wherever the device supports it, because
 * that is what the only measurement so far says (bench/results/copy.md, section 4,
 * {@code ColdDiskToGpuBenchmark}, four runs on the 2-core sandbox over the host-emulated libcudart):
 * from a never-touched mapping, staging was never clearly faster than copying straight from the
 * registered mapping (median staged/registered 0.98-1.62 at 1 MiB and 16 MiB; 1.08-1.14 with the
 * extent's creation and registration timed too), and from a warm mapping it was 1.0-2.5x slower
 * (the extra host copy). Those runs measure the host-side cost only: the fake's "device" is host
 * memory and its copy a {@code memcpy}, so neither a DMA engine nor the driver's pinning at
 * {@code cudaHostRegister} time is in them. The real choice needs the same benchmark on a GPU;
 * change the default only on such a figure.
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
