package dev.kvtier.inference;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The Llama forward pass in plain Java float32: token embedding, RMSNorm, rotary position embedding,
 * grouped-query attention, SwiGLU MLP, final norm and LM head, computed as llama2.c's {@code run.c} does (same
 * operations in the same order). Keys and values go to and come from a {@link KeyValueRows}, so the same pass
 * runs over plain arrays ({@link ReferenceDecoder}) and over kvtier's restored pages ({@link KvTierDecoder}).
 *
 * <p>Every position's result depends only on its token, the rows of earlier positions and the weights; the
 * order in which positions and layers are computed ({@link #forward} runs layer by layer over a range) does
 * not change a single bit. Thread-safe: the weights are read only and each call has its own buffers.
 */
public final class LlamaModel {
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT;

    private final LlamaWeights weights;
    private final LlamaConfig config;
    private final float[] ropeCos;
    private final float[] ropeSin;

    /** A model over {@code weights}. */
    public LlamaModel(LlamaWeights weights) {
        this.weights = weights;
        this.config = weights.config();
        int half = config.headSize() / 2;
        ropeCos = new float[config.seqLen() * half];
        ropeSin = new float[config.seqLen() * half];
        for (int pos = 0; pos < config.seqLen(); pos++) {
            for (int i = 0; i < half; i++) {
                // run.c: freq = 1 / powf(10000, head_dim / head_size), head_dim = 2i
                float freq = (float) (1.0 / Math.pow(10000.0f, (2 * i) / (float) config.headSize()));
                float angle = pos * freq;
                ropeCos[pos * half + i] = (float) Math.cos(angle);
                ropeSin[pos * half + i] = (float) Math.sin(angle);
            }
        }
    }

    /** The weights. */
    public LlamaWeights weights() {
        return weights;
    }

    /** The shape. */
    public LlamaConfig config() {
        return config;
    }

    /** Called by {@link #forward} before it computes a layer, on the calling thread. */
    @FunctionalInterface
    public interface LayerGate {
        /** Returns when the rows of positions before the range are readable for {@code layer}. */
        void awaitLayer(int layer);

        /** A gate that never waits. */
        LayerGate OPEN = layer -> { };
    }

    /**
     * Runs {@code tokens[from .. to)} at positions {@code from .. to - 1} through every layer, layer after layer
     * (layer {@code l} of every position, then layer {@code l + 1}), writing their key and value rows into
     * {@code rows}, and returns the logits of position {@code to - 1}.
     *
     * @throws IllegalArgumentException naming the range when it is empty or beyond the sequence length
     */
    public float[] forward(int[] tokens, int from, int to, KeyValueRows rows, LayerGate gate) {
        if (from < 0 || to <= from || to > config.seqLen() || to > tokens.length) {
            throw new IllegalArgumentException("positions [" + from + ", " + to + ") must be non-empty, within "
                    + tokens.length + " tokens and the sequence length " + config.seqLen());
        }
        int dim = config.dim();
        int count = to - from;
        float[] x = new float[count * dim];
        for (int p = 0; p < count; p++) {
            System.arraycopy(weights.tokenEmbedding, tokens[from + p] * dim, x, p * dim, dim);
        }
        Scratch s = new Scratch(config, to);
        for (int layer = 0; layer < config.layers(); layer++) {
            gate.awaitLayer(layer);
            for (int p = 0; p < count; p++) {
                layer(layer, from + p, x, p * dim, rows, s);
            }
        }
        float[] last = new float[dim];
        rmsnorm(last, 0, x, (count - 1) * dim, weights.finalNorm, 0, dim);
        float[] logits = new float[config.vocabSize()];
        matmul(logits, last, 0, weights.classifier, 0, dim, config.vocabSize());
        return logits;
    }

    /** The index of the largest logit (the first on a tie): greedy decoding. */
    public static int argmax(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[best]) {
                best = i;
            }
        }
        return best;
    }

    private static final class Scratch {
        final float[] xb;
        final float[] xb2;
        final float[] q;
        final float[] k;
        final float[] v;
        final float[] hb;
        final float[] hb2;
        final float[] att;

        Scratch(LlamaConfig c, int positions) {
            xb = new float[c.dim()];
            xb2 = new float[c.dim()];
            q = new float[c.dim()];
            k = new float[c.kvDim()];
            v = new float[c.kvDim()];
            hb = new float[c.hiddenDim()];
            hb2 = new float[c.hiddenDim()];
            att = new float[positions];
        }
    }

    private void layer(int l, int pos, float[] x, int xOffset, KeyValueRows rows, Scratch s) {
        int dim = config.dim();
        int kvDim = config.kvDim();
        int hidden = config.hiddenDim();
        int headSize = config.headSize();
        rmsnorm(s.xb, 0, x, xOffset, weights.attentionNorm, l * dim, dim);
        matmul(s.q, s.xb, 0, weights.wq, (long) l * dim * dim, dim, dim);
        matmul(s.k, s.xb, 0, weights.wk, (long) l * kvDim * dim, dim, kvDim);
        matmul(s.v, s.xb, 0, weights.wv, (long) l * kvDim * dim, dim, kvDim);
        rope(s.q, dim, pos, headSize);
        rope(s.k, kvDim, pos, headSize);
        MemorySegment keyRow = rows.key(l, pos);
        MemorySegment valueRow = rows.value(l, pos);
        for (int i = 0; i < kvDim; i++) {
            keyRow.setAtIndex(FLOAT, i, s.k[i]);
            valueRow.setAtIndex(FLOAT, i, s.v[i]);
        }
        float scale = (float) Math.sqrt(headSize);
        int group = config.queriesPerKvHead();
        for (int h = 0; h < config.heads(); h++) {
            int qOffset = h * headSize;
            long kvOffset = (long) (h / group) * headSize;
            for (int t = 0; t <= pos; t++) {
                MemorySegment key = rows.key(l, t);
                float score = 0;
                for (int i = 0; i < headSize; i++) {
                    score += s.q[qOffset + i] * key.getAtIndex(FLOAT, kvOffset + i);
                }
                s.att[t] = score / scale;
            }
            softmax(s.att, pos + 1);
            java.util.Arrays.fill(s.xb, qOffset, qOffset + headSize, 0f);
            for (int t = 0; t <= pos; t++) {
                MemorySegment value = rows.value(l, t);
                float a = s.att[t];
                for (int i = 0; i < headSize; i++) {
                    s.xb[qOffset + i] += a * value.getAtIndex(FLOAT, kvOffset + i);
                }
            }
        }
        matmul(s.xb2, s.xb, 0, weights.wo, (long) l * dim * dim, dim, dim);
        for (int i = 0; i < dim; i++) {
            x[xOffset + i] += s.xb2[i];
        }
        rmsnorm(s.xb, 0, x, xOffset, weights.ffnNorm, l * dim, dim);
        matmul(s.hb, s.xb, 0, weights.w1, (long) l * hidden * dim, dim, hidden);
        matmul(s.hb2, s.xb, 0, weights.w3, (long) l * hidden * dim, dim, hidden);
        for (int i = 0; i < hidden; i++) {
            float val = s.hb[i];
            val *= (float) (1.0 / (1.0 + Math.exp(-val)));
            s.hb[i] = val * s.hb2[i];
        }
        matmul(s.xb, s.hb, 0, weights.w2, (long) l * dim * hidden, hidden, dim);
        for (int i = 0; i < dim; i++) {
            x[xOffset + i] += s.xb[i];
        }
    }

    /** Rotates pairs {@code (2i, 2i + 1)} of every head in {@code vector[0 .. width)} by the angles of {@code pos}. */
    private void rope(float[] vector, int width, int pos, int headSize) {
        int half = headSize / 2;
        for (int i = 0; i < width; i += 2) {
            int pair = (i % headSize) / 2;
            float fcr = ropeCos[pos * half + pair];
            float fci = ropeSin[pos * half + pair];
            float v0 = vector[i];
            float v1 = vector[i + 1];
            vector[i] = v0 * fcr - v1 * fci;
            vector[i + 1] = v0 * fci + v1 * fcr;
        }
    }

    private static void rmsnorm(float[] out, int outOffset, float[] x, int xOffset, float[] weight, int wOffset, int size) {
        float ss = 0;
        for (int j = 0; j < size; j++) {
            ss += x[xOffset + j] * x[xOffset + j];
        }
        ss /= size;
        ss += 1e-5f;
        ss = (float) (1.0 / Math.sqrt(ss));
        for (int j = 0; j < size; j++) {
            out[outOffset + j] = weight[wOffset + j] * (ss * x[xOffset + j]);
        }
    }

    private static void softmax(float[] x, int size) {
        float max = x[0];
        for (int i = 1; i < size; i++) {
            max = Math.max(max, x[i]);
        }
        float sum = 0;
        for (int i = 0; i < size; i++) {
            x[i] = (float) Math.exp(x[i] - max);
            sum += x[i];
        }
        for (int i = 0; i < size; i++) {
            x[i] /= sum;
        }
    }

    /** {@code out[0 .. d) = W (d, n) @ x[xOffset .. xOffset + n)}, W starting at {@code wOffset}. */
    private static void matmul(float[] out, float[] x, int xOffset, float[] w, long wOffset, int n, int d) {
        for (int i = 0; i < d; i++) {
            int row = Math.toIntExact(wOffset + (long) i * n);
            float val = 0;
            for (int j = 0; j < n; j++) {
                val += w[row + j] * x[xOffset + j];
            }
            out[i] = val;
        }
    }
}
