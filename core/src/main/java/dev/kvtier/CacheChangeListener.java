package dev.kvtier;

import dev.kvtier.store.Tier;

/**
 * Told of each change to a {@link KvTierCache} once it is committed: a segment added (put or
 * adopted), moved between tiers, or removed, and each {@link KvTierCache#ensureResident} call as
 * it returns. "Committed" means the bytes are where the call says (events follow bytes): a
 * listener never hears of a segment before it can be read, nor of a move that was rolled back.
 * The one way to observe the engine: metrics ({@code dev.kvtier.observe.micrometer.KvTierMetrics})
 * and cluster notifications hang here.
 *
 * <p>Called once the operation that made the change has left the cache, holding none of its locks, in the
 * order the changes were committed (calls for one key in the order of its changes), one call at a time:
 * usually on the thread that made the change, at the end of its call; when another thread is delivering
 * at that moment, that thread delivers this change too, so a call may return just before its listeners
 * hear of it. A listener may call back into the cache (a change it makes is delivered after it returns);
 * it should be quick (hand slow work to a queue): the next changes wait for it. An exception thrown by a
 * listener is logged and does not undo the change. {@link KvTierCache#close()} removes every segment without telling listeners. Every method
 * does nothing by default.
 */
public interface CacheChangeListener {

    /**
     * Segment {@code key} of {@code bytes} now lives on {@code tier} (put or adopted).
     *
     * @param key   the segment's key
     * @param tier  the tier its bytes are on
     * @param bytes its size in bytes, {@code >= 0}
     */
    default void segmentAdded(String key, Tier tier, long bytes) {
    }

    /**
     * Segment {@code key} of {@code bytes} moved from {@code from} to {@code to} (a demotion or promotion).
     *
     * @param key   the segment's key
     * @param from  the tier it left
     * @param to    the tier it is on now
     * @param bytes its size in bytes, {@code >= 0}
     */
    default void segmentMoved(String key, Tier from, Tier to, long bytes) {
    }

    /**
     * Segment {@code key} of {@code bytes}, last on {@code tier}, is gone: removed by the caller, or
     * dropped because a failed move had no room left to roll back into.
     *
     * @param key   the segment's key
     * @param tier  the tier it was last on
     * @param bytes its size in bytes, {@code >= 0}
     */
    default void segmentRemoved(String key, Tier tier, long bytes) {
    }

    /**
     * An {@link KvTierCache#ensureResident} or {@link KvTierCache#ensureResidentAsync} call for
     * {@code tier} completed after {@code nanos} (waiting for another call's move of the same key
     * included), successfully or not. {@code foundOn} is the tier the segment was found on
     * ({@link ResidentSegment#foundOn()}): {@code tier} or a faster one for a hit there, a slower one it
     * was promoted from; null when the call failed (the key not cached, no room, a failed copy). Timing a
     * call reads the clock twice, which is a large part of a resident hit's cost: the cache does it only
     * while a registered listener's class overrides this method, so a listener that follows changes only
     * should leave it alone.
     *
     * @param key     the key the call asked for
     * @param tier    the tier the call asked for
     * @param foundOn the tier the segment was found on, or null when the call failed
     * @param nanos   how long the call took, in nanoseconds
     */
    default void ensureResidentCompleted(String key, Tier tier, Tier foundOn, long nanos) {
    }

    /**
     * A prefix lookup ({@code PrefixBlockCache.lookupPrefix}) asked for a chain of {@code queriedBlocks}
     * blocks and found its leading {@code matchedBlocks} cached: their ratio is the prefix hit rate.
     *
     * @param queriedBlocks how many block hashes the lookup was given, {@code >= 0}
     * @param matchedBlocks how many leading ones are cached, in {@code [0, queriedBlocks]}
     */
    default void prefixLookedUp(int queriedBlocks, int matchedBlocks) {
    }

    /**
     * A prefix restore ({@code PrefixBlockCache.ensurePrefixResident} or {@code ensurePrefixResidentByLayer})
     * to {@code tier} or faster completed after {@code nanos}: {@code blocks} blocks pinned there, or failed
     * ({@code succeeded} false, {@code blocks} 0). For a restore by layer, when its last layer is in place.
     *
     * @param tier      the tier the restore asked for
     * @param blocks    how many blocks were pinned; 0 when it failed or the first block was not cached
     * @param nanos     how long the restore took, in nanoseconds
     * @param succeeded false when the restore failed
     */
    default void prefixRestoreCompleted(Tier tier, int blocks, long nanos, boolean succeeded) {
    }
}
