package dev.kvtier;

import java.time.Duration;

/**
 * Opt-in persistence of the DISK tier (set with {@code KvTierConfig.builder().persistence(...)}): the
 * segments on DISK when the process closes or dies are found again by the next cache that opens the
 * same disk directory under the same {@link #namespace()}, and served after their CRC32C is verified.
 * The GPU and CPU tiers stay volatile: a segment that was on GPU or CPU at a close or crash is gone
 * (a segment lives in exactly one tier, so one promoted off DISK is no longer persisted).
 *
 * <p>The namespace says what makes KV interchangeable (model id, dtype, layout, tensor-parallel rank,
 * ...): a directory written under another namespace, or in another format version, page size or extent
 * size, is refused ({@link PersistedDirectoryMismatchException}) or, with {@link OnMismatch#WIPE}, emptied.
 * KV of another model is never served. The on-disk design is described in {@code dev.kvtier.persist}.
 *
 * <pre>{@code
 * KvTierConfig.builder().diskDirectory(dir)
 *     .persistence(DiskPersistence.of("llama-3-8b/bf16/paged-16/tp0").fsync(FsyncPolicy.PER_BATCH))
 * }</pre>
 *
 * <p>Immutable and thread-safe; every {@code with}-style method returns a new instance.
 */
public final class DiskPersistence {
    /** Most UTF-8 bytes of a namespace. */
    public static final int MAX_NAMESPACE_BYTES = 1024;
    /** Default records per synced batch under {@link FsyncPolicy#PER_BATCH}. */
    public static final int DEFAULT_BATCH_RECORDS = 256;
    /** Default age after which a batch is synced under {@link FsyncPolicy#PER_BATCH}, however small. */
    public static final Duration DEFAULT_BATCH_DELAY = Duration.ofMillis(20);

    /**
     * What is synced to stable storage, and when. Against a killed process ({@code kill -9}) every
     * policy keeps every record written (the page cache survives the process); the policies differ in
     * what survives a power loss or kernel crash. Whatever survives, a record is served only after its
     * bytes match the CRC32C it recorded, so a record that reached the disk without its bytes is dropped,
     * never served; and only while its pages still carry its generation, so a restart never serves a version
     * of a key older than one acknowledged under the policy, nor a key whose removal was acknowledged, even
     * when the journal itself was damaged (the guarantee per policy is in {@code dev.kvtier.persist}).
     */
    public enum FsyncPolicy {
        /** Nothing is synced (the OS writes back when it likes): fastest; a power loss may lose any recent segment. */
        NONE,
        /**
         * Group commit in the background: records (of arrivals on DISK and of departures from it) are written
         * at once (as with {@code NONE}); once a batch holds {@link #batchRecords()} records or its oldest is
         * {@link #batchDelay()} old, a background thread fsyncs each extent file the batch wrote to (once per
         * file), then the generations and the journal; at close the last batch is synced. A call waits only
         * when four batches are still unsynced. A power loss loses at most the unsynced batches.
         */
        PER_BATCH,
        /**
         * Each DISK put or demotion returns only after its bytes, then its record, are synced, and each
         * departure from DISK (remove, promotion, drop) only after its removal record is: slowest, loses
         * nothing acknowledged and brings back nothing whose removal was acknowledged.
         */
        PER_SEGMENT
    }

    /** What an open does with a directory written under another namespace or format. */
    public enum OnMismatch {
        /** Refuse to open, with a {@link PersistedDirectoryMismatchException} naming both values (the default). */
        REFUSE,
        /** Delete the persisted segments there and start empty (logged at WARNING, said in the {@link RecoveryReport}). */
        WIPE
    }

    /** When recovered segments' bytes are checked against their CRC32C. */
    public enum Verification {
        /** On first use (read, promotion, pin, residency on DISK): open reads no segment bytes (the default). */
        LAZY,
        /** During open: every recovered segment's bytes are read and checked, the bad ones dropped. */
        EAGER
    }

    private final String namespace;
    private final FsyncPolicy fsync;
    private final OnMismatch onMismatch;
    private final Verification verification;
    private final int batchRecords;
    private final Duration batchDelay;

    private DiskPersistence(String namespace, FsyncPolicy fsync, OnMismatch onMismatch, Verification verification,
                            int batchRecords, Duration batchDelay) {
        this.namespace = namespace;
        this.fsync = fsync;
        this.onMismatch = onMismatch;
        this.verification = verification;
        this.batchRecords = batchRecords;
        this.batchDelay = batchDelay;
    }

