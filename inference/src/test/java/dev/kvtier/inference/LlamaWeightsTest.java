package dev.kvtier.inference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Weights: the seeded generator is deterministic, and a llama2.c checkpoint written here loads back exactly. */
class LlamaWeightsTest {
    private static final LlamaConfig SHAPE = new LlamaConfig(32, 48, 2, 4, 2, ByteVocabulary.SIZE, 64, true);

    @TempDir
    Path directory;

    @Test
    void theGeneratorIsDeterministicAndTheFingerprintTellsSeedsApart() {
        assertEquals(LlamaWeights.generate(SHAPE, 7).fingerprint(), LlamaWeights.generate(SHAPE, 7).fingerprint());
        assertNotEquals(LlamaWeights.generate(SHAPE, 7).fingerprint(), LlamaWeights.generate(SHAPE, 8).fingerprint());
    }

    @Test
    void aCheckpointWithASharedClassifierLoadsBackTheSameWeights() throws IOException {
        roundTrip(SHAPE);
    }

    @Test
    void aCheckpointWithItsOwnClassifierLoadsBackTheSameWeights() throws IOException {
        roundTrip(new LlamaConfig(32, 48, 2, 4, 2, ByteVocabulary.SIZE, 64, false));
    }

    @Test
    void aTruncatedCheckpointIsRefusedNamingBothSizes() throws IOException {
        Path file = write(LlamaWeights.generate(SHAPE, 3), directory.resolve("model.bin"));
        byte[] all = Files.readAllBytes(file);
        Path truncated = directory.resolve("truncated.bin");
        Files.write(truncated, java.util.Arrays.copyOf(all, all.length - 4));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LlamaWeights.load(truncated));
        assertTrue(e.getMessage().contains(String.valueOf(all.length - 4)) && e.getMessage().contains(String.valueOf(all.length)),
                e.getMessage());
    }

    private void roundTrip(LlamaConfig shape) throws IOException {
        LlamaWeights generated = LlamaWeights.generate(shape, 11);
        LlamaWeights loaded = LlamaWeights.load(write(generated, directory.resolve("model.bin")));
        assertEquals(shape, loaded.config());
        assertEquals(generated.fingerprint(), loaded.fingerprint());
        assertArrayEquals(generated.w2, loaded.w2);
        assertArrayEquals(generated.classifier, loaded.classifier);
        int[] prompt = ByteVocabulary.encode("hello there");
        assertArrayEquals(new ReferenceDecoder(new LlamaModel(generated)).generate(prompt, 8).tokens(),
                new ReferenceDecoder(new LlamaModel(loaded)).generate(prompt, 8).tokens());
    }

    /** llama2.c's export layout, written independently of the loader: header, tensors, two RoPE tables, classifier. */
    static Path write(LlamaWeights w, Path file) throws IOException {
        LlamaConfig c = w.config();
        int ropeFloats = c.seqLen() * c.headSize() / 2;
        long floats = c.parameterCount() + 2L * ropeFloats;
        ByteBuffer out = ByteBuffer.allocate(Math.toIntExact(28 + 4 * floats)).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(c.dim()).putInt(c.hiddenDim()).putInt(c.layers()).putInt(c.heads()).putInt(c.kvHeads())
                .putInt(c.sharedClassifier() ? c.vocabSize() : -c.vocabSize()).putInt(c.seqLen());
        for (float[] tensor : new float[][] {w.tokenEmbedding, w.attentionNorm, w.wq, w.wk, w.wv, w.wo, w.ffnNorm,
                w.w1, w.w2, w.w3, w.finalNorm, new float[2 * ropeFloats]}) {
            for (float f : tensor) {
                out.putFloat(f);
            }
        }
        if (!c.sharedClassifier()) {
            for (float f : w.classifier) {
                out.putFloat(f);
            }
        }
        Files.write(file, out.array());
        return file;
    }
}
