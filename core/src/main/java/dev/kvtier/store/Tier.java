package dev.kvtier.store;

/**
 * A storage tier, fastest first: {@link #GPU} device memory, {@link #CPU} pinned host memory,
 * {@link #DISK} memory-mapped files.
 *
 * <p>Demotion moves a segment to a slower tier, promotion to a faster one. The declaration order
 * is the speed order; {@link #isFasterThan(Tier)} is the only comparison callers should rely on.
 */
public enum Tier {
    /** GPU device memory: fastest, scarcest, bounded by the GPU budget. */
    GPU,
    /** Pinned host memory: bounded by the CPU budget. */
    CPU,
    /** Memory-mapped files: slowest, unbounded in the store's bookkeeping. */
    DISK;

    /**
     * Returns whether this tier is strictly faster than {@code other}.
     *
     * @param other the tier to compare with
     * @return true when this tier is faster than {@code other}; false for the same tier
     * @throws IllegalArgumentException if {@code other} is null
     */
    public boolean isFasterThan(Tier other) {
        if (other == null) {
            throw new IllegalArgumentException("other must not be null");
        }
        return ordinal() < other.ordinal();
    }
}
