package dev.kvtier;

/**
 * A {@link KvTierCache} could not open: its disk directory could not be created, locked, read or
 * written, it holds persisted KV this cache must not serve ({@link PersistedDirectoryMismatchException}),
 * or the backend asked for is not usable. The message names the directory or backend and the real
 * reason (such as "is a regular file" or "permission denied"), with the low-level exception as the
 * cause; {@link #key()} is null. Nothing of the failed open is left behind: no thread, no native
 * memory, no directory it created.
 */
public class CacheOpenException extends KvTierException {
    private static final long serialVersionUID = 1L;

    /**
     * A cache that could not be opened.
     *
     * @param message what could not be done, why, and the fix
     * @param cause   the low-level failure, or null
     */
    public CacheOpenException(String message, Throwable cause) {
        super(null, message, cause);
    }
}
