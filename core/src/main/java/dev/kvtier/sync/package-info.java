/**
 * Cross-rank coordination of a layer-sharded KV cache: which layers each rank (GPU) holds
 * ({@link dev.kvtier.sync.CacheShardInfo}), the events ranks broadcast to one another
 * ({@link dev.kvtier.sync.SyncEvent}), the state those events imply
 * ({@link dev.kvtier.sync.CacheSyncProtocol}) and scheduler routing hints
 * ({@link dev.kvtier.sync.CacheRoutingHint}).
 *
 * <p>Metadata only: nothing here holds tensor bytes or knows about CUDA. The behaviour follows the
 * Rust seed {@code distributed_cache.rs}; where it differs (thread safety, input validation, a
 * bounded log trimmed at once) the class Javadoc says so.
 *
 * <p>Prefix ids are 64-bit hashes held in a {@code long}; they are compared bit for bit and printed
 * as unsigned hexadecimal ({@code 0x...}).
 */
package dev.kvtier.sync;
