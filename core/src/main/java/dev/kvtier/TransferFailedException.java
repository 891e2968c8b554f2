package dev.kvtier;

import dev.kvtier.store.Tier;

/**
 * The bytes of a segment could not be moved or copied (a CUDA error, an I/O error, a full disk, a
 * mapping that failed). The segment is still whole and readable where it was, with its metadata
 * as before; the cause says what failed (the CUDA call and error name, or the I/O exception).
 */
public class TransferFailedException extends KvTierException {
    private static final long serialVersionUID = 1L;
    /** Where the bytes were. */
    private final Tier from;
    /** Where they should have gone. */
    private final Tier to;

    /**
     * A copy of segment {@code key}'s bytes that failed.
     *
     * @param key     the segment whose bytes were being copied
     * @param from    where the bytes were (null when copying in from the caller's memory)
     * @param to      where they should have gone (null when copying out to the caller's memory)
     * @param message what failed: the call and its error, and the fix where there is one
     * @param cause   the low-level failure (a {@code CudaException}, an I/O error, a timeout), or null
     */
    public TransferFailedException(String key, Tier from, Tier to, String message, Throwable cause) {
        super(key, message, cause);
        this.from = from;
        this.to = to;
    }

    /**
     * The tier the bytes were on, or null for bytes coming from the caller.
     *
     * @return the source tier, or null
     */
    public Tier from() {
        return from;
    }

    /**
     * The tier they were going to, or null for bytes going to the caller.
     *
     * @return the target tier, or null
     */
    public Tier to() {
        return to;
    }
}
