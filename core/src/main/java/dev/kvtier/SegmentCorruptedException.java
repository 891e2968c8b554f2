package dev.kvtier;

/**
 * A segment's bytes on DISK no longer match the CRC32C taken when they were written there (the
 * file was changed behind the cache, or the storage flipped bits). No byte of it was handed out or
 * moved; the segment stays on DISK with its metadata unchanged, and every later read or promotion
 * fails the same way until it is removed.
 */
public final class SegmentCorruptedException extends KvTierException {
    private static final long serialVersionUID = 1L;
    private final int expectedCrc32c;
    private final int actualCrc32c;

    /** @param expectedCrc32c the checksum taken when written; @param actualCrc32c the checksum found */
    public SegmentCorruptedException(String key, int expectedCrc32c, int actualCrc32c) {
        super(key, "segment \"" + key + "\" is corrupted on DISK: CRC32C is " + Integer.toHexString(actualCrc32c)
                + " but was " + Integer.toHexString(expectedCrc32c) + " when written; remove it and recompute it", null);
        this.expectedCrc32c = expectedCrc32c;
        this.actualCrc32c = actualCrc32c;
    }

    /** The CRC32C taken when the segment was written to DISK. */
    public int expectedCrc32c() {
        return expectedCrc32c;
    }

    /** The CRC32C of the bytes found there now. */
    public int actualCrc32c() {
        return actualCrc32c;
    }
}
