package dev.kvtier.prefix;

/**
 * The geometry of a KV block as the runtime lays it out: how many tokens a block holds, how many bytes, and
 * optionally where each layer's K and V regions lie inside those bytes (what lets a restore complete layer by
 * layer, {@link PrefixBlockCache#ensurePrefixResidentByLayer}). Every block of a {@link PrefixBlockCache}
 * has the same layout. Immutable, thread-safe.
 *
 * <h2>Layer orders</h2>
 * With {@code L} layers and regions of {@code R} bytes (one K and one V region per layer, so
 * {@code bytesPerBlock = 2 * L * R}):
 * <pre>
 *   LAYER_MAJOR   [layer 0: K | V][layer 1: K | V] ... [layer L-1: K | V]
 *                 layer l = one range [2lR, 2lR + 2R)
 *   KV_MAJOR      [K: layer 0 .. L-1][V: layer 0 .. L-1]
 *                 layer l = two ranges [lR, lR + R) and [(L + l)R, (L + l)R + R)
 * </pre>
 *
 * @param tokensPerBlock tokens in a block, {@code >= 1}
 * @param bytesPerBlock  bytes of a block, {@code >= 1}
 * @param layers         layers of the per-layer layout, 0 to {@value #MAX_LAYERS}; 0 when none is declared
 * @param order          how layers lie in a block; null exactly when {@code layers} is 0
 */
public record BlockLayout(int tokensPerBlock, long bytesPerBlock, int layers, LayerOrder order) {

    /**
     * The most layers a layout may declare: far above any model (the deepest have a few hundred), and low enough
     * that a view's per-layer tables (two small arrays per layer) stay small.
     */
    public static final int MAX_LAYERS = 4096;

    /** Where the K and V regions of each layer lie in a block (see the class comment). */
    public enum LayerOrder {
        /** Layer after layer, each layer's K region followed by its V region. */
        LAYER_MAJOR,
        /** All K regions (layer 0 first), then all V regions. */
        KV_MAJOR
    }

    /**
     * Checks the geometry.
     *
     * @throws IllegalArgumentException naming the value when a count is out of range, {@code order} does not
     *                                  match {@code layers}, {@code layers} is above {@link #MAX_LAYERS}, or
     *                                  {@code bytesPerBlock} is not {@code 2 * layers} equal regions
     */
    public BlockLayout {
        if (tokensPerBlock < 1) {
            throw new IllegalArgumentException("tokensPerBlock must be >= 1, was " + tokensPerBlock);
        }
        if (bytesPerBlock < 1) {
            throw new IllegalArgumentException("bytesPerBlock must be >= 1, was " + bytesPerBlock);
        }
        if (layers < 0 || layers > MAX_LAYERS) {
            throw new IllegalArgumentException("layers must be in [0, " + MAX_LAYERS + "], was " + layers);
        }
        if ((layers == 0) != (order == null)) {
            throw new IllegalArgumentException("order must be given exactly when layers > 0, was layers=" + layers
                    + ", order=" + order);
        }
        if (layers > 0 && bytesPerBlock % (2L * layers) != 0) {
            throw new IllegalArgumentException("bytesPerBlock must be 2 x layers equal K/V regions, was " + bytesPerBlock
                    + " bytes for " + layers + " layers");
        }
    }

    /**
     * Blocks of {@code tokensPerBlock} tokens and {@code bytesPerBlock} bytes, with no per-layer layout.
     *
     * @param tokensPerBlock tokens in a block, {@code >= 1}
     * @param bytesPerBlock  bytes of a block, {@code >= 1}
     * @return a layout with no layers declared
     */
    public static BlockLayout of(int tokensPerBlock, long bytesPerBlock) {
        return new BlockLayout(tokensPerBlock, bytesPerBlock, 0, null);
    }

    /**
     * Blocks of {@code layers} layers, each a K and a V region of {@code regionBytes}, laid out in {@code order}.
     *
     * @param tokensPerBlock tokens in a block, {@code >= 1}
     * @param layers         layers of the model this rank holds, in [1, {@link #MAX_LAYERS}]
     * @param regionBytes    bytes of one K (or V) region of one layer, {@code >= 1}
     * @param order          how the regions lie in a block
     * @return a layout of {@code 2 * layers * regionBytes} bytes per block
     * @throws IllegalArgumentException naming the value when {@code layers} is not in [1, {@link #MAX_LAYERS}],
     *                                  {@code regionBytes} is below 1, the block's size overflows a long, or
     *                                  {@code order} is null
     */
    public static BlockLayout layered(int tokensPerBlock, int layers, long regionBytes, LayerOrder order) {
        if (layers < 1 || layers > MAX_LAYERS || regionBytes < 1) {
            throw new IllegalArgumentException("layers must be in [1, " + MAX_LAYERS + "] and regionBytes >= 1, were "
                    + layers + " and " + regionBytes);
        }
        if (order == null) {
            throw new IllegalArgumentException("order must not be null");
        }
        if (regionBytes > Long.MAX_VALUE / (2L * layers)) {
            throw new IllegalArgumentException("2 x " + layers + " layers x " + regionBytes
                    + " bytes per region overflows a block's size");
        }
        return new BlockLayout(tokensPerBlock, 2L * layers * regionBytes, layers, order);
    }

    /**
     * Whether a per-layer layout was declared.
     *
     * @return true when {@link #layers()} is above 0
     */
    public boolean isLayered() {
        return layers > 0;
    }

    /**
     * Bytes of one K (or V) region of one layer.
     *
     * @return the region size in bytes, {@code bytesPerBlock / (2 * layers)}
     */
    public long regionBytes() {
        requireLayered();
        return bytesPerBlock / (2L * layers);
    }

    /**
     * The start offsets, in a block, of the byte ranges holding layer {@code layer} (contiguous ranges merged).
     *
     * @param layer the layer, in {@code [0, layers)}
     * @return a new array of one offset ({@link LayerOrder#LAYER_MAJOR}) or two ({@link LayerOrder#KV_MAJOR}),
     *         ascending
     */
    public long[] layerOffsets(int layer) {
        requireLayer(layer);
        long r = regionBytes();
        return switch (order) {
            case LAYER_MAJOR -> new long[] {2L * layer * r};
            case KV_MAJOR -> new long[] {layer * r, ((long) layers + layer) * r};
        };
    }

    /**
     * The lengths of the ranges of {@link #layerOffsets}, in the same order.
     *
     * @param layer the layer, in {@code [0, layers)}
     * @return a new array as long as {@link #layerOffsets}'s, in bytes
     */
    public long[] layerLengths(int layer) {
        requireLayer(layer);
        long r = regionBytes();
        return switch (order) {
            case LAYER_MAJOR -> new long[] {2 * r};
            case KV_MAJOR -> new long[] {r, r};
        };
    }

    private void requireLayered() {
        if (!isLayered()) {
            throw new IllegalStateException("this layout declares no layers: " + this
                    + " (use BlockLayout.layered to declare them)");
        }
    }

    private void requireLayer(int layer) {
        requireLayered();
        if (layer < 0 || layer >= layers) {
            throw new IllegalArgumentException("layer must be in [0, " + layers + "), was " + layer);
        }
    }
}
