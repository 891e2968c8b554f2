package dev.kvtier.exec;

/**
 * {@link DiskDirectoryLock#acquire} found the directory held by another owner (in this JVM or another
 * process). The message names the directory and the holder as its lock file describes it; nothing in the
 * directory was touched. The door turns it into its own public type; immutable.
 */
public final class DirectoryHeldException extends IllegalStateException {
    private static final long serialVersionUID = 1L;
    private final String directory;
    private final String holder;

    /** @param directory the directory as given; @param holder who holds it (pid, start time, instance id) */
    public DirectoryHeldException(String directory, String holder) {
        super("disk directory " + directory + " is in use by another kvtier cache (" + holder
                + "); close that cache first, or configure another disk directory for this one");
        this.directory = directory;
        this.holder = holder;
    }

    /** The directory, as given to {@link DiskDirectoryLock#acquire}. */
    public String directory() {
        return directory;
    }

    /** Who holds it, as a phrase: pid, start time and instance id, or why they are unknown. */
    public String holder() {
        return holder;
    }
}
