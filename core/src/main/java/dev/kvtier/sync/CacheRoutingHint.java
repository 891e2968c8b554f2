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
 * @param prefixId the prefix to look up (64-bit hash, any bit pattern)
 * @param relevantRanks ranks holding the relevant cache shards; each {@code >= 0}
 * @param reusableTokens how many tokens can be reused from the cache; {@code >= 0}
 */
public record CacheRoutingHint(long prefixId, List<Integer> relevantRanks, long reusableTokens) {

    /**
     * Checks the components and copies {@code relevantRanks}.
     *
     * @throws IllegalArgumentException if {@code relevantRanks} is {@code null} or holds a
     *     {@code null} or negative rank, or {@code reusableTokens} is negative
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
    }

    /** Whether there is any rank to notify. */
    public boolean hasTargets() {
        return !relevantRanks.isEmpty();
    }

    /** Like the record default, with {@code prefixId} as unsigned hexadecimal. */
    @Override
    public String toString() {
        return "CacheRoutingHint[prefixId=" + Checks.prefixIdToString(prefixId) + ", relevantRanks=" + relevantRanks
                + ", reusableTokens=" + reusableTokens + "]";
    }
}
