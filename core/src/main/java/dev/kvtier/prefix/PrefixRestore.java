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
 * with the error ({@code TransferFailedException} with the CUDA call or I/O error as its cause, when a copy failed
 * or did not complete within {@code KvTierConfig.transferTimeout}); a layer already complete was in place, but its
 * pages are not held (do not use them).
 *
 * <p><b>Where dependents run.</b> The futures are completed on a kvtier thread that holds none of the cache's locks
 * and is outside its operations, never on the restore's own thread: a dependent may call the cache (restore, pin,
 * remove, read the same blocks) or close it, and the restore never waits for a dependent. The layers are completed
 * in order and {@link #pinned()} last, one after another (a dependent that blocks delays the completions after it,
 * not the restore or other calls; waiting in a dependent for a later future of the same restore never ends). A
 * layer completes as soon as its bytes are in place, before the restore commits the moves (so that attention on
 * layer 0 overlaps the copies of later layers); a call on these blocks from a dependent then waits until the restore
 * committed and finds them there. {@link #pinned()} completes after the restore released its locks.
 *
 * <p><b>Cancelling.</b> Completing, cancelling or timing out ({@code orTimeout}) a layer future does not affect the
 * restore. Cancelling or timing out {@link #pinned()} (or completing it yourself), before, during or after the
 * restore, releases its pins as soon as the restore has taken them: nobody else could close them. The restore itself
 * runs to its end either way. Thread-safe.
 */
public final class PrefixRestore {
    private final List<CompletableFuture<List<ResidentBlock>>> layers;
    private final CompletableFuture<PrefixPin> pinned;

    PrefixRestore(List<CompletableFuture<List<ResidentBlock>>> layers, CompletableFuture<PrefixPin> pinned) {
        this.layers = List.copyOf(layers);
        this.pinned = pinned;
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
     * Completes when layer {@code layer} of every block of the prefix is in place, with the blocks.
     *
     * @param layer the layer, in {@code [0, layers())}
     * @return the future of the layer; it holds the same blocks for every layer, in prefix order
     * @throws IllegalArgumentException if {@code layer} is out of range
     */
    public CompletableFuture<List<ResidentBlock>> layer(int layer) {
        if (layer < 0 || layer >= layers.size()) {
            throw new IllegalArgumentException("layer must be in [0, " + layers.size() + "), was " + layer);
        }
        return layers.get(layer);
    }

    /**
     * Completes when every layer is in place and the blocks are pinned, with the pin (close it when done).
     *
     * @return the future of the pin, which the caller owns and closes once it completes; cancelling it releases the
     *         pins
     */
    public CompletableFuture<PrefixPin> pinned() {
        return pinned;
    }
}
