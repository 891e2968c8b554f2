package dev.kvtier.cluster;

import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;

/**
 * One change of what a rank holds, as it travels between processes (inside a {@link WireMessage.RankBatch}; the rank is
 * the batch's). Immutable values; constructors refuse what the wire format would refuse.
 *
 * <p>Block events say where a block's bytes are <em>after</em> the change was committed (events follow bytes):
 * {@link BlockStored} once the bytes are in {@code tier}; {@link BlockRemoved} once they are no longer in {@code tier};
 * {@link BlockGone} once they are in no tier of that rank. A block held in no tier is gone, however that came about.
 */
public sealed interface ClusterEvent {

    /**
     * The rank now holds {@code block} in {@code tier}.
     *
     * @param block  the block's chain hash, as the prefix API computes it
     * @param tier   the tier the bytes are now in
     * @param tokens how many tokens the block covers (the router adds these up into a hint's reusable tokens), {@code >= 0}
     */
    record BlockStored(BlockHash block, Tier tier, int tokens) implements ClusterEvent {
        /**
         * Checks the event as the wire format would.
         *
         * @throws IllegalArgumentException if {@code block} or {@code tier} is null or {@code tokens < 0}
         */
        public BlockStored {
            requireBlock(block);
            if (tier == null) {
                throw new IllegalArgumentException("tier must not be null");
            }
            if (tokens < 0) {
                throw new IllegalArgumentException("tokens must be >= 0, got " + tokens);
            }
        }
    }

    /**
     * The rank no longer holds {@code block} in {@code tier} (it may still hold it in another tier).
     *
     * @param block the block's chain hash
     * @param tier  the tier the bytes left
     */
    record BlockRemoved(BlockHash block, Tier tier) implements ClusterEvent {
        /**
         * Checks the event as the wire format would.
         *
         * @throws IllegalArgumentException if {@code block} or {@code tier} is null
         */
        public BlockRemoved {
            requireBlock(block);
            if (tier == null) {
                throw new IllegalArgumentException("tier must not be null");
            }
        }
    }

    /**
     * The rank holds {@code block} in no tier any more.
     *
     * @param block the block's chain hash
     */
    record BlockGone(BlockHash block) implements ClusterEvent {
        /**
         * Checks the event as the wire format would.
         *
         * @throws IllegalArgumentException if {@code block} is null
         */
        public BlockGone {
            requireBlock(block);
        }
    }

    /**
     * The seed's {@code ShardUpdated} for this batch's rank: {@code layer}'s KV is appended up to {@code seqPos}.
     *
     * @param layer  the model layer, {@code >= 0} (receivers also refuse one outside their topology)
     * @param seqPos the token position the layer's KV now reaches, {@code >= 0}
     */
    record ShardUpdated(int layer, long seqPos) implements ClusterEvent {
        /**
         * Checks the event as the wire format would.
         *
         * @throws IllegalArgumentException if {@code layer} or {@code seqPos} is negative
         */
        public ShardUpdated {
            requireLayerAndPosition(layer, seqPos);
        }
    }

    /**
     * The seed's {@code ShardEvicted} for this batch's rank: positions of {@code layer} after {@code seqPos} are gone.
     *
     * @param layer  the model layer, {@code >= 0} (receivers also refuse one outside their topology)
     * @param seqPos the token position after which the layer's KV was evicted, {@code >= 0}
     */
    record ShardEvicted(int layer, long seqPos) implements ClusterEvent {
        /**
         * Checks the event as the wire format would.
         *
         * @throws IllegalArgumentException if {@code layer} or {@code seqPos} is negative
         */
        public ShardEvicted {

            requireLayerAndPosition(layer, seqPos);
        }
    }

    private static void requireBlock(BlockHash block) {
        if (block == null) {
            throw new IllegalArgumentException("block must not be null");
        }
    }

    private static void requireLayerAndPosition(int layer, long seqPos) {
        if (layer < 0 || seqPos < 0) {
            throw new IllegalArgumentException("layer and seqPos must be >= 0, got layer " + layer + ", seqPos " + seqPos);
        }
    }
}
