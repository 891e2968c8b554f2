package dev.kvtier.cuda;

/**
 * Free and total device memory of the current device, as {@code cudaMemGetInfo} reports them.
 *
 * @param freeBytes  memory not yet allocated
 * @param totalBytes the device's memory
 */
public record MemoryInfo(long freeBytes, long totalBytes) {
}
