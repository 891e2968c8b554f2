package dev.kvtier.cuda;

import dev.kvtier.cuda.runtime.cudart_h;

/** The direction of a copy ({@code enum cudaMemcpyKind}). {@link #DEFAULT} lets the runtime infer it (unified addressing). */
public enum MemcpyKind {
    HOST_TO_HOST(cudart_h.cudaMemcpyHostToHost()),
    HOST_TO_DEVICE(cudart_h.cudaMemcpyHostToDevice()),
    DEVICE_TO_HOST(cudart_h.cudaMemcpyDeviceToHost()),
    DEVICE_TO_DEVICE(cudart_h.cudaMemcpyDeviceToDevice()),
    DEFAULT(cudart_h.cudaMemcpyDefault());

    private final int code;

    MemcpyKind(int code) {
        this.code = code;
    }

    /** The {@code cudaMemcpyKind} value. */
    public int code() {
        return code;
    }
}
