package dev.kvtier.prefix;

import dev.kvtier.tiering.LayerStream;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * One layer of a streamed prefix ({@link PrefixStream#layer}): for every block, the GPU memory holding that layer's
 * bytes (the layer's ranges of {@link BlockLayout#layerOffsets} back to back, as runs of pages), either in place (a
 * block on the GPU tier) or in the stream's staging area. The pages are valid until {@link #release()} (the staging
 * slot then takes a later layer) or the stream's close, whichever is first: never read them after. On
 * {@link dev.kvtier.store.Tier#GPU} these are device addresses; with the host backend they are native memory the CPU
 * may read. Thread-safe.
 */
public final class PrefixLayer {
    private final int layer;
    private final List<List<MemorySegment>> pages;
    private final LayerStream stream;

    PrefixLayer(int layer, List<List<MemorySegment>> pages, LayerStream stream) {
        this.layer = layer;
        this.pages = pages;
        this.stream = stream;
    }

    /**
     * Which layer this is.
     *
     * @return the layer's index in the layout, {@code >= 0}
     */
    public int layer() {
        return layer;
    }

    /**
     * How many blocks the layer covers (the stream's {@link PrefixStream#size()}).
     *
     * @return the number of blocks, {@code >= 0}
     */
    public int blocks() {
        return pages.size();
    }

    /**
     * The runs holding this layer of block {@code block} (in prefix order), its ranges back to back.
     *
     * @param block the block's place in the prefix, in {@code [0, blocks())}
     * @return the GPU memory runs holding the layer's bytes of that block, valid until {@link #release()} or the
     *         stream's close (after that a staging slot holds another layer)
     * @throws IllegalArgumentException if {@code block} is out of range
     */
    public List<MemorySegment> pages(int block) {
        if (block < 0 || block >= pages.size()) {
            throw new IllegalArgumentException("block must be in [0, " + pages.size() + "), was " + block);
        }
        return pages.get(block);
    }

    /**
     * Hands the layer's pages back: the stream may copy layer {@code layer() + 2} into the same staging slot. Call it
     * once the layer's attention has read what it needs (copy what later steps read into the runtime's own memory
     * first). Idempotent; does nothing after the stream was closed.
     */
    public void release() {
        stream.release(layer);
    }

    @Override
    public String toString() {
        return "PrefixLayer[" + layer + ", " + pages.size() + " blocks]";
    }
}
