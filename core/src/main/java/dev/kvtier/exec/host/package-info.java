/**
 * The host backend: device and pinned memory emulated by plain native memory, file extents mapped,
 * every copy a {@code MemorySegment.copy} on {@link dev.kvtier.exec.host.HostCopyEngine} threads (or on
 * the caller's thread when it waits anyway). Used when no CUDA device is usable, and by the tests.
 * Needs nothing from CUDA.
 */
package dev.kvtier.exec.host;
