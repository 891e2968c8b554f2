package dev.kvtier.prefix;

import dev.kvtier.store.Tier;

import java.util.List;

/**
 * What {@link PrefixBlockCache#lookupPrefix} found: how many leading blocks of a request are cached, and the
 * tier of each, as they were at the time of the call (other threads may move them right after; to hold them,
 * use {@link PrefixBlockCache#ensurePrefixResident}). Immutable.
 *
 * @param tiers the tier of each cached leading block, in order; its size is the cached prefix's length
 */
public record PrefixLookup(List<Tier> tiers) {

    /** Copies the list. */
    public PrefixLookup {
        tiers = List.copyOf(tiers);
    }

    /**
     * How many leading blocks are cached.
     *
     * @return the number of cached leading blocks, {@code >= 0}
     */
    public int cachedBlocks() {
        return tiers.size();
    }

    /**
     * The tier of cached block {@code index}.
     *
     * @param index the block's place in the prefix, in {@code [0, cachedBlocks())}
     * @return the tier that block was on during the look-up
     */
    public Tier tier(int index) {
        return tiers.get(index);
    }

    /**
     * How many of the cached leading blocks are on {@code tier}.
     *
     * @param tier the tier to count
     * @return the count, in {@code [0, cachedBlocks()]}
     */
    public int blocksOn(Tier tier) {
        int n = 0;
        for (Tier t : tiers) {
            n += t == tier ? 1 : 0;
        }
        return n;
    }
}
