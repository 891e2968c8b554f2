package dev.kvtier.exec;

/**
 * Which side of the bus some memory is on. A {@link CopyEngine} picks the copy direction (and
 * stream) from the kinds of the two sides; nothing else about the memory matters to it.
 */
public enum MemoryKind {
    /** Device memory (real or emulated): the host must never dereference it. */
    DEVICE,
    /** Host memory the CPU can read and write: pinned, pageable or a file mapping. */
    HOST
}
