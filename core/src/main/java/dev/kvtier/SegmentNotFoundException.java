package dev.kvtier;

/**
 * Thrown by every {@link KvTierCache} operation that needs a segment which is not cached (never
 * put or adopted, or already removed). {@link KvTierCache#get} and {@link KvTierCache#remove}
 * answer an empty {@code Optional} instead. Nothing was changed.
 */
public final class SegmentNotFoundException extends KvTierException {
    private static final long serialVersionUID = 1L;

    /**
     * No segment cached under {@code key}.
     *
     * @param key the key that was asked for
     */
    public SegmentNotFoundException(String key) {
        super(key, "no segment with key \"" + key + "\" is cached", null);
    }
}
