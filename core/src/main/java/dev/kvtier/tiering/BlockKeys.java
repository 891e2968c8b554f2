package dev.kvtier.tiering;

import java.nio.charset.StandardCharsets;

/**
 * Internal: the segment key a prefix block is cached under, {@value #PREFIX} followed by the 32 lower-case hex
 * digits of its 128-bit hash (high word first), and back. The one definition of that format:
 * {@code dev.kvtier.prefix.PrefixBlockCache#keyOf} and its {@code KEY_PREFIX} are this. The prefix calls find
 * their blocks by the hash itself ({@link SegmentTable#peekBlock}); a key is built only for a new block (the store
 * and the segment API know blocks by key), for an error message, or by a caller of the segment API. Stateless,
 * thread-safe.
 */
public final class BlockKeys {
    /** Every block's key starts with this. */
    public static final String PREFIX = "kvblock:";
    /** Characters in a block's key. */
    public static final int LENGTH = PREFIX.length() + 32;

    private static final byte[] PREFIX_BYTES = PREFIX.getBytes(StandardCharsets.ISO_8859_1);
    private static final byte[] HEX_DIGITS = "0123456789abcdef".getBytes(StandardCharsets.ISO_8859_1);

    private BlockKeys() {
    }

    /** The key of the block whose hash is {@code high}, {@code low}. */
    public static String of(long high, long low) {
        // Built straight into one Latin-1 array: the concatenation of two HexFormat strings cost three allocations
        // and two copies more.
        byte[] key = new byte[LENGTH];
        System.arraycopy(PREFIX_BYTES, 0, key, 0, PREFIX_BYTES.length);
        writeHex(high, key, PREFIX_BYTES.length);
        writeHex(low, key, PREFIX_BYTES.length + 16);
        return new String(key, StandardCharsets.ISO_8859_1);
    }

    /** The 16 lower-case hex digits of {@code value}, most significant first. */
    private static void writeHex(long value, byte[] destination, int offset) {
        for (int i = 15; i >= 0; i--) {
            destination[offset + i] = HEX_DIGITS[(int) (value & 0xF)];
            value >>>= 4;
        }
    }

    /** Whether {@code key} has the form {@link #of} writes (lower-case digits only). */
    static boolean isBlockKey(String key) {
        if (key.length() != LENGTH || !key.startsWith(PREFIX)) {
            return false;
        }
        for (int i = PREFIX.length(); i < LENGTH; i++) {
            char c = key.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }

    /** The high word of a block key's hash; the key must pass {@link #isBlockKey}. */
    static long high(String key) {
        return Long.parseUnsignedLong(key, PREFIX.length(), PREFIX.length() + 16, 16);
    }

    /** The low word of a block key's hash; the key must pass {@link #isBlockKey}. */
    static long low(String key) {
        return Long.parseUnsignedLong(key, PREFIX.length() + 16, LENGTH, 16);
    }

    /** The hash code a block's slot in the segment table's block index is found by. */
    static int hash(long high, long low) {
        long mixed = (high * 0x9E37_79B9_7F4A_7C15L) ^ low;
        return (int) (mixed ^ mixed >>> 32);
    }
}
