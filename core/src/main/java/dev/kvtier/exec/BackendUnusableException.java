package dev.kvtier.exec;

/**
 * The backend can no longer reach the device: an error that does not clear (on CUDA a "sticky" error,
 * such as {@code cudaErrorIllegalAddress} after an asynchronous fault) has left the device context
 * unusable, so every call that needs the device fails with it until the context is destroyed (the
 * process exits, or the application resets the device). Thrown at once, instead of a timeout or a
 * raw driver error, by every copy that reads or writes device memory and by every allocation of
 * memory that needs the driver, from the moment the backend found the error sticky.
 *
 * <p>What survives: bytes in device memory are lost (the context that owns them is dead); bytes in
 * pinned host memory and file mappings stay readable, since copies between host memories do not
 * involve the driver. The cause is the driver error that revealed the fault.
 */
public final class BackendUnusableException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String error;

    /**
     * @param error the error that does not clear, e.g. {@code cudaErrorIllegalAddress}
     * @param cause the failure that revealed it (the call and error), may be null
     */
    public BackendUnusableException(String error, Throwable cause) {
        super("the CUDA context is unusable after the sticky error " + error + " (every later call needing the device"
                + " fails with it): device memory is lost, pinned host and mapped file memory stay readable; close"
                + " and reopen in a new process (or after a device reset) to use the device again", cause);
        this.error = error;
    }

    /** The error that does not clear, e.g. {@code cudaErrorIllegalAddress}. */
    public String error() {
        return error;
    }
}
