package dev.kvtier;

/**
 * {@link KvTierCache#open} refused a disk directory that another kvtier cache holds (in this JVM or
 * another process; one owner per directory, through a lock file the OS releases when its owner dies,
 * however it dies). Nothing in the directory was read or changed. The message names the directory, the
 * holder (pid, start time, instance id, as its lock file says) and the fix: close that cache, or configure
 * another disk directory. No segment is concerned: {@link #key()} is null. A {@link CacheOpenException}, so one
 * {@code catch} covers every failed open. Immutable.
 */
public final class DirectoryInUseException extends CacheOpenException {
    private static final long serialVersionUID = 1L;
    /** The refused directory, as configured. */
    private final String directory;
    /** Who holds it, as a phrase. */
    private final String holder;

    /**
     * A DISK directory another cache holds.
     *
     * @param directory the directory as configured
     * @param holder    who holds it, as a phrase (pid, start time, instance id, or why they are unknown)
     * @param message   the whole message, naming both and the fix
     * @param cause     the lock's own report, kept for its stack
     */
    public DirectoryInUseException(String directory, String holder, String message, Throwable cause) {
        super(message, cause);
        this.directory = directory;
        this.holder = holder;
    }

    /**
     * The refused directory, as configured.
     *
     * @return the directory, as the configuration wrote it
     */
    public String directory() {
        return directory;
    }

    /**
     * Who holds it: pid, start time and instance id as its lock file says, or why they are unknown.
     *
     * @return a phrase for a person, not a format to parse
     */
    public String holder() {
        return holder;
    }
}
