package dev.kvtier;

/**
 * Base of the errors a {@link KvTierCache} raises when it cannot do what was asked with a valid
 * request: bytes that could not be moved, a tier that has no room, a checksum that does not match.
 * Each names the segment's key. When one is thrown, the segment's metadata and bytes are as they
 * were before the call.
 */
public class KvTierException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String key;

    /** @param key the segment concerned; @param message what happened and, where there is one, the fix */
    public KvTierException(String key, String message, Throwable cause) {
        super(message, cause);
        this.key = key;
    }

    /** The key of the segment concerned. */
    public String key() {
        return key;
    }
}
