package dev.kvtier.exec.cuda;

import dev.kvtier.cuda.CudaStream;

/** How a failed copy's stream is cleaned up, shared by the copy engine and the bounce buffers. */
final class PendingErrors {
    private PendingErrors() {
    }

    /**
     * Waits for the stream and so reads (and clears) its pending asynchronous error, so later copies
     * are not blamed for it; that error is kept on {@code failure} as suppressed. Every event recorded
     * before this call has captured the error already.
     */
    static void clear(CudaStream stream, Throwable failure) {
        try {
            stream.synchronize();
        } catch (RuntimeException pending) {
            if (pending != failure) {
                failure.addSuppressed(pending);
            }
        }
    }
}
