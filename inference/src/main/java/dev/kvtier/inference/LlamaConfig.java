package dev.kvtier.inference;

/**
 * The shape of a Llama-architecture decoder: the seven numbers of a llama2.c checkpoint header plus whether the
 * classifier shares the token embedding. Immutable, thread-safe.
 *
 * @param dim              width of the residual stream
 * @param hiddenDim        width of the SwiGLU MLP
 * @param layers           transformer layers
 * @param heads            query heads; {@code dim} must be a multiple
 * @param kvHeads          key/value heads (grouped-query attention); {@code heads} must be a multiple
 * @param vocabSize        vocabulary size (a byte-level vocabulary needs at least 256)
 * @param seqLen           longest sequence (prompt and generated tokens together)
 * @param sharedClassifier whether the LM head is the token embedding (llama2.c: a positive vocabulary size)
 */
public record LlamaConfig(int dim, int hiddenDim, int layers, int heads, int kvHeads, int vocabSize, int seqLen,
        boolean sharedClassifier) {

    /** Four layers of width 64 (about 214 thousand parameters): what the tests use. */
    public static final LlamaConfig TINY = new LlamaConfig(64, 192, 4, 4, 2, ByteVocabulary.SIZE, 1024, true);

    /** Six layers of width 128 (about 1.25 million parameters, six times {@link #TINY}): what the decoder comparison runs. */
    public static final LlamaConfig SMALL = new LlamaConfig(128, 384, 6, 8, 4, ByteVocabulary.SIZE, 2048, false);

    /** @throws IllegalArgumentException naming the value when a size is not positive or the heads do not divide */
    public LlamaConfig {
        requirePositive("dim", dim);
        requirePositive("hiddenDim", hiddenDim);
        requirePositive("layers", layers);
        requirePositive("heads", heads);
        requirePositive("kvHeads", kvHeads);
        requirePositive("vocabSize", vocabSize);
        requirePositive("seqLen", seqLen);
        if (dim % heads != 0 || (dim / heads) % 2 != 0) {
            throw new IllegalArgumentException("dim must be heads x an even head size, was dim=" + dim + ", heads=" + heads);
        }
        if (heads % kvHeads != 0) {
            throw new IllegalArgumentException("heads must be a multiple of kvHeads, was heads=" + heads + ", kvHeads=" + kvHeads);
        }
    }

    /** Width of one attention head. */
    public int headSize() {
        return dim / heads;
    }

    /** Width of one position's keys (or values) over all key/value heads, in floats. */
    public int kvDim() {
        return kvHeads * headSize();
    }

    /** How many query heads share one key/value head. */
    public int queriesPerKvHead() {
        return heads / kvHeads;
    }

    /** The number of float32 parameters (what a checkpoint holds, less llama2.c's unused RoPE tables). */
    public long parameterCount() {
        long perLayer = 2L * dim + (long) dim * dim * 2 + (long) dim * kvDim() * 2 + 3L * dim * hiddenDim;
        return (long) vocabSize * dim * (sharedClassifier ? 1 : 2) + layers * perLayer + dim;
    }

    private static void requirePositive(String name, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + " must be >= 1, was " + value);
        }
    }
}
