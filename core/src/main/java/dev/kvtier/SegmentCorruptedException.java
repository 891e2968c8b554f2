package dev.kvtier;

/**
 * A segment's bytes on DISK no longer match the CRC32C taken when they were written there (the
 * file was changed behind the cache, or the storage flipped bits). No byte of it was handed out or
 * moved; the segment stays on DISK with its metadata unchanged, and every later read or promotion
 * fails the same way until it is removed. The exception: a segment recovered from a persisted DISK
 * directory ({@link DiskPersistence}) that fails its first check is removed at once
 * ({@link #removed()} is true), since nothing of it was ever served by this cache.
 */
public final class SegmentCorruptedException extends KvTierException {
    private static final long serialVersionUID = 1L;
    /** The CRC32C taken when written. */
    private final int expectedCrc32c;
    /** The CRC32C found. */
    private final int actualCrc32c;
    /** Whether the cache removed the segment. */
    private final boolean removed;

    /**
     * A segment whose DISK bytes differ from what was written; still cached.
     *
     * @param key            the segment's key
     * @param expectedCrc32c the checksum taken when written
     * @param actualCrc32c   the checksum found
     */
    public SegmentCorruptedException(String key, int expectedCrc32c, int actualCrc32c) {
        this(key, expectedCrc32c, actualCrc32c, false, null);
    }

    /**
     * A segment whose DISK bytes differ from what was written, or could not be read.
     *
     * @param key            the segment's key
     * @param expectedCrc32c the checksum taken when written
     * @param actualCrc32c   the checksum found
     * @param removed        whether the cache removed the segment (a recovered one failing its first check)
     * @param cause          what made the bytes unreadable, or null when they were read and differ
     */
    public SegmentCorruptedException(String key, int expectedCrc32c, int actualCrc32c, boolean removed, Throwable cause) {
        super(key, removed
                ? "segment \"" + key + "\" recovered from the persisted DISK directory is corrupted: CRC32C is "
                        + Integer.toHexString(actualCrc32c) + " but was " + Integer.toHexString(expectedCrc32c)
                        + " when written" + (cause == null ? "" : " (unreadable: " + cause.getMessage() + ")")
                        + "; it was removed, recompute it"
                : "segment \"" + key + "\" is corrupted on DISK: CRC32C is " + Integer.toHexString(actualCrc32c)
                        + " but was " + Integer.toHexString(expectedCrc32c) + " when written; remove it and recompute it",
                cause);
        this.expectedCrc32c = expectedCrc32c;
        this.actualCrc32c = actualCrc32c;
        this.removed = removed;
    }

    /**
     * Whether the cache removed the segment (see the class comment); false: it is still cached, corrupted.
     *
     * @return true when the segment is gone
     */
    public boolean removed() {
        return removed;
    }

    /**
     * The CRC32C taken when the segment was written to DISK.
     *
     * @return the checksum, any bit pattern
     */
    public int expectedCrc32c() {
        return expectedCrc32c;
    }

    /**
     * The CRC32C of the bytes found there now.
     *
     * @return the checksum, any bit pattern; meaningless when the bytes could not be read (see the cause)
     */
    public int actualCrc32c() {
        return actualCrc32c;
    }
}
