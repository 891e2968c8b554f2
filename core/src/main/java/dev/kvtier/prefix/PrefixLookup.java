package dev.kvtier.prefix;

import dev.kvtier.store.Tier;

import java.util.List;

/**
 * What {@link PrefixBlockCache#lookupPrefix} found: how many leading blocks of a request are cached, and the
 * tier of each, as they were at the time of the call (other threads may move them right after; to hold them,
 * use {@link PrefixBlockCache#ensurePrefixResident}). With a remote block store configured
 * ({@code KvTierConfig.remote()}), the local prefix may be followed by blocks the store holds: they count as cached
 * ({@link PrefixBlockCache#ensurePrefixResident} fetches them), have no tier, and {@link #isRemote} says which they
 * are. Immutable.
 *
 * @param tiers        the tier of each locally cached leading block, in order; its size is the local prefix's length
 * @param remoteBlocks how many blocks right after the local prefix the remote store holds (and the cost gate judged
 *                     worth fetching); 0 without a remote store
 */
public record PrefixLookup(List<Tier> tiers, int remoteBlocks) {

    /** Copies the list. */
    public PrefixLookup {
        tiers = List.copyOf(tiers);
        if (remoteBlocks < 0) {
            throw new IllegalArgumentException("remoteBlocks must be >= 0, was " + remoteBlocks);
        }
    }

    /** A look-up with no remote blocks. */
    public PrefixLookup(List<Tier> tiers) {
        this(tiers, 0);
    }

    /** How many leading blocks are cached: held locally, then those the remote store holds. */
    public int cachedBlocks() {
        return tiers.size() + remoteBlocks;
    }

    /** How many leading blocks are held locally (on a tier). */
    public int localBlocks() {
        return tiers.size();
    }

    /** Whether cached block {@code index} is held only by the remote store. */
    public boolean isRemote(int index) {
        if (index < 0 || index >= cachedBlocks()) {
            throw new IndexOutOfBoundsException("block " + index + " of a cached prefix of " + cachedBlocks());
        }
        return index >= tiers.size();
    }

    /**
     * The tier of locally cached block {@code index}.
     *
     * @throws IndexOutOfBoundsException if {@code index} is not a local block (a remote block has no tier)
     */
    public Tier tier(int index) {
        return tiers.get(index);
    }

    /** How many of the locally cached leading blocks are on {@code tier}. */
    public int blocksOn(Tier tier) {
        int n = 0;
        for (Tier t : tiers) {
            n += t == tier ? 1 : 0;
        }
        return n;
    }
}
