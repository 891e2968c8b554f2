package dev.kvtier.cuda;

/**
 * A CUDA runtime call returned an error. Carries the call, the numeric {@code cudaError_t}, its name
 * ({@code cudaGetErrorName}) and its text ({@code cudaGetErrorString}), so the message says what failed and why, e.g.
 * {@code cudaMemcpyAsync failed: cudaErrorLaunchFailure (719): unspecified launch failure}. Unchecked: every CUDA error is
 * fatal to the operation that met it; callers that can recover (a fallback path) catch it. Immutable.
 */
public final class CudaException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String call;
    private final int code;
    private final String errorName;
    private final String errorText;

    /**
     * @param call      the CUDA function that failed, e.g. {@code cudaMalloc}
     * @param code      the {@code cudaError_t} it returned (non-zero)
     * @param errorName e.g. {@code cudaErrorMemoryAllocation}
     * @param errorText e.g. {@code out of memory}
     * @param detail    context the caller adds (sizes, the failing index), or null
     */
    public CudaException(String call, int code, String errorName, String errorText, String detail) {
        super(call + " failed: " + errorName + " (" + code + "): " + errorText + (detail == null ? "" : " [" + detail + "]"));
        this.call = call;
        this.code = code;
        this.errorName = errorName;
        this.errorText = errorText;
    }

    /** The CUDA function that failed, e.g. {@code cudaMemcpyAsync}. */
    public String call() {
        return call;
    }

    /** The numeric {@code cudaError_t}. */
    public int code() {
        return code;
    }

    /** The error's name as {@code cudaGetErrorName} gives it, e.g. {@code cudaErrorNoDevice}. */
    public String errorName() {
        return errorName;
    }

    /** The error's text as {@code cudaGetErrorString} gives it, e.g. {@code no CUDA-capable device is detected}. */
    public String errorText() {
        return errorText;
    }
}
