package dev.kvtier;

import dev.kvtier.store.Tier;

import java.util.Arrays;

/**
 * A snapshot of a {@link KvTierCache}'s counters. Usage per tier is the store's bookkeeping (a
 * segment in flight counts on its destination); allocated bytes are what the executor holds in
 * pages it owns (adopted device memory is not counted there). Immutable.
 *
 * @param gpuUsed      bytes of segments on GPU, adopted ones included
 * @param cpuUsed      bytes of segments on CPU
 * @param diskUsed     bytes of segments on DISK
 * @param transfers    completed tier-to-tier moves (demotions and promotions)
 * @param demotions    the completed moves to a slower tier among {@code transfers}: made to make room, or asked for
 * @param evictions    segments removed from a full DISK tier to make room there (a DISK budget,
 *                     {@link KvTierConfig#diskBudgetBytes()}); removals the caller asked for are not counted
 * @param failures     calls that failed because bytes could not be moved or checked (each rolled back),
 *                     counted once per call however many attempts failed inside it
 * @param bytesMovedByPair bytes moved by completed transfers, at {@code from.ordinal() * 3 + to.ordinal()}
 * @param allocatedByTier  bytes of segments held in the executor's own pages, by {@code tier.ordinal()}
 * @param remote           the traffic with the remote block store ({@link RemoteStoreStats#NONE} without one)
 */
public record CacheStats(long gpuUsed, long cpuUsed, long diskUsed, long transfers, long demotions, long evictions,
                         long failures,
                         long[] bytesMovedByPair, long[] allocatedByTier, RemoteStoreStats remote) {

    /**
     * The stats of a cache without a remote store: {@link #remote()} is {@link RemoteStoreStats#NONE}.
     *
     * @param gpuUsed          bytes of segments on GPU, adopted ones included
     * @param cpuUsed          bytes of segments on CPU
     * @param diskUsed         bytes of segments on DISK
     * @param transfers        completed tier-to-tier moves (demotions and promotions)
     * @param demotions        the completed moves to a slower tier among {@code transfers}
     * @param evictions        segments removed from a full DISK tier to make room there
     * @param failures         calls that failed because bytes could not be moved or checked, once per call
     * @param bytesMovedByPair bytes moved by completed transfers, at {@code from.ordinal() * 3 + to.ordinal()}: 9
     *                         entries, copied
     * @param allocatedByTier  bytes of segments held in the executor's own pages, by {@code tier.ordinal()}: 3
     *                         entries, copied
     * @throws IllegalArgumentException if an array has the wrong number of entries
     */
    public CacheStats(long gpuUsed, long cpuUsed, long diskUsed, long transfers, long demotions, long evictions,
                      long failures, long[] bytesMovedByPair, long[] allocatedByTier) {
        this(gpuUsed, cpuUsed, diskUsed, transfers, demotions, evictions, failures, bytesMovedByPair, allocatedByTier,
                RemoteStoreStats.NONE);
    }

    /** Defensive copies; {@code bytesMovedByPair} is indexed {@code from.ordinal() * 3 + to.ordinal()}. */
    public CacheStats {
        int tiers = Tier.values().length;
        if (bytesMovedByPair.length != tiers * tiers || allocatedByTier.length != tiers) {
            throw new IllegalArgumentException("bytesMovedByPair must have " + tiers * tiers
                    + " entries and allocatedByTier " + tiers);
        }
        bytesMovedByPair = bytesMovedByPair.clone();
        allocatedByTier = allocatedByTier.clone();
        if (remote == null) {
            throw new IllegalArgumentException("remote must not be null (RemoteStoreStats.NONE without a store)");
        }
    }

    /**
     * Bytes moved from {@code from} to {@code to} by completed transfers.
     *
     * @param from the tier the bytes left
     * @param to   the tier they arrived on
     * @return the bytes moved, {@code >= 0}
     */
    public long bytesMoved(Tier from, Tier to) {
        return bytesMovedByPair[from.ordinal() * Tier.values().length + to.ordinal()];
    }

    /**
     * Bytes of segments on {@code tier} (the store's usage).
     *
     * @param tier the tier whose booked bytes to report
     * @return the bytes booked on {@code tier}, {@code >= 0}
     */
    public long used(Tier tier) {
        return switch (tier) {
            case GPU -> gpuUsed;
            case CPU -> cpuUsed;
            case DISK -> diskUsed;
        };
    }

    /**
     * Bytes of segments held in the executor's own pages on {@code tier} (0 after everything is removed).
     *
     * @param tier the tier whose allocated pages to report
     * @return the bytes allocated on {@code tier}, {@code >= 0}
     */
    public long allocated(Tier tier) {
        return allocatedByTier[tier.ordinal()];
    }

    /**
     * A copy of the per-pair matrix.
     *
     * @return a new array of {@code 3 * 3} byte counts, indexed {@code from.ordinal() * 3 + to.ordinal()}; the caller
     *         owns it
     */
    @Override
    public long[] bytesMovedByPair() {
        return bytesMovedByPair.clone();
    }

    /**
     * A copy of the per-tier allocation.
     *
     * @return a new array of byte counts by {@code tier.ordinal()}; the caller owns it
     */
    @Override
    public long[] allocatedByTier() {
        return allocatedByTier.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CacheStats s && gpuUsed == s.gpuUsed && cpuUsed == s.cpuUsed && diskUsed == s.diskUsed
                && transfers == s.transfers && demotions == s.demotions && evictions == s.evictions
                && failures == s.failures
                && Arrays.equals(bytesMovedByPair, s.bytesMovedByPair) && Arrays.equals(allocatedByTier, s.allocatedByTier)
                && remote.equals(s.remote);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(bytesMovedByPair) + Arrays.hashCode(allocatedByTier)
                + Long.hashCode(gpuUsed + 7 * cpuUsed + 13 * diskUsed + 17 * transfers + 19 * failures + 23 * demotions
                + 29 * evictions);
    }

    @Override
    public String toString() {
        StringBuilder moved = new StringBuilder();
        for (Tier from : Tier.values()) {
            for (Tier to : Tier.values()) {
                long bytes = bytesMoved(from, to);
                if (bytes != 0) {
                    moved.append(moved.isEmpty() ? "" : ", ").append(from).append("->").append(to).append('=').append(bytes);
                }
            }
        }
        return "CacheStats[gpuUsed=" + gpuUsed + ", cpuUsed=" + cpuUsed + ", diskUsed=" + diskUsed
                + ", transfers=" + transfers + ", demotions=" + demotions + ", evictions=" + evictions
                + ", failures=" + failures + ", moved={" + moved
                + "}, allocated=" + Arrays.toString(allocatedByTier)
                + (remote.configured() ? ", remote=" + remote : "") + "]";
    }
}
