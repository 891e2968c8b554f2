/**
 * Prefix blocks: the identity of a KV block as inference runtimes name it, and the cache API they speak.
 * A block is a fixed number of tokens; its {@link dev.kvtier.prefix.BlockHash} is a chained hash of its parent
 * block's hash and its own token ids ({@link dev.kvtier.prefix.BlockHasher}), so two requests with an equal
 * prefix name equal blocks. {@link dev.kvtier.prefix.PrefixBlockCache} keeps such blocks in a
 * {@code KvTierCache}'s tiers: longest cached prefix, batched (and layer-by-layer) restore with pins, storing
 * new blocks, and eviction that never leaves a child without its parent.
 *
 * <p>The hash definition is a wire format: hashes travel between hosts and processes of different versions,
 * so it never changes silently (a new definition gets a new domain tag). The hashes know nothing of tiers,
 * bytes or CUDA; the cache view reaches the tiers only through the engine's chain operations.
 */
package dev.kvtier.prefix;
