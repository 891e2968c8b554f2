package dev.kvtier.tiering;

/**
 * Internal: the geometry of the blocks a prefix view speaks of, as the chain calls check it against the blocks they
 * find. A block remembers its own (its byte size and its positions' token count, from the view that stored it); a
 * view whose blocks are of another size would copy, read or restore only part of each block, so every chain call
 * refuses such a block with an {@link IllegalArgumentException} naming both. Immutable, thread-safe.
 *
 * @param bytesPerBlock  bytes of one of the view's blocks
 * @param tokensPerBlock tokens of one of the view's blocks
 * @param description    the view's layout as the message names it
 */
public record BlockGeometry(long bytesPerBlock, long tokensPerBlock, String description) {

    /**
     * Checks {@code block} (any state) against this geometry.
     *
     * @throws IllegalArgumentException naming the block's size and tokens and this view's layout when they differ
     */
    void requireMatches(Segment block) {
        long tokens = block.positions.length();
        if (block.sizeBytes != bytesPerBlock || tokens != tokensPerBlock) {
            throw new IllegalArgumentException("block \"" + block.key + "\" was stored by a view of " + block.sizeBytes
                    + " bytes and " + tokens + " tokens per block, but this view's layout is " + description + " ("
                    + bytesPerBlock + " bytes and " + tokensPerBlock + " tokens per block): open the view with the"
                    + " layout the block was stored with (one layout per cache)");
        }
    }
}
