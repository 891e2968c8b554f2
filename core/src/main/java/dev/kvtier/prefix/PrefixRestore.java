package dev.kvtier.prefix;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A prefix being made resident layer by layer, from {@link PrefixBlockCache#ensurePrefixResidentByLayer}:
 * {@link #layer(int) layer(l)} completes, with the blocks and their pages on the target tier, as soon as
 * layer {@code l} of every block is in place, so attention on layer 0 can start while later layers still
 * arrive; {@link #pinned()} completes when every layer is in place, with the {@link PrefixPin} that holds
 * the blocks. The layers are copied in order, one batched transfer per layer.
 *
 * <p>The pages a layer future hands over stay valid until the pin is closed: always take {@link #pinned()}
 * and close its pin when done (if the restore failed there is nothing to close). On a failure every block
 * stays where it was, and every layer future not yet complete, and {@link #pinned()}, complete exceptionally
 * with the error; a layer already complete was in place, but its pages are not held (do not use them).
 *
 * <p>Completing or cancelling the futures handed out does not affect the restore. Thread-safe.
 */
public final class PrefixRestore {
    private final List<CompletableFuture<List<ResidentBlock>>> layers;
    private final CompletableFuture<PrefixPin> pinned;

    PrefixRestore(List<CompletableFuture<List<ResidentBlock>>> layers, CompletableFuture<PrefixPin> pinned) {
        this.layers = List.copyOf(layers);
        this.pinned = pinned;
    }

    /** The number of layers (the layout's). */
    public int layers() {
        return layers.size();
    }

    /**
     * Completes when layer {@code layer} of every block of the prefix is in place, with the blocks.
     *
     * @throws IllegalArgumentException if {@code layer} is out of range
     */
    public CompletableFuture<List<ResidentBlock>> layer(int layer) {
        if (layer < 0 || layer >= layers.size()) {
            throw new IllegalArgumentException("layer must be in [0, " + layers.size() + "), was " + layer);
        }
        return layers.get(layer);
    }

    /** Completes when every layer is in place and the blocks are pinned, with the pin (close it when done). */
    public CompletableFuture<PrefixPin> pinned() {
        return pinned;
    }
}
