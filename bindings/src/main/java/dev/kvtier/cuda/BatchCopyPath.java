package dev.kvtier.cuda;

/** How {@link CudaRuntime#memcpyBatchAsync} moves a batch: one batch call (per ABI) or one {@code cudaMemcpyAsync} per copy. */
public enum BatchCopyPath {
    /** {@code cudaMemcpyBatchAsync}, CUDA 12.8/12.9 ABI (9 arguments, with {@code failIdx}). */
    BATCH_CUDA_12_8,
    /** {@code cudaMemcpyBatchAsync}, CUDA 13.x ABI (8 arguments). */
    BATCH_CUDA_13,
    /** Fallback: the runtime has no batch copy we can call (older than 12.8, unknown version, or symbol absent). */
    ONE_BY_ONE
}
