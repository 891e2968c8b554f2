package dev.kvtier.exec.cuda;

/**
 * Whether the CUDA backend registers mapped-file extents with {@code cudaHostRegister} (device
 * copies then go straight to and from the mapping) or leaves them unregistered (device copies are
 * staged through pinned bounce buffers). The user-facing choice is {@code dev.kvtier.DiskTransferMode};
 * the tiering layer translates it.
 */
public enum ExtentRegistration {
    /** Register where the device reports {@code cudaDevAttrHostRegisterSupported}, else stage. */
    WHERE_SUPPORTED,
    /** Register every extent (an extent the driver refuses is staged, logged once). */
    ALWAYS,
    /** Register none: every device copy of an extent is staged. */
    NEVER
}
