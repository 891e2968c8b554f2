package dev.kvtier.prefix;

import dev.kvtier.store.Tier;
import dev.kvtier.tiering.LayerStream;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A cached prefix streamed to the GPU one layer at a time, from {@link PrefixBlockCache#streamPrefixByLayer}: for a
 * prefix larger than the GPU tier, which {@link PrefixBlockCache#ensurePrefixResidentByLayer} cannot hold there at
 * once. The blocks stay where they are (pinned there: not demoted, moved or freed until {@link #close()}); layer
 * {@code l} of every block not on the GPU is copied, as one batch, into a GPU staging area of two slots, so layer
 * {@code l + 1} arrives while the runtime computes layer {@code l}; blocks already on the GPU are handed over in place.
 *
 * <p><b>The flow.</b> Wait for {@link #layer(int) layer(l)}, read (or copy into the runtime's own KV memory) its pages,
 * then {@link PrefixLayer#release()} it: its slot then takes layer {@code l + 2}. A layer not released holds its slot,
 * and so layer {@code l + 2} waits for it. {@link #close()} when done, however it ends (try-with-resources).
 *
 * <p><b>Memory.</b> The staging area is {@code 2 x} (the bytes of one layer of every block not on the GPU): that is
 * {@code 2 / layers} of those blocks' bytes. It is taken from the GPU budget when the stream opens (making room there
 * as a restore does; its bytes are booked in the store under a key of their own, which budgets and stats count and the
 * policy never offers) and given back at close.
 *
 * <p><b>Promises.</b> Never a wrong byte: the sources are pinned (a block removed meanwhile keeps its pages until the
 * close), DISK blocks are checked against their CRC32C when the stream opens, and a failed copy fails that layer and
 * every later one ({@code TransferFailedException}) without touching the sources. One batch per layer: one
 * {@code cudaMemcpyBatchAsync} per direction (host to device for CPU and DISK blocks together). Bounded: each copy
 * waits at most {@code KvTierConfig.transferTimeout}. No caller code under the cache's locks: the futures are
 * completed on a kvtier completion thread outside the cache's operations (a dependent may call the cache or close it);
 * cancelling or timing out a layer future affects nothing else, and {@link #close()} releases the pins and the staging
 * area as soon as no copy of this stream can still write it. If the cache closes first, the layers not yet arrived
 * fail with {@link IllegalStateException}. Thread-safe.
 */
public final class PrefixStream implements AutoCloseable {
    private final List<BlockHash> hashes;
    private final LayerStream stream;
    private final List<CompletableFuture<PrefixLayer>> layers;

    PrefixStream(List<BlockHash> hashes, LayerStream stream) {
        this.hashes = List.copyOf(hashes.subList(0, stream.foundOn().size()));
        this.stream = stream;
        List<CompletableFuture<PrefixLayer>> futures = new ArrayList<>(stream.layers());
        for (int l = 0; l < stream.layers(); l++) {
            int layer = l;
            futures.add(stream.layer(l).thenApply(pages -> new PrefixLayer(layer, pages, stream)));
        }
        this.layers = List.copyOf(futures);
    }

    /**
     * How many leading blocks are streamed (0 when the first block was not cached).
     *
     * @return the number of streamed blocks, {@code >= 0}
     */
    public int size() {
        return hashes.size();
    }

    /**
     * The streamed blocks' hashes, in prefix order.
     *
     * @return an unmodifiable list of {@link #size()} hashes
     */
    public List<BlockHash> hashes() {
        return hashes;
    }

    /**
     * Where each streamed block was found (and stays), in prefix order.
     *
     * @return an unmodifiable list of {@link #size()} tiers, the one each block was pinned on
     */
    public List<Tier> foundOn() {
        return stream.foundOn();
    }

    /**
     * Bytes of GPU memory (and GPU budget) the staging area holds until the close; 0 when every block is on the GPU.
     *
     * @return the staging area's size in bytes, {@code >= 0}
     */
    public long stagingBytes() {
        return stream.stagingBytes();
    }

    /**
     * The number of layers (the layout's).
     *
     * @return the layout's layer count, {@code >= 1}
     */
    public int layers() {
        return layers.size();
    }

    /**
     * Completes when layer {@code layer} of every streamed block is in GPU memory; fails with the copy's error
     * ({@code TransferFailedException}), or with {@link java.util.concurrent.CancellationException} once the stream
     * was closed before it arrived.
     *
     * @param layer the layer's index, in {@code [0, layers())}
     * @return the layer's future, the same object on every call; completed on a kvtier thread, never under the
     *         cache's locks
     * @throws IllegalArgumentException if {@code layer} is out of range
     */
    public CompletableFuture<PrefixLayer> layer(int layer) {
        if (layer < 0 || layer >= layers.size()) {
            throw new IllegalArgumentException("layer must be in [0, " + layers.size() + "), was " + layer);
        }
        return layers.get(layer);
    }

    /** Ends the stream and releases its pins and staging area (see the class comment). Idempotent. */
    @Override
    public void close() {
        stream.close();
    }

    @Override
    public String toString() {
        return "PrefixStream[" + hashes.size() + " blocks, " + layers.size() + " layers, staging " + stagingBytes()
                + " bytes]";
    }
}
