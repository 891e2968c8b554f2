/**
 * The CUDA backend over {@code dev.kvtier.cuda}: {@code cudaMalloc} arenas, {@code cudaHostAlloc}
 * blocks, file extents registered with {@code cudaHostRegister} or staged through pinned bounce
 * buffers ({@link dev.kvtier.exec.cuda.ExtentRegistration}), copies enqueued on a device-to-host and a
 * host-to-device stream, batched with {@code cudaMemcpyBatchAsync} where the runtime has it.
 */
package dev.kvtier.exec.cuda;
