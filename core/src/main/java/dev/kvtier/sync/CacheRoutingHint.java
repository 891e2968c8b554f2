package dev.kvtier.sync;

import java.util.List;

/**
 * Which ranks a scheduler should notify for a request that can reuse a cached prefix, and how many
 * tokens it can skip.
 *
 * <p>Immutable: {@code relevantRanks} is copied into an unmodifiable list, so the hint is safe to
 * share between threads and later changes to the caller's list do not show through. Ranks may be
 * given in any order and repeated; they are kept as given. {@code prefixId} is a 64-bit hash and is
 * printed unsigned (hexadecimal) by {@link #toString()}.
 *
 *
 * <p>Across processes (the cluster router) a hint also says where each rank runs: {@code rankHosts} is either empty
 * (not known, as in the seed) or parallel to {@code relevantRanks} ({@code rankHosts.get(i)} is the host of
 * {@code relevantRanks.get(i)}).
 *
 * @param prefixId the prefix to look up (64-bit hash, any bit pattern)
 * @param relevantRanks ranks holding the relevant cache shards; each {@code >= 0}
 * @param reusableTokens how many tokens can be reused from the cache; {@code >= 0}
 * @param rankHosts the host of each relevant rank, in the same order; or empty when not known
 */
public record CacheRoutingHint(long prefixId, List<Integer> relevantRanks, long reusableTokens, List<String> rankHosts) {

    /**
     * The seed's hint: no host locations.
     *
     * @param prefixId       the prefix to look up (64-bit hash, any bit pattern)
     * @param relevantRanks  the ranks holding the relevant cache shards, each {@code >= 0}, in any order; copied
     * @param reusableTokens how many tokens can be reused from the cache, {@code >= 0}
     * @throws IllegalArgumentException as the canonical constructor
     */
    public CacheRoutingHint(long prefixId, List<Integer> relevantRanks, long reusableTokens) {
        this(prefixId, relevantRanks, reusableTokens, List.of());
    }

    /**
     * Checks the components and copies {@code relevantRanks} and {@code rankHosts}.
     *
     * @throws IllegalArgumentException if {@code relevantRanks} is {@code null} or holds a
     *     {@code null} or negative rank, {@code reusableTokens} is negative, or {@code rankHosts} is {@code null},
     *     holds a {@code null}, or is neither empty nor as long as {@code relevantRanks}
     */
    public CacheRoutingHint {
        if (relevantRanks == null) {
            throw new IllegalArgumentException("relevantRanks must not be null");
        }
        // Copy before checking so the checked list is the one kept.
        Object[] given = relevantRanks.toArray();
        Integer[] ranks = new Integer[given.length];
        for (int i = 0; i < given.length; i++) {
            if (!(given[i] instanceof Integer rank)) {
                throw new IllegalArgumentException("relevantRanks[" + i + "] must not be null");
            }
            Checks.requireNonNegative("relevantRanks[" + i + "]", rank);
            ranks[i] = rank;
        }
        Checks.requireNonNegative("reusableTokens", reusableTokens);
        relevantRanks = List.of(ranks);
        if (rankHosts == null) {
            throw new IllegalArgumentException("rankHosts must not be null (empty when not known)");
        }
        Object[] hosts = rankHosts.toArray();
        if (hosts.length != 0 && hosts.length != ranks.length) {
            throw new IllegalArgumentException("rankHosts must be empty or name one host per relevant rank: "
                    + hosts.length + " hosts for " + ranks.length + " ranks");
        }
        String[] checkedHosts = new String[hosts.length];
        for (int i = 0; i < hosts.length; i++) {
            if (!(hosts[i] instanceof String host)) {
                throw new IllegalArgumentException("rankHosts[" + i + "] must be a non-null String");
            }
            checkedHosts[i] = host;
        }
        rankHosts = List.of(checkedHosts);
    }

    /**
     * Whether there is any rank to notify.
     *
     * @return true when {@link #relevantRanks()} is not empty
     */
    public boolean hasTargets() {
        return !relevantRanks.isEmpty();
    }

    /** Like the record default, with {@code prefixId} as unsigned hexadecimal; hosts only when known. */
    @Override
    public String toString() {
        return "CacheRoutingHint[prefixId=" + Checks.prefixIdToString(prefixId) + ", relevantRanks=" + relevantRanks
                + ", reusableTokens=" + reusableTokens + (rankHosts.isEmpty() ? "" : ", rankHosts=" + rankHosts) + "]";
    }
}
