package dev.kvtier.inference;

import java.nio.charset.StandardCharsets;

/**
 * A byte-level vocabulary: token {@code b} (0..255) is the byte {@code b}; a few control tokens follow. No
 * tokenizer file is needed. Stateless, thread-safe.
 */
public final class ByteVocabulary {
    /** Starts a turn of the system. */
    public static final int SYSTEM = 256;
    /** Starts a turn of the user. */
    public static final int USER = 257;
    /** Starts a turn of the assistant. */
    public static final int ASSISTANT = 258;
    /** Ends a turn. */
    public static final int END = 259;
    /** The number of tokens: 256 bytes and the control tokens above. */
    public static final int SIZE = 260;

    private ByteVocabulary() {
    }

    /** The UTF-8 bytes of {@code text} as tokens. */
    public static int[] encode(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int[] tokens = new int[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            tokens[i] = bytes[i] & 0xff;
        }
        return tokens;
    }
}
