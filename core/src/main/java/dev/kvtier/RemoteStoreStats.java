package dev.kvtier;

import java.util.Arrays;

/**
 * A snapshot of a cache's traffic with its remote block store ({@link CacheStats#remote()}); all zero, with
 * {@link #configured()} false, when none is configured. Immutable.
 *
 * @param configured            whether a remote store is configured
 * @param down                  whether the store is marked down now (after a failure or a timeout, until a retry
 *                              after a backoff succeeds); meanwhile look-ups do not ask it and writes are dropped
 * @param remoteBlocksFound     blocks look-ups reported held remotely (after the cost gate)
 * @param gatedBlocks           blocks the store held that look-ups reported as not cached, because the cost gate
 *                              judged recomputing them faster
 * @param blocksFetched         blocks fetched, checked and stored locally
 * @param bytesFetched          bytes of the values fetched (served or rejected)
 * @param blocksWritten         blocks the store acknowledged writing
 * @param writesDropped         blocks not written: the write queue was full ({@code maxBytesInFlight}), or the store
 *                              was down
 * @param failures              calls to the store that failed or timed out (each marked it down)
 * @param rejectionsByCause     values fetched and not served, at {@link RemoteRejection#ordinal()}
 * @param roundTripNanos        the moving average of a call's round trip (0 until measured)
 * @param bytesPerSecond        the moving average of fetch bandwidth (0 until measured)
 * @param estimatedFetchNanos   the cost gate's last estimate of fetching the blocks it judged
 * @param estimatedRecomputeNanos the cost gate's last estimate of recomputing them (0 without a prefill rate)
 */
public record RemoteStoreStats(boolean configured, boolean down, long remoteBlocksFound, long gatedBlocks,
                               long blocksFetched, long bytesFetched, long blocksWritten, long writesDropped,
                               long failures, long[] rejectionsByCause, long roundTripNanos, long bytesPerSecond,
                               long estimatedFetchNanos, long estimatedRecomputeNanos) {

    /** The stats of a cache without a remote store. */
    public static final RemoteStoreStats NONE = new RemoteStoreStats(false, false, 0, 0, 0, 0, 0, 0, 0,
            new long[RemoteRejection.values().length], 0, 0, 0, 0);

    /** Copies the array, which must have one entry per {@link RemoteRejection}. */
    public RemoteStoreStats {
        if (rejectionsByCause.length != RemoteRejection.values().length) {
            throw new IllegalArgumentException("rejectionsByCause must have " + RemoteRejection.values().length
                    + " entries, had " + rejectionsByCause.length);
        }
        rejectionsByCause = rejectionsByCause.clone();
    }

    /**
     * Values fetched and not served for {@code cause}.
     *
     * @param cause why the values were not served; not null
     * @return how many values fetched so far were rejected for {@code cause}, {@code >= 0}
     */
    public long rejections(RemoteRejection cause) {
        return rejectionsByCause[cause.ordinal()];
    }

    /**
     * Values fetched and not served, all causes.
     *
     * @return the sum of the per-cause counts, {@code >= 0}
     */
    public long rejections() {
        return Arrays.stream(rejectionsByCause).sum();
    }

    /**
     * A copy of the per-cause counts.
     *
     * @return a fresh array with one count per {@link RemoteRejection}, at its {@code ordinal()}; the caller's to
     *     change
     */
    @Override
    public long[] rejectionsByCause() {
        return rejectionsByCause.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RemoteStoreStats s && configured == s.configured && down == s.down
                && remoteBlocksFound == s.remoteBlocksFound && gatedBlocks == s.gatedBlocks
                && blocksFetched == s.blocksFetched && bytesFetched == s.bytesFetched
                && blocksWritten == s.blocksWritten && writesDropped == s.writesDropped && failures == s.failures
                && Arrays.equals(rejectionsByCause, s.rejectionsByCause) && roundTripNanos == s.roundTripNanos
                && bytesPerSecond == s.bytesPerSecond && estimatedFetchNanos == s.estimatedFetchNanos
                && estimatedRecomputeNanos == s.estimatedRecomputeNanos;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(rejectionsByCause) + Long.hashCode(remoteBlocksFound + 3 * blocksFetched
                + 5 * blocksWritten + 7 * writesDropped + 11 * failures + 13 * gatedBlocks) + (down ? 1 : 0);
    }

    @Override
    public String toString() {
        if (!configured) {
            return "RemoteStoreStats[none]";
        }
        StringBuilder rejections = new StringBuilder();
        for (RemoteRejection cause : RemoteRejection.values()) {
            if (rejections(cause) != 0) {
                rejections.append(rejections.isEmpty() ? "" : ", ").append(cause).append('=').append(rejections(cause));
            }
        }
        return "RemoteStoreStats[down=" + down + ", found=" + remoteBlocksFound + ", gated=" + gatedBlocks
                + ", fetched=" + blocksFetched + " (" + bytesFetched + " bytes), written=" + blocksWritten
                + ", dropped=" + writesDropped + ", failures=" + failures + ", rejected={" + rejections
                + "}, roundTripNanos=" + roundTripNanos + ", bytesPerSecond=" + bytesPerSecond
                + ", estimatedFetchNanos=" + estimatedFetchNanos + ", estimatedRecomputeNanos="
                + estimatedRecomputeNanos + "]";
    }
}
