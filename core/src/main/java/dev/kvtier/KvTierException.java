package dev.kvtier;

/**
 * Base of every failure kvtier raises for its own reasons, so that {@code catch (KvTierException e)}
 * catches them all: a segment that is not cached ({@link SegmentNotFoundException}), a tier that has no
 * room ({@link TierFullException}), bytes that could not be moved ({@link TransferFailedException}) or
 * do not match their checksum ({@link SegmentCorruptedException}), a pinned segment asked to move
 * ({@link SegmentPinnedException}), a cache that could not open ({@link CacheOpenException}). Each names
 * the segment's key where there is one. When one is thrown, the segment's metadata and bytes are as
 * they were before the call (the exceptions that say otherwise say so).
 *
 * <p>Not kvtier failures, and so not of this type: a bad argument ({@link IllegalArgumentException},
 * naming the argument, see the package comment) and a call the cache's state forbids
 * ({@link IllegalStateException}: any call after {@link KvTierCache#close()}, a prefix block moved or
 * removed against the chain rule).
 */
public class KvTierException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    /** The key of the segment concerned, or null when none is. */
    private final String key;

    /**
     * A failure concerning segment {@code key}, or no one segment.
     *
     * @param key     the segment concerned, or null when none is
     * @param message what happened and, where there is one, the fix
     * @param cause   the low-level failure, or null
     */
    public KvTierException(String key, String message, Throwable cause) {
        super(message, cause);
        this.key = key;
    }

    /**
     * The key of the segment concerned, or null when the failure concerns no one segment (an open).
     *
     * @return the key, or null
     */
    public String key() {
        return key;
    }
}
