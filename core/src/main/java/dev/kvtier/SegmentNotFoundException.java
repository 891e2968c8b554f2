package dev.kvtier;

import java.util.NoSuchElementException;

/**
 * Thrown by every {@link KvTierCache} operation that needs a segment which is not cached (never
 * put or adopted, or already removed). {@link KvTierCache#get} and {@link KvTierCache#remove}
 * answer an empty {@code Optional} instead.
 */
public final class SegmentNotFoundException extends NoSuchElementException {
    private static final long serialVersionUID = 1L;
    private final String key;

    /** @param key the key that was asked for */
    public SegmentNotFoundException(String key) {
        super("no segment with key \"" + key + "\" is cached");
        this.key = key;
    }

    /** The key that was asked for. */
    public String key() {
        return key;
    }
}
