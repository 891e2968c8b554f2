package dev.kvtier.inference;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.SplittableRandom;

/**
 * The float32 weights of a {@link LlamaConfig}-shaped decoder, in llama2.c's layout: matrices row-major
 * {@code (out, in)}, each per-layer tensor the layers' matrices end to end. Built by a seeded generator
 * ({@link #generate}) or read from a llama2.c checkpoint ({@link #load}). The arrays are shared, never copied:
 * nobody writes them after construction. Immutable after construction, thread-safe.
 */
public final class LlamaWeights {
    final LlamaConfig config;
    final float[] tokenEmbedding;   // (vocab, dim)
    final float[] attentionNorm;    // (layers, dim)
    final float[] wq;               // (layers, dim, dim)
    final float[] wk;               // (layers, kvDim, dim)
    final float[] wv;               // (layers, kvDim, dim)
    final float[] wo;               // (layers, dim, dim)
    final float[] ffnNorm;          // (layers, dim)
    final float[] w1;               // (layers, hidden, dim)
    final float[] w2;               // (layers, dim, hidden)
    final float[] w3;               // (layers, hidden, dim)
    final float[] finalNorm;        // (dim)
    final float[] classifier;       // (vocab, dim): tokenEmbedding when shared
    private final String fingerprint;

    private LlamaWeights(LlamaConfig config, float[][] tensors, float[] classifier) {
        this.config = config;
        this.tokenEmbedding = tensors[0];
        this.attentionNorm = tensors[1];
        this.wq = tensors[2];
        this.wk = tensors[3];
        this.wv = tensors[4];
        this.wo = tensors[5];
        this.ffnNorm = tensors[6];
        this.w1 = tensors[7];
        this.w2 = tensors[8];
        this.w3 = tensors[9];
        this.finalNorm = tensors[10];
        this.classifier = config.sharedClassifier() ? tokenEmbedding : classifier;
        this.fingerprint = fingerprintOf(config, tensors, classifier);
    }

    /** The shape. */
    public LlamaConfig config() {
        return config;
    }

    /**
     * Hex SHA-256 over the shape and every weight: two weight sets share it only if they are equal, so a KV
     * cache namespace derived from it ({@link KvTierDecoder}) never mixes two models' blocks.
     */
    public String fingerprint() {
        return fingerprint;
    }

    /**
     * Weights drawn from {@code seed}: the same on every JVM. Matrices uniform in {@code ±1/sqrt(in)}, norms
     * near 1, embeddings uniform in ±1, so that activations stay in range and greedy decoding does not settle
     * on one token at once.
     */
    public static LlamaWeights generate(LlamaConfig config, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int dim = config.dim();
        int kv = config.kvDim();
        int hidden = config.hiddenDim();
        int layers = config.layers();
        float[][] tensors = new float[11][];
        tensors[0] = uniform(random, (long) config.vocabSize() * dim, 1.0);
        tensors[1] = nearOne(random, (long) layers * dim);
        tensors[2] = uniform(random, (long) layers * dim * dim, 1 / Math.sqrt(dim));
        tensors[3] = uniform(random, (long) layers * kv * dim, 1 / Math.sqrt(dim));
        tensors[4] = uniform(random, (long) layers * kv * dim, 1 / Math.sqrt(dim));
        tensors[5] = uniform(random, (long) layers * dim * dim, 1 / Math.sqrt(dim));
        tensors[6] = nearOne(random, (long) layers * dim);
        tensors[7] = uniform(random, (long) layers * hidden * dim, 1 / Math.sqrt(dim));
        tensors[8] = uniform(random, (long) layers * dim * hidden, 1 / Math.sqrt(hidden));
        tensors[9] = uniform(random, (long) layers * hidden * dim, 1 / Math.sqrt(dim));
        tensors[10] = nearOne(random, dim);
        float[] classifier = config.sharedClassifier() ? null
                : uniform(random, (long) config.vocabSize() * dim, 1 / Math.sqrt(dim));
        return new LlamaWeights(config, tensors, classifier);
    }

