package dev.kvtier;

/**
 * A persistent cache refused a disk directory written under another namespace, format version, page
 * size or extent size ({@link DiskPersistence.OnMismatch#REFUSE}); nothing there was read as KV or
 * changed. The message names what differs, both values, and the fixes: use the directory's namespace
 * and layout, another directory, or {@link DiskPersistence.OnMismatch#WIPE}.
 */
public final class PersistedDirectoryMismatchException extends CacheOpenException {
    private static final long serialVersionUID = 1L;
    /** Which property differs. */
    private final String what;
    /** This cache's value. */
    private final String expected;
    /** The directory's value. */
    private final String found;

    /**
     * A persisted directory written under another namespace or format.
     *
     * @param directory the DISK directory, as configured
     * @param what      which property differs, as {@link #what()} lists them
     * @param expected  this cache's value
     * @param found     the directory's value
     */
    public PersistedDirectoryMismatchException(String directory, String what, String expected, String found) {
        super("disk directory " + directory + " holds persisted KV with " + what + " \"" + found + "\" but this cache"
                + " has " + what + " \"" + expected + "\": refusing to serve it (configure the same " + what
                + ", another disk directory, or DiskPersistence.onMismatch(WIPE) to delete what is there)", null);
        this.what = what;
        this.expected = expected;
        this.found = found;
    }

    /**
     * Which property differs: {@code namespace}, {@code format version}, {@code page size}, {@code extent size} or
     * {@code header}.
     *
     * @return one of those names
     */
    public String what() {
        return what;
    }

    /**
     * This cache's value.
     *
     * @return the value as the message shows it
     */
    public String expected() {
        return expected;
    }

    /**
     * The directory's value.
     *
     * @return the value as the message shows it
     */
    public String found() {
        return found;
    }
}
