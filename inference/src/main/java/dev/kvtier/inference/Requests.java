package dev.kvtier.inference;

/** Argument checks both decoders share. */
final class Requests {
    private Requests() {
    }

    /**
     * The positions a request needs (its prompt and every generated token but the last, which is never fed).
     *
     * @throws IllegalArgumentException naming the sizes when the prompt is empty, a token is outside the
     *                                  vocabulary, or the request exceeds the sequence length
     */
    static int requireFits(LlamaConfig config, int[] prompt, int newTokens) {
        if (prompt == null || prompt.length == 0) {
            throw new IllegalArgumentException("the prompt must hold at least one token");
        }
        if (newTokens < 1) {
            throw new IllegalArgumentException("newTokens must be >= 1, was " + newTokens);
        }
        for (int i = 0; i < prompt.length; i++) {
            if (prompt[i] < 0 || prompt[i] >= config.vocabSize()) {
                throw new IllegalArgumentException("prompt token " + i + " is " + prompt[i] + ", outside the vocabulary [0, "
                        + config.vocabSize() + ")");
            }
        }
        int positions = prompt.length + newTokens - 1;
        if (positions > config.seqLen()) {
            throw new IllegalArgumentException("a prompt of " + prompt.length + " tokens and " + newTokens
                    + " new tokens need " + positions + " positions, more than the sequence length " + config.seqLen());
        }
        return positions;
    }
}
