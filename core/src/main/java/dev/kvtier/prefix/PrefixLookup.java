package dev.kvtier.prefix;

import dev.kvtier.store.Tier;

import java.util.List;

/**
 * What {@link PrefixBlockCache#lookupPrefix} found: how many leading blocks of a request are cached, and the
 * tier of each, as they were at the time of the call (other threads may move them right after; to hold them,
 * use {@link PrefixBlockCache#ensurePrefixResident}). With a remote block store configured
 * ({@code KvTierConfig.remote()}), the local prefix may be followed by blocks the store holds: they count as cached
 * ({@link PrefixBlockCache#ensurePrefixResident} fetches them), have no tier, and {@link #isRemote} says which they
 * are. The look-up only asks whether the store holds them: one that is gone by the time a restore fetches it, or
 * whose value fails its checks then (a miss counted in {@code RemoteStoreStats}), ends the restored prefix before it,
 * so a restore's {@link PrefixPin#size()} may be shorter than {@link #cachedBlocks()}. Immutable.
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

    /**
     * A look-up with no remote blocks.
     *
     * @param tiers the tier of each locally cached leading block, in chain order (copied)
     */
    public PrefixLookup(List<Tier> tiers) {
        this(tiers, 0);
    }

    /**
     * How many leading blocks are cached: held locally, then those the remote store holds.
     *
     * @return the number of cached leading blocks, local then remote, {@code >= 0}
     */
    public int cachedBlocks() {
        return tiers.size() + remoteBlocks;
    }

    /**
     * How many leading blocks are held locally (on a tier).
     *
     * @return the number of local leading blocks, in {@code [0, cachedBlocks()]}
     */
    public int localBlocks() {
        return tiers.size();
    }

    /**
     * Whether cached block {@code index} is held only by the remote store.
     *
     * @param index the block's place in the prefix, in {@code [0, cachedBlocks())}
     * @return true for a remote block (an index at or past {@link #localBlocks()})
     */
    public boolean isRemote(int index) {
        if (index < 0 || index >= cachedBlocks()) {
            throw new IndexOutOfBoundsException("block " + index + " of a cached prefix of " + cachedBlocks());
        }
        return index >= tiers.size();
    }

    /**
     * The tier of locally cached block {@code index}.
     *
     * @param index the block's place in the prefix, in {@code [0, localBlocks())}
     * @return the tier that block was on during the look-up
     * @throws IndexOutOfBoundsException if {@code index} is not a local block (a remote block has no tier)
     */
    public Tier tier(int index) {
        return tiers.get(index);
    }

    /**
     * How many of the locally cached leading blocks are on {@code tier}.
     *
     * @param tier the tier to count
     * @return the count, in {@code [0, localBlocks()]}
     */
    public int blocksOn(Tier tier) {
        int n = 0;
        for (Tier t : tiers) {
            n += t == tier ? 1 : 0;
        }
        return n;
    }
}