    /**
     * Persistence under {@code namespace}, with {@link FsyncPolicy#NONE}, {@link OnMismatch#REFUSE} and
     * {@link Verification#LAZY}.
     *
     * @param namespace what makes KV in the directory interchangeable (a model and its version, say); compared byte
     *                  for byte
     * @return the persistence, with the defaults named above
     * @throws IllegalArgumentException if the namespace is null, blank or longer than {@value #MAX_NAMESPACE_BYTES} UTF-8 bytes
     */
    public static DiskPersistence of(String namespace) {
        if (namespace == null || namespace.isBlank()) {
            throw new IllegalArgumentException("namespace must not be null or blank, was " + namespace);
        }
        int bytes = namespace.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (bytes > MAX_NAMESPACE_BYTES) {
            throw new IllegalArgumentException("namespace must be at most " + MAX_NAMESPACE_BYTES + " UTF-8 bytes, was "
                    + bytes);
        }
        return new DiskPersistence(namespace, FsyncPolicy.NONE, OnMismatch.REFUSE, Verification.LAZY,
                DEFAULT_BATCH_RECORDS, DEFAULT_BATCH_DELAY);
    }

    /**
     * This persistence with {@code policy}.
     *
     * @param policy what is synced, and when; not null
     * @return a new persistence, equal to this one but for that setting; this one is unchanged
     */
    public DiskPersistence fsync(FsyncPolicy policy) {
        if (policy == null) {
            throw new IllegalArgumentException("fsync policy must not be null");
        }
        return new DiskPersistence(namespace, policy, onMismatch, verification, batchRecords, batchDelay);
    }

    /**
     * This persistence with {@code action} on a namespace or format mismatch.
     *
     * @param action what an open does; not null
     * @return a new persistence, equal to this one but for that setting; this one is unchanged
     */
    public DiskPersistence onMismatch(OnMismatch action) {
        if (action == null) {
            throw new IllegalArgumentException("onMismatch must not be null");
        }
        return new DiskPersistence(namespace, fsync, action, verification, batchRecords, batchDelay);
    }

    /**
     * This persistence verifying recovered segments {@code when}.
     *
     * @param when when to check; not null
     * @return a new persistence, equal to this one but for that setting; this one is unchanged
     */
    public DiskPersistence verify(Verification when) {
        if (when == null) {
            throw new IllegalArgumentException("verification must not be null");
        }
        return new DiskPersistence(namespace, fsync, onMismatch, when, batchRecords, batchDelay);
    }

    /**
     * This persistence syncing a {@link FsyncPolicy#PER_BATCH} batch once it holds {@code records} records,
     * {@code >= 1}, or its oldest is {@code delay} old, {@code > 0}.
     *
     * @param records how many records make a batch, {@code >= 1}
     * @param delay   the age of a batch's oldest record at which it is synced, positive
     * @return a new persistence, equal to this one but for those two settings; this one is unchanged
     */
    public DiskPersistence batch(int records, Duration delay) {
        if (records < 1) {
            throw new IllegalArgumentException("batch records must be >= 1, was " + records);
        }
        if (delay == null || delay.isNegative() || delay.isZero()) {
            throw new IllegalArgumentException("batch delay must be > 0, was " + delay);
        }
        return new DiskPersistence(namespace, fsync, onMismatch, verification, records, delay);
    }

    /**
     * What makes KV in this directory interchangeable, as the user named it.
     *
     * @return the namespace, as given to {@link #of}
     */
    public String namespace() {
        return namespace;
    }

    /**
     * What is synced to stable storage, and when (default {@link FsyncPolicy#NONE}).
     *
     * @return the fsync policy, never null
     */
    public FsyncPolicy fsyncPolicy() {
        return fsync;
    }

    /**
     * What an open does with a directory of another namespace or format (default {@link OnMismatch#REFUSE}).
     *
     * @return the mismatch action, never null
     */
    public OnMismatch onMismatch() {
        return onMismatch;
    }

    /**
     * When recovered segments' bytes are checked (default {@link Verification#LAZY}).
     *
     * @return the verification, never null
     */
    public Verification verification() {
        return verification;
    }

    /**
     * Records per synced batch under {@link FsyncPolicy#PER_BATCH}.
     *
     * @return the batch size in records, {@code >= 1}
     */
    public int batchRecords() {
        return batchRecords;
    }

    /**
     * Age after which a {@link FsyncPolicy#PER_BATCH} batch is synced.
     *
     * @return the batch age, positive
     */
    public Duration batchDelay() {
        return batchDelay;
    }

    @Override
    public String toString() {
        return "DiskPersistence[namespace=" + namespace + ", fsync=" + fsync + ", onMismatch=" + onMismatch
                + ", verify=" + verification + (fsync == FsyncPolicy.PER_BATCH ? ", batch=" + batchRecords + "/"
                + batchDelay.toMillis() + "ms" : "") + "]";
    }
}
