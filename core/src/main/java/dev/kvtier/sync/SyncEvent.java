package dev.kvtier.sync;

/**
 * A cache synchronisation event broadcast between ranks and applied by
 * {@link CacheSyncProtocol#recordEvent(SyncEvent)}.
 *
 * <p>The events are immutable records. Each constructor checks what it can check on its own
 * (ranks, layers, positions and token counts are {@code >= 0}) and throws
 * {@link IllegalArgumentException} naming the argument and value otherwise; whether a rank or layer
 * exists is checked by the protocol the event is recorded in, which knows the world size and layer
 * count.
 */
public sealed interface SyncEvent {

    /**
     * Rank {@code rank} has appended KV entries for {@code layer} up to sequence position
     * {@code seqPos}; recording it sets that (rank, layer)'s latest position to {@code seqPos}.
     *
     * @param rank the reporting rank, {@code >= 0}
     * @param layer the attention layer, {@code >= 0}
     * @param seqPos the sequence position reached, {@code >= 0}
     */
    record ShardUpdated(int rank, int layer, long seqPos) implements SyncEvent {
        /**
         * Checks the components.
         *
         * @throws IllegalArgumentException if {@code rank}, {@code layer} or {@code seqPos} is negative
         */
        public ShardUpdated {
            Checks.requireNonNegative("rank", rank);
            Checks.requireNonNegative("layer", layer);
            Checks.requireNonNegative("seqPos", seqPos);
        }
    }

    /**
     * Prefix {@code prefixId} (a 64-bit token hash, compared bit for bit, printed unsigned) is cached
     * on all ranks and covers {@code numTokens} tokens. Recording it again replaces the token count.
     *
     * @param prefixId the prefix's 64-bit hash, any bit pattern
     * @param numTokens tokens in the prefix, {@code >= 0}
     */
    record PrefixConfirmed(long prefixId, long numTokens) implements SyncEvent {
        /**
         * Checks the components.
         *
         * @throws IllegalArgumentException if {@code numTokens} is negative
         */
        public PrefixConfirmed {
            Checks.requireNonNegative("numTokens", numTokens);
        }

        /** Like the record default, with {@code prefixId} as unsigned hexadecimal. */
        @Override
        public String toString() {
            return "PrefixConfirmed[prefixId=" + Checks.prefixIdToString(prefixId) + ", numTokens=" + numTokens + "]";
        }
    }

    /**
     * Rank {@code rank} has evicted KV entries of {@code layer}: positions after {@code seqPos} are no
     * longer valid. As in the seed, recording it sets that (rank, layer)'s latest position to
     * {@code seqPos} (also when {@code seqPos} is above the previous position).
     *
     * @param rank the evicting rank, {@code >= 0}
     * @param layer the attention layer, {@code >= 0}
     * @param seqPos the last position still valid, {@code >= 0}
     */
    record ShardEvicted(int rank, int layer, long seqPos) implements SyncEvent {
        /**
         * Checks the components.
         *
         * @throws IllegalArgumentException if {@code rank}, {@code layer} or {@code seqPos} is negative
         */
        public ShardEvicted {
            Checks.requireNonNegative("rank", rank);
            Checks.requireNonNegative("layer", layer);
            Checks.requireNonNegative("seqPos", seqPos);
        }
    }

    /**
     * All ranks flush their caches (e.g. on a model swap): recording it forgets every position and
     * every confirmed prefix. The event itself is kept in the log. All instances are equal.
     */
    record FlushAll() implements SyncEvent {}
}
