package dev.kvtier.exec.cuda;

import dev.kvtier.concurrent.Backoff;
import dev.kvtier.cuda.CudaEvent;
import dev.kvtier.cuda.CudaStream;

import java.util.concurrent.TimeUnit;

/**
 * How the CUDA backend waits for the device, shared by the copy engine and the bounce buffers.
 * Every wait has a deadline and polls ({@code cudaEventQuery}) rather than blocking in the driver
 * ({@code cudaEventSynchronize} returns only when the work is done, which a wedged device never
 * is), and none depends on a host function having run ({@code cudaLaunchHostFunc} callbacks may
 * never run after a device error).
 */
final class StreamWaits {
    /** After the spin phase: yield a while, then park 20 us growing to 1 ms. */
    private static final Backoff POLL = new Backoff(0, 50, TimeUnit.MICROSECONDS.toNanos(20),
            TimeUnit.MILLISECONDS.toNanos(1));

    private StreamWaits() {
    }

    /**
     * Waits until the work recorded before {@code event} has completed, or {@code deadlineNanos} (on
     * {@link System#nanoTime()}'s clock) has passed.
     *
     * @return true when complete, false when the deadline passed first (the work may still run)
     * @throws dev.kvtier.cuda.CudaException the asynchronous fault of that work, if it had one
     */
    static boolean await(CudaEvent event, long deadlineNanos) {
        for (int attempt = 0; ; attempt++) {
            if (event.isComplete()) {
                return true;
            }
            if (System.nanoTime() - deadlineNanos >= 0) {
                return false;
            }
            if (attempt < SPIN_QUERIES) {
                // A query is a driver call (and takes the host-emulated runtime's one lock): spin between
                // queries rather than hammering it while the copy runs.
                long until = System.nanoTime() + SPIN_BETWEEN_QUERIES_NANOS;
                while (System.nanoTime() - until < 0) {
                    Thread.onSpinWait();
                }
            } else {
                POLL.idle(attempt - SPIN_QUERIES);
            }
        }
    }

    /** Queries made in the spin phase, {@link #SPIN_BETWEEN_QUERIES_NANOS} apart (about 20 us in all). */
    private static final int SPIN_QUERIES = 20;
    private static final long SPIN_BETWEEN_QUERIES_NANOS = 1_000;

    /**
     * Waits, at most until {@code deadlineNanos}, until everything enqueued on {@code stream} has
     * completed, reading and clearing its pending asynchronous error on the way (kept on {@code failure}
     * as suppressed, so later copies are not blamed for it).
     *
     * @return false when the deadline passed with work still running
     */
    static boolean drain(CudaStream stream, Throwable failure, long deadlineNanos) {
        boolean errorSeen = false;
        for (int attempt = 0; ; attempt++) {
            try {
                if (stream.isIdle()) {
                    return true;
                }
            } catch (RuntimeException pending) {
                if (errorSeen) {
                    return false; // the error does not clear: a sticky fault, the stream is unusable
                }
                errorSeen = true;
                if (pending != failure) {
                    failure.addSuppressed(pending);
                }
                continue; // the query read and cleared the error; look again
            }
            if (System.nanoTime() - deadlineNanos >= 0) {
                return false;
            }
            POLL.idle(attempt);
        }
    }
}
