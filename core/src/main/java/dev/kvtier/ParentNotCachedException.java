package dev.kvtier;

/**
 * Thrown by {@code PrefixBlockCache.storeBlocks} when the block the new blocks continue is not cached (typically
 * removed between the runtime's {@code lookupPrefix} and its {@code storeBlocks}). Nothing was stored: storing the
 * blocks without their parent would leave a chain start that no look-up of the real chain ever reaches. Look the
 * prefix up again and store from its last cached block, or from {@code BlockHash.ROOT} when none is cached.
 * {@link #key()} is the missing parent's segment key.
 */
public final class ParentNotCachedException extends KvTierException {
    private static final long serialVersionUID = 1L;

    /**
     * A store refused because its parent block is not cached.
     *
     * @param parentKey  the missing parent's segment key
     * @param parentHash the missing parent's hash, as 32 hex digits
     */
    public ParentNotCachedException(String parentKey, String parentHash) {
        super(parentKey, "parent block " + parentHash + " (segment \"" + parentKey + "\") is not cached, so the blocks"
                + " continuing it were not stored; look the prefix up again and store from its last cached block"
                + " (BlockHash.ROOT to start a chain, also one hashed from a namespace root)", null);
    }
}
