package dev.kvtier.bench.sim;

import dev.kvtier.ByteSizes;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The shape of a transformer's KV cache: how many bytes one token's keys and values take across all
 * layers. Immutable.
 *
 * @param name       preset name, or {@code "custom"} when a dimension was overridden
 * @param layers     transformer layers
 * @param kvHeads    key/value heads per layer (after grouped-query sharing)
 * @param headDim    dimension of one head
 * @param dtypeBytes bytes per element (2 for bf16/fp16)
 */
public record ModelShape(String name, int layers, int kvHeads, int headDim, int dtypeBytes) {

    /** Small enough that the default run finishes in seconds on a 2-core machine with the host backend. */
    public static final ModelShape TINY = new ModelShape("tiny", 2, 2, 64, 2);
    /** Llama 3.1 8B: 32 layers, 8 KV heads of 128, bf16 -- 128 KiB per token. */
    public static final ModelShape LLAMA_3_1_8B = new ModelShape("llama-3.1-8b", 32, 8, 128, 2);
    /** Llama 3.1 70B: 80 layers, 8 KV heads of 128, bf16 -- 320 KiB per token. */
    public static final ModelShape LLAMA_3_1_70B = new ModelShape("llama-3.1-70b", 80, 8, 128, 2);

    /** The presets {@code --model} accepts. */
    public static final List<ModelShape> PRESETS = List.of(TINY, LLAMA_3_1_8B, LLAMA_3_1_70B);

    public ModelShape {
        positive("layers", layers);
        positive("kvHeads", kvHeads);
        positive("headDim", headDim);
        positive("dtypeBytes", dtypeBytes);
    }

    private static void positive(String what, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(what + " must be positive, got " + value);
        }
    }

    /** The preset of that name (case-insensitive), if any. */
    public static Optional<ModelShape> preset(String name) {
        String wanted = name.toLowerCase(Locale.ROOT);
        return PRESETS.stream().filter(p -> p.name.equals(wanted)).findFirst();
    }

    /** Bytes of one token's KV: 2 (K and V) x layers x kv heads x head dim x dtype bytes. */
    public long bytesPerToken() {
        return 2L * layers * kvHeads * headDim * dtypeBytes;
    }

    /** A one-line description, e.g. {@code "tiny: 2 layers x 2 kv heads x 64 head dim x 2 B = 1 KiB/token"}. */
    public String describe() {
        return name + ": " + layers + " layers x " + kvHeads + " kv heads x " + headDim + " head dim x "
                + dtypeBytes + " B = " + ByteSizes.format(bytesPerToken()) + "/token";
    }
}
