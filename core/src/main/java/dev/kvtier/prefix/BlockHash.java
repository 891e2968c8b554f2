package dev.kvtier.prefix;

import java.util.HexFormat;
import java.util.Objects;

/**
 * The 128-bit name of a KV block (see {@link BlockHasher} for how it is computed). A value: immutable,
 * thread-safe, equal when both halves are equal.
 *
 * <p>Byte order is big-endian throughout: {@link #toBytes()} is {@code high} then {@code low}, most
 * significant byte first; {@link #toString()} is those 16 bytes as 32 lower-case hex digits; the natural
 * order ({@link #compareTo}) is the unsigned lexicographic order of those bytes. So the text form, the
 * byte form and the order agree, on every host.
 *
 * @param high the first 8 bytes, big-endian
 * @param low  the last 8 bytes, big-endian
 */
public record BlockHash(long high, long low) implements Comparable<BlockHash> {

    /** Bytes in a block hash. */
    public static final int BYTES = 16;

    /**
     * All zeros: the parent of the first block of every chain. No block is expected to hash to it
     * (a 2^-128 chance), so it also reads as "no parent".
     */
    public static final BlockHash ROOT = new BlockHash(0, 0);

    private static final HexFormat HEX = HexFormat.of();

    /**
     * Parses the form {@link #toString()} writes: exactly 32 hex digits, either case, nothing else.
     *
     * @param hex the 32 hex digits
     * @return the hash they spell
     * @throws IllegalArgumentException naming the text when it is not that
     */
    public static BlockHash fromHex(CharSequence hex) {
        if (hex == null || hex.length() != 2 * BYTES) {
            throw new IllegalArgumentException("a block hash is 32 hex digits, got "
                    + (hex == null ? "null" : "'" + hex + "' (" + hex.length() + " characters)"));
        }
        for (int i = 0; i < hex.length(); i++) {
            if (Character.digit(hex.charAt(i), 16) < 0) {
                throw new IllegalArgumentException("a block hash is 32 hex digits, got '" + hex
                        + "' (character " + i + " is '" + hex.charAt(i) + "')");
            }
        }
        // fromHexDigitsToLong would take a sign or nothing else odd: every character was checked above.
        return new BlockHash(HexFormat.fromHexDigitsToLong(hex, 0, 16), HexFormat.fromHexDigitsToLong(hex, 16, 32));
    }

    /**
     * The hash whose {@link #toBytes()} are {@code bytes[offset .. offset + 16)}.
     *
     * @param bytes  the array holding the hash; not kept
     * @param offset where the 16 bytes start in {@code bytes}
     * @return the hash of those 16 bytes
     * @throws IndexOutOfBoundsException when fewer than 16 bytes follow {@code offset}
     */
    public static BlockHash fromBytes(byte[] bytes, int offset) {
        Objects.checkFromIndexSize(offset, BYTES, bytes.length);
        return new BlockHash(bigEndianLong(bytes, offset), bigEndianLong(bytes, offset + 8));
    }

    /**
     * The hash of exactly 16 bytes.
     *
     * @param bytes exactly 16 bytes, {@code high} then {@code low}, big-endian; not kept
     * @return the hash of those bytes
     * @throws IllegalArgumentException naming the length when it is not 16
     */
    public static BlockHash fromBytes(byte[] bytes) {
        if (bytes.length != BYTES) {
            throw new IllegalArgumentException("a block hash is 16 bytes, got " + bytes.length);
        }
        return fromBytes(bytes, 0);
    }

    /**
     * The 16 bytes, {@code high} then {@code low}, each big-endian; a fresh array.
     *
     * @return a new 16-byte array the caller owns
     */
    public byte[] toBytes() {
        byte[] bytes = new byte[BYTES];
        writeTo(bytes, 0);
        return bytes;
    }

    /**
     * Writes the 16 bytes of {@link #toBytes()} into {@code destination} at {@code offset}.
     *
     * @param destination the array to write into; 16 bytes from {@code offset} are overwritten
     * @param offset      where the 16 bytes go in {@code destination}
     */
    public void writeTo(byte[] destination, int offset) {
        Objects.checkFromIndexSize(offset, BYTES, destination.length);
        for (int i = 0; i < 8; i++) {
            destination[offset + i] = (byte) (high >>> (56 - 8 * i));
            destination[offset + 8 + i] = (byte) (low >>> (56 - 8 * i));
        }
    }

    /** Unsigned lexicographic order of {@link #toBytes()}. */
    @Override
    public int compareTo(BlockHash other) {
        int c = Long.compareUnsigned(high, other.high);
        return c != 0 ? c : Long.compareUnsigned(low, other.low);
    }

    /** 32 lower-case hex digits, e.g. {@code 00000000000000000000000000000000} for {@link #ROOT}. */
    @Override
    public String toString() {
        return HEX.toHexDigits(high) + HEX.toHexDigits(low);
    }

    private static long bigEndianLong(byte[] bytes, int offset) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = v << 8 | (bytes[offset + i] & 0xFFL);
        }
        return v;
    }
}
