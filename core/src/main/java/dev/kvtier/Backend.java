package dev.kvtier;

/**
 * Which executor backend a {@link KvTierCache} uses.
 */
public enum Backend {
    /** CUDA when {@code CudaRuntime.probe()} finds a usable runtime and device, otherwise {@link #HOST}; the log says which and why. */
    AUTO,
    /** The CUDA runtime (real or the host-emulated libcudart); {@link KvTierCache#open} fails with the probe's reason if it is not usable. */
    CUDA,
    /** Device memory emulated by native memory, copies by {@code MemorySegment.copy} on threads; needs no GPU. */
    HOST
}