    /**
     * Reads a llama2.c checkpoint: a header of seven little-endian int32 ({@code dim, hidden_dim, n_layers,
     * n_heads, n_kv_heads, vocab_size, seq_len}; a negative vocabulary size means an unshared classifier), then
     * the float32 tensors in llama2.c's order (token embedding, attention norms, wq, wk, wv, wo, MLP norms, w1,
     * w2, w3, final norm, the two unused RoPE tables of {@code seq_len * head_size / 2} floats each, and the
     * classifier when unshared).
     *
     * @throws IOException              if the file cannot be read
     * @throws IllegalArgumentException naming the file, its size and the size its header implies when they differ,
     *                                  or naming a header value that is out of range
     */
    public static LlamaWeights load(Path checkpoint) throws IOException {
        try (FileChannel channel = FileChannel.open(checkpoint, StandardOpenOption.READ)) {
            long size = channel.size();
            if (size < 28) {
                throw new IllegalArgumentException(checkpoint + " is " + size + " bytes, shorter than a llama2.c header (28)");
            }
            ByteBuffer header = ByteBuffer.allocate(28).order(ByteOrder.LITTLE_ENDIAN);
            readFully(channel, header, 0);
            header.flip();
            int dim = header.getInt();
            int hidden = header.getInt();
            int layers = header.getInt();
            int heads = header.getInt();
            int kvHeads = header.getInt();
            int vocab = header.getInt();
            int seqLen = header.getInt();
            LlamaConfig config = new LlamaConfig(dim, hidden, layers, heads, kvHeads, Math.abs(vocab), seqLen, vocab > 0);
            long ropeFloats = (long) seqLen * config.headSize() / 2;
            long expected = 28 + 4 * (config.parameterCount() + 2 * ropeFloats);
            if (size != expected) {
                throw new IllegalArgumentException(checkpoint + " is " + size + " bytes but its header " + config
                        + " implies " + expected);
            }
            ByteBuffer all = channel.map(FileChannel.MapMode.READ_ONLY, 28, size - 28).order(ByteOrder.LITTLE_ENDIAN);
            FloatBuffer floats = all.asFloatBuffer();
            int kv = config.kvDim();
            float[][] tensors = new float[11][];
            tensors[0] = take(floats, (long) config.vocabSize() * dim);
            tensors[1] = take(floats, (long) layers * dim);
            tensors[2] = take(floats, (long) layers * dim * dim);
            tensors[3] = take(floats, (long) layers * kv * dim);
            tensors[4] = take(floats, (long) layers * kv * dim);
            tensors[5] = take(floats, (long) layers * dim * dim);
            tensors[6] = take(floats, (long) layers * dim);
            tensors[7] = take(floats, (long) layers * hidden * dim);
            tensors[8] = take(floats, (long) layers * dim * hidden);
            tensors[9] = take(floats, (long) layers * hidden * dim);
            tensors[10] = take(floats, dim);
            floats.position(floats.position() + (int) (2 * ropeFloats));
            float[] classifier = config.sharedClassifier() ? null : take(floats, (long) config.vocabSize() * dim);
            return new LlamaWeights(config, tensors, classifier);
        }
    }

    private static void readFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
        long at = position;
        while (buffer.hasRemaining()) {
            int n = channel.read(buffer, at);
            if (n < 0) {
                throw new IOException("unexpected end of file at byte " + at);
            }
            at += n;
        }
    }

    private static float[] take(FloatBuffer floats, long count) {
        float[] out = new float[Math.toIntExact(count)];
        floats.get(out);
        return out;
    }

    private static float[] uniform(SplittableRandom random, long count, double bound) {
        float[] out = new float[Math.toIntExact(count)];
        for (int i = 0; i < out.length; i++) {
            out[i] = (float) ((random.nextDouble() * 2 - 1) * bound);
        }
        return out;
    }

    private static float[] nearOne(SplittableRandom random, long count) {
        float[] out = new float[Math.toIntExact(count)];
        for (int i = 0; i < out.length; i++) {
            out[i] = (float) (1 + (random.nextDouble() - 0.5) * 0.2);
        }
        return out;
    }

    private static String fingerprintOf(LlamaConfig config, float[][] tensors, float[] classifier) {
        MessageDigest sha256;
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JDK has no SHA-256 MessageDigest", e);
        }
        sha256.update(config.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        ByteBuffer chunk = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        for (float[] tensor : tensors) {
            digestFloats(sha256, chunk, tensor);
        }
        if (classifier != null) {
            digestFloats(sha256, chunk, classifier);
        }
        return HexFormat.of().formatHex(sha256.digest());
    }

    private static void digestFloats(MessageDigest sha256, ByteBuffer chunk, float[] values) {
        for (float value : values) {
            if (chunk.remaining() < 4) {
                sha256.update(chunk.array(), 0, chunk.position());
                chunk.clear();
            }
            chunk.putFloat(value);
        }
        sha256.update(chunk.array(), 0, chunk.position());
        chunk.clear();
    }
}
