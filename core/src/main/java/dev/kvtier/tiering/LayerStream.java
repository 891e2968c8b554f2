package dev.kvtier.tiering;

import dev.kvtier.store.Tier;
import dev.kvtier.exec.PageAllocation;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * The engine side of {@code dev.kvtier.prefix.PrefixStream}: a chain of blocks pinned where they are, streamed layer by
 * layer through a GPU staging area of two slots (each one layer of every block not on the GPU). Layer {@code l} is
 * copied into slot {@code l % 2} once layer {@code l - 2} was released; its future completes, on a completion thread,
 * with each block's runs of that layer (in place for a block on the GPU, in the slot otherwise). The copies of one
 * stream run one after another on a kvtier thread, each inside the gate and bounded by the transfer timeout.
 * {@link #close} releases the pins and the staging area once no copy of this stream can still write it.
 *
 * <p>Thread-safe. No caller code runs under this object's monitor: futures are completed through the stream's
 * completion sequence.
 */
public final class LayerStream implements AutoCloseable {
    /** Slots of the staging area: layer {@code l + 1} is copied while the runtime computes layer {@code l}. */
    static final int SLOTS = 2;

    private final OperationGate gate;
    private final TierMemories memories;
    private final TieringEngine engine;
    private final Executor copier;
    private final Completions.Sequence completions;
    private final Runnable onClosed;
    private final List<Tier> foundOn;
    private final List<String> keys;
    private final List<PageAllocation> placements;
    private final long[][] offsets;
    private final long[][] lengths;
    /** The blocks not on the GPU (indices into the chain) and their sources: what each layer copies. */
    private final int[] staged;
    private final List<PageAllocation> stagedSources;
    private final long slotBytes;
    private final PageAllocation staging; // null when nothing is staged
    private final Runnable releaseStaging;
    private final Runnable unpin;
    private final List<CompletableFuture<List<List<MemorySegment>>>> layers;

    // Guarded by this.
    private final boolean[] released;
    private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
    private boolean draining;
    private boolean closed;
    /** Set by the copier only: a failed copy ends the stream (later layers fail with it). */
    private volatile Throwable failure;

    LayerStream(OperationGate gate, TierMemories memories, TieringEngine engine, Executor copier,
                Completions.Sequence completions, Runnable onClosed, PrefixChains.PinnedInPlace pinned, long[][] offsets,
                long[][] lengths, long slotBytes, PageAllocation staging, Runnable releaseStaging) {
        this.gate = gate;
        this.memories = memories;
        this.engine = engine;
        this.copier = copier;
        this.completions = completions;
        this.onClosed = onClosed;
        this.foundOn = pinned.tiers();
        List<String> names = new ArrayList<>(pinned.blocks().size());
        for (Segment block : pinned.blocks()) {
            names.add(block.key);
        }
        this.keys = List.copyOf(names);
        this.placements = pinned.placements();
        this.offsets = offsets;
        this.lengths = lengths;
        this.unpin = pinned.unpin();
        int count = 0;
        for (Tier tier : foundOn) {
            count += tier == Tier.GPU ? 0 : 1;
        }
        this.staged = new int[count];
        List<PageAllocation> sources = new ArrayList<>(count);
        for (int i = 0, j = 0; i < foundOn.size(); i++) {
            if (foundOn.get(i) != Tier.GPU) {
                staged[j++] = i;
                sources.add(placements.get(i));
            }
        }
        this.stagedSources = List.copyOf(sources);
        this.slotBytes = slotBytes;
        this.staging = staging;
        this.releaseStaging = releaseStaging;
        this.layers = new ArrayList<>(offsets.length);
        for (int l = 0; l < offsets.length; l++) {
            layers.add(new CompletableFuture<>());
        }
        this.released = new boolean[offsets.length];
    }

    /** Starts the copies of the first layers (or completes every layer, when nothing is staged). */
    void start() {
        if (staged.length == 0) {
            for (int l = 0; l < layers.size(); l++) {
                int layer = l;
                List<List<MemorySegment>> view = view(layer);
                completions.post(() -> layers.get(layer).complete(view));
            }
            return;
        }
        for (int l = 0; l < Math.min(SLOTS, layers.size()); l++) {
            int layer = l;
            enqueue(() -> copy(layer));
        }
    }

    /** Each block's tier when the stream pinned it, in chain order. */
    public List<Tier> foundOn() {
        return foundOn;
    }

    /** Bytes of GPU memory the staging area holds (0 when every block is on the GPU). */
    public long stagingBytes() {
        return staging == null ? 0 : staging.sizeBytes();
    }

    /** Layer {@code layer}'s future: each block's runs of that layer, its ranges back to back. */
    public CompletableFuture<List<List<MemorySegment>>> layer(int layer) {
        return layers.get(layer);
    }

    /** The number of layers. */
    public int layers() {
        return layers.size();
    }

    /**
     * The runtime is done with layer {@code layer}'s pages: its slot takes layer {@code layer + 2}. Idempotent.
     *
     * @throws IllegalStateException if the layer has not arrived (its pages were never handed out)
     */
    public void release(int layer) {
        CompletableFuture<List<List<MemorySegment>>> future = layers.get(layer);
        if (!future.isDone() || future.isCompletedExceptionally()) {
            throw new IllegalStateException("layer " + layer + " has not arrived: nothing to release");
        }
        synchronized (this) {
            if (released[layer] || closed) {
                return;
            }
            released[layer] = true;
        }
        int next = layer + SLOTS;
        if (staged.length > 0 && next < layers.size()) {
            enqueue(() -> copy(next));
        }
    }

    /**
     * Ends the stream: the layers not yet arrived fail with a {@link CancellationException}, and the pins and the
     * staging area are released once no copy of this stream can still write it: before this returns when the copier
     * is idle, else by the copier as soon as its copy in flight ends (within the transfer timeout). Idempotent.
     */
    @Override
    public void close() {
        end(new CancellationException("the prefix stream was closed"));
    }

    /** Closes with {@code cause} as the failure of the layers not yet arrived (the cache closing, say). */
    void end(Throwable cause) {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        failFrom(0, cause);
        onClosed.run();
        synchronized (this) {
            queue.add(this::releaseAll);
            if (draining) {
                return; // a copy is running: the copier releases once it ends
            }
            draining = true;
        }
        drain(); // no copy running: the copies queued find the stream closed, and the release is done on return
    }

    /** The pins first, then the staging area: once its bytes are back in the budget, the blocks are unpinned too. */
    private void releaseAll() {
        try {
            unpin.run();
        } finally {
            if (releaseStaging != null) {
                releaseStaging.run();
            }
        }
    }

    /** Copies layer {@code layer} of every staged block into its slot (on the copier; copies run one at a time). */
    private void copy(int layer) {
        synchronized (this) {
            if (closed) {
                return;
            }
        }
        if (failure != null) {
            return;
        }
        if (!gate.tryEnter()) {
            failure = new IllegalStateException("the cache was closed while streaming layer " + layer);
            failFrom(layer, failure);
            return;
        }
        try {
            long[] starts = new long[staged.length];
            long layerBytes = layerBytes(layer);
            for (int j = 0; j < staged.length; j++) {
                starts[j] = (layer % SLOTS) * slotBytes + j * layerBytes;
            }
            engine.countedCall(() -> {
                try {
                    CompletableFuture<Void> copy = memories.gatherRanges(stagedSources, offsets[layer], lengths[layer],
                            staging, starts);
                    memories.awaitTransfer(copy, List.of(staging));
                } catch (RuntimeException | InternalError e) {
                    int first = staged[0];
                    throw Failures.copyFailed(keys.get(first), foundOn.get(first), Tier.GPU, Failures.cause(e));
                }
                return null;
            });
        } catch (RuntimeException e) {
            failure = e;
        } finally {
            gate.exit();
        }
        if (failure != null) {
            failFrom(layer, failure);
            return;
        }
        List<List<MemorySegment>> view = view(layer);
        completions.post(() -> layers.get(layer).complete(view));
    }

    /** Fails the futures of layers {@code from ..} not yet complete (through the sequence: after those posted). */
    private void failFrom(int from, Throwable cause) {
        List<CompletableFuture<List<List<MemorySegment>>>> left = layers.subList(from, layers.size());
        completions.post(() -> {
            for (CompletableFuture<List<List<MemorySegment>>> future : left) {
                future.completeExceptionally(cause);
            }
        });
    }

    private long layerBytes(int layer) {
        long bytes = 0;
        for (long length : lengths[layer]) {
            bytes += length;
        }
        return bytes;
    }

    /** Each block's runs of layer {@code layer}: in place for a block on the GPU, in its slot otherwise. */
    private List<List<MemorySegment>> view(int layer) {
        List<List<MemorySegment>> view = new ArrayList<>(foundOn.size());
        long layerBytes = layerBytes(layer);
        for (int i = 0, j = 0; i < foundOn.size(); i++) {
            if (foundOn.get(i) == Tier.GPU) {
                List<MemorySegment> runs = new ArrayList<>();
                for (int r = 0; r < offsets[layer].length; r++) {
                    runs.addAll(slice(placements.get(i).runs(), offsets[layer][r], lengths[layer][r]));
                }
                view.add(List.copyOf(runs));
            } else {
                view.add(slice(staging.runs(), (layer % SLOTS) * slotBytes + j++ * layerBytes, layerBytes));
            }
        }
        return List.copyOf(view);
    }

    /** The runs covering bytes {@code [offset, offset + length)} of a run list, as slices of its runs. */
    private static List<MemorySegment> slice(List<MemorySegment> runs, long offset, long length) {
        List<MemorySegment> slices = new ArrayList<>(2);
        long skip = offset;
        long left = length;
        for (int i = 0; i < runs.size() && left > 0; i++) {
            MemorySegment run = runs.get(i);
            if (skip >= run.byteSize()) {
                skip -= run.byteSize();
                continue;
            }
            long take = Math.min(run.byteSize() - skip, left);
            slices.add(run.asSlice(skip, take));
            left -= take;
            skip = 0;
        }
        return List.copyOf(slices);
    }

    /** Runs {@code task} after the tasks enqueued before it, on the copier (here, once the copier is shut down). */
    private void enqueue(Runnable task) {
        synchronized (this) {
            queue.add(task);
            if (draining) {
                return;
            }
            draining = true;
        }
        try {
            copier.execute(this::drain);
        } catch (RejectedExecutionException shutDown) {
            drain(); // the cache is closing: every task finds the gate closed and copies nothing
        }
    }

    private void drain() {
        while (true) {
            Runnable task;
            synchronized (this) {
                task = queue.poll();
                if (task == null) {
                    draining = false;
                    return;
                }
            }
            task.run();
        }
    }
}
