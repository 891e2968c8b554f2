package dev.kvtier.cuda;

import dev.kvtier.cuda.runtime.cudart_h;

/** The direction of a copy ({@code enum cudaMemcpyKind}). {@link #DEFAULT} lets the runtime infer it (unified addressing). */
public enum MemcpyKind {
    /** {@code cudaMemcpyHostToHost}: both sides are host memory. */
    HOST_TO_HOST(cudart_h.cudaMemcpyHostToHost()),
    /** {@code cudaMemcpyHostToDevice}: host memory (pinned for an asynchronous copy) to device memory. */
    HOST_TO_DEVICE(cudart_h.cudaMemcpyHostToDevice()),
    /** {@code cudaMemcpyDeviceToHost}: device memory to host memory (pinned for an asynchronous copy). */
    DEVICE_TO_HOST(cudart_h.cudaMemcpyDeviceToHost()),
    /** {@code cudaMemcpyDeviceToDevice}: both sides are device memory. */
    DEVICE_TO_DEVICE(cudart_h.cudaMemcpyDeviceToDevice()),
    /** {@code cudaMemcpyDefault}: CUDA infers the direction from the pointers (needs unified addressing). */
    DEFAULT(cudart_h.cudaMemcpyDefault());

    private final int code;

    MemcpyKind(int code) {
        this.code = code;
    }

    /**
     * The {@code cudaMemcpyKind} value.
     *
     * @return the C enumerator's value, as passed to {@code cudaMemcpyAsync}
     */
    public int code() {

        return code;
    }
}
