package dev.kvtier.exec;

import dev.kvtier.store.Tier;

/**
 * Which side of the bus some memory is on. A {@link CopyEngine} picks the copy direction (and
 * stream) from the kinds of the two sides; nothing else about a tier matters to it.
 */
public enum MemoryKind {
    /** Device memory (real or emulated): the host must never dereference it. */
    DEVICE,
    /** Host memory the CPU can read and write: pinned, pageable or a file mapping. */
    HOST;

    /** {@link Tier#GPU} is device memory; {@link Tier#CPU} and {@link Tier#DISK} are host memory. */
    public static MemoryKind of(Tier tier) {
        return tier == Tier.GPU ? DEVICE : HOST;
    }
}
