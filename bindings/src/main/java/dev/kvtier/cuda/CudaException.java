package dev.kvtier.cuda;

/**
 * A CUDA runtime call returned an error. Carries the call, the numeric {@code cudaError_t}, its name
 * ({@code cudaGetErrorName}) and its text ({@code cudaGetErrorString}), so the message says what failed and why, e.g.
 * {@code cudaMemcpyAsync failed: cudaErrorLaunchFailure (719): unspecified launch failure}. Unchecked: every CUDA error is
 * fatal to the operation that met it; callers that can recover (a fallback path) catch it. Immutable.
 */
public final class CudaException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The CUDA function that failed (serialized form of {@link #call()}). */
    private final String call;
    /** The {@code cudaError_t} it returned (serialized form of {@link #code()}). */
    private final int code;
    /** {@code cudaGetErrorName} of the code (serialized form of {@link #errorName()}). */
    private final String errorName;
    /** {@code cudaGetErrorString} of the code (serialized form of {@link #errorText()}). */
    private final String errorText;

    /**
     * An error returned by {@code call}; the message joins all five parts.
     *
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

    /**
     * The CUDA function that failed, e.g. {@code cudaMemcpyAsync}.
     *
     * @return the C function's name, as given to the constructor
     */
    public String call() {
        return call;
    }

    /**
     * The numeric {@code cudaError_t}.
     *
     * @return the value the call returned, non-zero for errors CUDA reported (e.g. 2 for
     *         {@code cudaErrorMemoryAllocation})
     */
    public int code() {
        return code;
    }

    /**
     * The error's name as {@code cudaGetErrorName} gives it, e.g. {@code cudaErrorNoDevice}.
     *
     * @return the enumerator's name, stable across CUDA versions and so the thing to match on
     */
    public String errorName() {
        return errorName;
    }

    /**
     * The error's text as {@code cudaGetErrorString} gives it, e.g. {@code no CUDA-capable device is detected}.
     *
     * @return CUDA's human-readable description, for messages only (its wording may change between versions)
     */
    public String errorText() {

        return errorText;
    }
}
