/**
 * The physical half of kvtier: tier memory and the copies between tiers. Knows nothing of keys'
 * meaning, budgets or policy (that is {@code dev.kvtier.store}); {@code dev.kvtier.KvTierCache}
 * joins the two.
 *
 * <ul>
 *   <li>{@link dev.kvtier.exec.ExecutionBackend}: the SPI a backend implements: a
 *       {@link dev.kvtier.exec.ChunkAllocator} per tier and a {@link dev.kvtier.exec.CopyEngine}.
 *       {@link dev.kvtier.exec.HostExecutionBackend} emulates device memory with native memory; the
 *       CUDA backend adapts {@code dev.kvtier.cuda}.</li>
 *   <li>{@link dev.kvtier.exec.PagedMemory}: paged allocation over lazily grown chunks; a
 *       segment is a {@link dev.kvtier.exec.PageAllocation}, a list of coalesced runs.</li>
 *   <li>{@link dev.kvtier.exec.DiskTransferMode}: on the CUDA backend, DISK extents registered with
 *       {@code cudaHostRegister} or staged through pinned bounce buffers.</li>
 *   <li>{@link dev.kvtier.exec.TransferExecutor}: allocation, asynchronous copies with a bound on
 *       bytes in flight, CRC32C of host-side tiers.</li>
 * </ul>
 */
package dev.kvtier.exec;
