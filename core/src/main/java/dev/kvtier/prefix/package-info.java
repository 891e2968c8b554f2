/**
 * Prefix blocks: the identity of a KV block as inference runtimes name it. A block is a fixed number of
 * tokens; its {@link dev.kvtier.prefix.BlockHash} is a chained hash of its parent block's hash and its own
 * token ids ({@link dev.kvtier.prefix.BlockHasher}), so two requests with an equal prefix name equal blocks.
 *
 * <p>The definition is a wire format: hashes travel between hosts and processes of different versions, so
 * it never changes silently (a new definition gets a new domain tag). Knows nothing of tiers, bytes or CUDA.
 */
package dev.kvtier.prefix;
