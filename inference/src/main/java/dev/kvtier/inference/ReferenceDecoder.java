package dev.kvtier.inference;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The decoder the kvtier-backed one is checked against: keys and values in plain {@code float[]} arrays of
 * the request, every prompt token computed one position at a time, nothing cached between requests, kvtier not
 * used. Thread-safe: each call has its own arrays.
 */
public final class ReferenceDecoder {
    private final LlamaModel model;

    /** A decoder running {@code model}. */
    public ReferenceDecoder(LlamaModel model) {
        this.model = model;
    }

    /**
     * Computes {@code prompt} and then {@code newTokens} greedy tokens.
     *
     * @throws IllegalArgumentException when the prompt is empty or prompt and new tokens exceed the sequence length
     */
    public Generation generate(int[] prompt, int newTokens) {
        long start = System.nanoTime();
        LlamaConfig config = model.config();
        int capacity = Requests.requireFits(config, prompt, newTokens);
        ArrayRows rows = new ArrayRows(config, capacity);
        int[] tokens = java.util.Arrays.copyOf(prompt, capacity + 1);
        float[] logits = null;
        for (int pos = 0; pos < prompt.length; pos++) {
            logits = model.forward(tokens, pos, pos + 1, rows, LlamaModel.LayerGate.OPEN);
        }
        int[] generated = new int[newTokens];
        List<float[]> chosenFrom = new ArrayList<>(newTokens);
        long firstToken = 0;
        for (int i = 0; i < newTokens; i++) {
            if (i > 0) {
                int pos = prompt.length + i - 1;
                logits = model.forward(tokens, pos, pos + 1, rows, LlamaModel.LayerGate.OPEN);
            }
            generated[i] = LlamaModel.argmax(logits);
            tokens[prompt.length + i] = generated[i];
            chosenFrom.add(logits);
            if (i == 0) {
                firstToken = System.nanoTime() - start;
            }
        }
        return new Generation(generated, chosenFrom, 0, prompt.length, 0, firstToken, System.nanoTime() - start);
    }

    /** One {@code float[]} per layer for keys and one for values, {@code positions x kvDim}. */
    private static final class ArrayRows implements KeyValueRows {
        private final MemorySegment[][] keys;
        private final MemorySegment[][] values;

        ArrayRows(LlamaConfig config, int positions) {
            int kvDim = config.kvDim();
            keys = new MemorySegment[config.layers()][positions];
            values = new MemorySegment[config.layers()][positions];
            for (int l = 0; l < config.layers(); l++) {
                MemorySegment k = MemorySegment.ofArray(new float[positions * kvDim]);
                MemorySegment v = MemorySegment.ofArray(new float[positions * kvDim]);
                for (int p = 0; p < positions; p++) {
                    keys[l][p] = k.asSlice((long) p * kvDim * Float.BYTES, (long) kvDim * Float.BYTES);
                    values[l][p] = v.asSlice((long) p * kvDim * Float.BYTES, (long) kvDim * Float.BYTES);
                }
            }
        }

        @Override
        public MemorySegment key(int layer, int position) {
            return keys[layer][position];
        }

        @Override
        public MemorySegment value(int layer, int position) {
            return values[layer][position];
        }
    }
}
