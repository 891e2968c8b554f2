package dev.kvtier.tiering;

import dev.kvtier.TransferFailedException;
import dev.kvtier.store.Tier;

import java.util.concurrent.CompletionException;

/**
 * The one translator from low-level failures (a {@code CudaException}, an I/O error, the
 * {@link InternalError} of a fault in a file mapping, each possibly wrapped in the
 * {@link CompletionException} of a future) to the cache's domain exceptions. Every path that copies
 * or allocates hands its failure here, so the unwrapping and the wording live in one place.
 */
final class Failures {
    private Failures() {
    }

    /** What really failed: the cause of a {@link CompletionException}, else {@code failure} itself. */
    static Throwable cause(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /**
     * A failed copy of segment {@code key}: from {@code from} (null: the caller's memory) to {@code to}
     * (null: the caller's memory), with the real cause.
     */
    static TransferFailedException copyFailed(String key, Tier from, Tier to, Throwable failure) {
        Throwable cause = cause(failure);
        return new TransferFailedException(key, from, to, "copying segment \"" + key + "\" "
                + (from == null ? "in" : "from " + from) + (to == null ? " out" : " to " + to) + " failed: " + cause, cause);
    }

    /** Memory for segment {@code key} could not be had on {@code tier} (the cause says what ran out and the fix). */
    static TransferFailedException allocationFailed(String key, Tier from, Tier tier, long bytes, Exception cause) {
        return new TransferFailedException(key, from, tier, "cannot allocate " + bytes + " bytes on " + tier
                + " for segment \"" + key + "\": " + cause.getMessage(), cause);
    }

    /** {@code failure} as a runtime exception to throw (errors are thrown from here as they are). */
    static RuntimeException rethrow(Throwable failure) {
        if (failure instanceof RuntimeException r) {
            return r;
        }
        if (failure instanceof Error e) {
            throw e;
        }
        return new CompletionException(failure);
    }
}
