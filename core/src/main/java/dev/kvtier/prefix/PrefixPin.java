package dev.kvtier.prefix;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The blocks of a cached prefix held in place, from {@link PrefixBlockCache#ensurePrefixResident}: until
 * closed, the memory in {@link #blocks()} keeps each block's bytes. The cache does not demote a pinned block
 * to make room, refuses to move it, and a pinned block removed meanwhile keeps its pages until the pin
 * closes (the same promises as {@code SegmentPin}, for every block at once). Holding pins holds memory: a
 * tier full of pinned blocks makes room nowhere, so close a pin as soon as the bytes have been used.
 *
 * <p>Thread-safe; {@link #close()} is idempotent and does nothing after the cache was closed.
 */
public final class PrefixPin implements AutoCloseable {
    private final List<ResidentBlock> blocks;
    private final Runnable unpin;
    private final AtomicBoolean closed = new AtomicBoolean();

    PrefixPin(List<ResidentBlock> blocks, Runnable unpin) {
        this.blocks = List.copyOf(blocks);
        this.unpin = unpin;
    }

    /**
     * The pinned blocks, in prefix order: the longest cached prefix of the hashes asked for.
     *
     * @return the resident blocks, unmodifiable; valid while this pin is open, empty when none was cached
     */
    public List<ResidentBlock> blocks() {
        return blocks;
    }

    /**
     * How many leading blocks are pinned (0 when the first block was not cached).
     *
     * @return the number of pinned blocks, {@code >= 0}
     */
    public int size() {
        return blocks.size();
    }

    /**
     * Whether {@link #close()} has been called.
     *
     * @return true once closed; the blocks' memory must not be used then
     */
    public boolean isClosed() {
        return closed.get();
    }

    /** Releases every block's pin; the first call only. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            unpin.run();
        }
    }

    @Override
    public String toString() {
        return "PrefixPin[" + blocks.size() + " blocks" + (blocks.isEmpty() ? "" : " on " + blocks.get(0).tier())
                + (isClosed() ? ", closed]" : "]");
    }
}
