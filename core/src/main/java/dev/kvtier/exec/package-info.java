/**
 * The physical layer of kvtier: memory and the copies between kinds of memory. It speaks its own
 * language ({@link dev.kvtier.exec.StorageKind}: device, pinned host, mapped file) and names no tier,
 * key, budget or policy; the tiering layer maps tiers to storage kinds in exactly one place.
 *
 * <ul>
 *   <li>{@link dev.kvtier.exec.ExecutionBackend}: the SPI a backend implements: a
 *       {@link dev.kvtier.exec.ChunkAllocator} per storage kind and a {@link dev.kvtier.exec.CopyEngine}.
 *       Two backends live in subpackages: {@code exec.host} (device memory emulated by native memory,
 *       copies on threads) and {@code exec.cuda} (device arenas, pinned blocks, registered or staged
 *       file mappings, copies on CUDA streams). Each SPI has a contract test suite that every
 *       implementation passes ({@code CopyEngineContract}, {@code ChunkAllocatorContract}).</li>
 *   <li>{@code PagedMemory}: paged allocation over lazily grown chunks; a segment's memory is a
 *       {@link dev.kvtier.exec.PageAllocation}, a list of coalesced runs.</li>
 *   <li>{@link dev.kvtier.exec.TransferExecutor}: allocation per storage kind, asynchronous copies with a
 *       bound on bytes in flight, heap staging, CRC32C of host memory.</li>
 * </ul>
 * Internal: only the benchmarks use it directly; applications use {@code dev.kvtier.KvTierCache}.
 */
package dev.kvtier.exec;
