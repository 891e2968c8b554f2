package dev.kvtier.prefix;

import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * One block of a prefix made resident: its hash, the tier its bytes are on, its token positions, and the
 * memory holding them as contiguous runs of pages in block order. On {@link Tier#GPU} the runs are device
 * addresses: never dereference them on the host (with the host backend they are native memory standing in
 * for device memory). Valid while the {@link PrefixPin} that returned it is open. Immutable.
 *
 * @param hash      the block's hash
 * @param tier      where its bytes are
 * @param foundOn   where the restore found them: {@code tier} when the block was there already, the slower tier
 *                  it was moved up from otherwise (so a runtime learns its hits per tier from the restore itself,
 *                  without a {@link PrefixBlockCache#lookupPrefix} before it)
 * @param positions its token positions
 * @param pages     the runs of pages holding its bytes, in order
 */
public record ResidentBlock(BlockHash hash, Tier tier, Tier foundOn, PositionRange positions, List<MemorySegment> pages) {

    /** Copies the run list. */
    public ResidentBlock {
        pages = List.copyOf(pages);
    }

    /**
     * The memory holding layer {@code layer} of this block under {@code layout}: the runs covering the
     * layer's ranges ({@link BlockLayout#layerOffsets}), in order.
     *
     * @param layout the layout this block was stored under, with layers declared
     * @param layer  the layer, in {@code [0, layout.layers())}
     * @return slices of {@link #pages()}, valid while the pin is open; device addresses on GPU
     * @throws IllegalStateException    if the layout declares no layers
     * @throws IllegalArgumentException if {@code layer} is out of range
     */
    public List<MemorySegment> layerPages(BlockLayout layout, int layer) {
        long[] offsets = layout.layerOffsets(layer);
        long[] lengths = layout.layerLengths(layer);
        List<MemorySegment> runs = new ArrayList<>();
        for (int r = 0; r < offsets.length; r++) {
            long skip = offsets[r];
            long left = lengths[r];
            for (int i = 0; i < pages.size() && left > 0; i++) {
                MemorySegment run = pages.get(i);
                if (skip >= run.byteSize()) {
                    skip -= run.byteSize();
                    continue;
                }
                long take = Math.min(run.byteSize() - skip, left);
                runs.add(run.asSlice(skip, take));
                left -= take;
                skip = 0;
            }
        }
        return List.copyOf(runs);
    }
}
