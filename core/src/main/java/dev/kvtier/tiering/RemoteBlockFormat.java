package dev.kvtier.tiering;

import dev.kvtier.RemoteRejection;
import dev.kvtier.remote.RemoteBlockStores;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.zip.CRC32C;

/**
 * The bytes of one prefix block in a remote block store, and its key. Immutable and thread-safe (a {@link Mac} is
 * cloned per call). The value, big-endian:
 * <pre>
 *  offset  size  field
 *       0     4  magic "KVRB" (0x4B565242)
 *       4     2  format version ({@value #VERSION})
 *       6     2  namespace length N, in UTF-8 bytes (at most {@value #MAX_NAMESPACE_BYTES})
 *       8    16  block hash (high word, low word)
 *      24    16  parent hash (high word, low word)
 *      40     8  bytes per block
 *      48     4  tokens per block
 *      52     4  layers (0: none declared)
 *      56     1  layer order (0: none, 1 + the ordinal of BlockLayout.LayerOrder)
 *      57     3  zero
 *      60     8  payload length P (= bytes per block)
 *      68     4  CRC32C of the payload
 *      72     N  namespace
 *    72+N     P  payload: the block's bytes
 *  72+N+P    32  HMAC-SHA256, keyed with the deployment's key, of every byte before it
 * </pre>
 * The key of a block is {@link RemoteBlockStores#blockKey}: {@code kvtier:<namespace>:<32 hex digits of its hash>}. Decoding reads only the value it was
 * given: every length a header claims is checked against the value's actual size (and the configured maximum) before
 * anything is trusted, so a hostile header never makes it allocate; the payload is copied into the caller's buffer.
 */
public final class RemoteBlockFormat {
    /** The format version this build writes and reads. */
    public static final int VERSION = 1;
    /** The longest namespace, in UTF-8 bytes. */
    public static final int MAX_NAMESPACE_BYTES = RemoteBlockStores.MAX_NAMESPACE_LENGTH;
    static final int MAGIC = 0x4B565242;
    static final int HEADER_BYTES = 72;
    static final int MAC_BYTES = 32;
    static final int OFFSET_NAMESPACE_LENGTH = 6;
    static final int OFFSET_BLOCK = 8;
    static final int OFFSET_PARENT = 24;
    static final int OFFSET_LAYOUT = 40;
    static final int OFFSET_PAYLOAD_LENGTH = 60;
    static final int OFFSET_CRC = 68;

    /** The layout fields a value carries (those of {@code BlockLayout}; {@code layerOrder} 0 when none). */
    public record Layout(long bytesPerBlock, int tokensPerBlock, int layers, int layerOrder) { }

    private final String namespace;
    private final String keyPrefix;
    private final byte[] namespaceBytes;
    private final Layout layout;
    private final Mac prototype;
    private final long maxValueBytes;

    /**
     * @param namespace the deployment's or tenant's namespace: 1 to {@value #MAX_NAMESPACE_BYTES} of
     *     {@code [A-Za-z0-9._-]}
     * @param key the HMAC key (at least 16 bytes; copied)
     * @param maxValueBytes the largest value accepted, header and signature included
     * @throws IllegalArgumentException naming what is wrong
     */
    public RemoteBlockFormat(String namespace, byte[] key, Layout layout, long maxValueBytes) {
        this.keyPrefix = RemoteBlockStores.blockKeyPrefix(namespace);
        if (key == null || key.length < 16) {
            throw new IllegalArgumentException("the remote store's HMAC key must have at least 16 bytes, had "
                    + (key == null ? "none" : key.length));
        }
        if (layout.bytesPerBlock() <= 0 || layout.tokensPerBlock() <= 0) {
            throw new IllegalArgumentException("layout must have positive sizes, was " + layout);
        }
        this.namespace = namespace;
        this.namespaceBytes = namespace.getBytes(StandardCharsets.UTF_8);
        this.layout = layout;
        this.maxValueBytes = maxValueBytes;
        if (valueBytes() > maxValueBytes || valueBytes() > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("a block's remote value takes " + valueBytes()
                    + " bytes, more than the largest value accepted (" + maxValueBytes + ", at most 2 GiB)");
        }
        try {
            this.prototype = Mac.getInstance("HmacSHA256");
            prototype.init(new SecretKeySpec(key, "HmacSHA256"));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JDK", e);
        }
    }

    /** The store key of block {@code (high, low)} in this namespace. */
    public String keyOf(long high, long low) {
        return RemoteBlockStores.blockKey(keyPrefix, high, low);
    }



    /** Bytes of a whole value: header, namespace, payload and signature. */
    public long valueBytes() {
        return HEADER_BYTES + namespaceBytes.length + layout.bytesPerBlock() + MAC_BYTES;
    }

    /** Bytes of a block's payload. */
    public long bytesPerBlock() {
        return layout.bytesPerBlock();
    }

    /** Tokens of a block. */
    public long tokensPerBlock() {
        return layout.tokensPerBlock();
    }

    /** Where the payload starts in a value; a writer copies the block's bytes there before {@link #seal}. */
    public int payloadOffset() {
        return HEADER_BYTES + namespaceBytes.length;
    }

    /** The largest value accepted. */
    public long maxValueBytes() {
        return maxValueBytes;
    }

    /** A value of the right size with room for the payload at {@link #payloadOffset()}, the rest unwritten. */
    public byte[] newValue() {
        return new byte[Math.toIntExact(valueBytes())];
    }

    /**
     * Writes the header, CRC and signature of {@code value} (from {@link #newValue()}, its payload in place).
     */
    public void seal(byte[] value, long high, long low, long parentHigh, long parentLow) {
        int payloadLength = Math.toIntExact(layout.bytesPerBlock());
        ByteBuffer header = ByteBuffer.wrap(value).order(ByteOrder.BIG_ENDIAN);
        header.putInt(0, MAGIC);
        header.putShort(4, (short) VERSION);
        header.putShort(OFFSET_NAMESPACE_LENGTH, (short) namespaceBytes.length);
        header.putLong(OFFSET_BLOCK, high).putLong(OFFSET_BLOCK + 8, low);
        header.putLong(OFFSET_PARENT, parentHigh).putLong(OFFSET_PARENT + 8, parentLow);
        header.putLong(OFFSET_LAYOUT, layout.bytesPerBlock());
        header.putInt(OFFSET_LAYOUT + 8, layout.tokensPerBlock());
        header.putInt(OFFSET_LAYOUT + 12, layout.layers());
        header.put(OFFSET_LAYOUT + 16, (byte) layout.layerOrder());
        header.put(57, (byte) 0).put(58, (byte) 0).put(59, (byte) 0);
        header.putLong(OFFSET_PAYLOAD_LENGTH, payloadLength);
        CRC32C crc = new CRC32C();
        crc.update(value, payloadOffset(), payloadLength);
        header.putInt(OFFSET_CRC, (int) crc.getValue());
        System.arraycopy(namespaceBytes, 0, value, HEADER_BYTES, namespaceBytes.length);
        Mac mac = mac();
        mac.update(value, 0, value.length - MAC_BYTES);
        try {
            mac.doFinal(value, value.length - MAC_BYTES);
        } catch (javax.crypto.ShortBufferException e) {
            throw new IllegalStateException("a value has room for its signature by construction", e);
        }
    }

    /**
     * Checks the bytes of {@code value} between its position and limit (neither is moved) as the value of block
     * {@code (high, low)} continuing {@code (parentHigh, parentLow)}, copying its payload to {@code payload} at
     * {@code payloadAt} on the way: the header is checked before anything is copied, the checksum and signature are
     * computed over the copy (one pass over the value's memory, which may be a store's receive buffer). Thread-safe.
     *
     * @return null when it is served; else why not, and then the payload's place holds nothing to serve (untouched
     *     when the header was refused, the unchecked bytes when the checksum or signature was)
     */
    public RemoteRejection open(ByteBuffer value, long high, long low, long parentHigh, long parentLow,
                                byte[] payload, int payloadAt) {
        int base = value.position();
        int length = value.remaining();
        if (length > maxValueBytes) {
            return RemoteRejection.TOO_LARGE;
        }
        if (length < HEADER_BYTES + MAC_BYTES) {
            return RemoteRejection.TRUNCATED;
        }
        ByteBuffer header = value.slice(base, HEADER_BYTES).order(ByteOrder.BIG_ENDIAN);
        if (header.getInt(0) != MAGIC || header.getShort(4) != VERSION) {
            return RemoteRejection.FORMAT;
        }
        int namespaceLength = Short.toUnsignedInt(header.getShort(OFFSET_NAMESPACE_LENGTH));
        long payloadLength = header.getLong(OFFSET_PAYLOAD_LENGTH);
        if (namespaceLength > MAX_NAMESPACE_BYTES || payloadLength < 0 || payloadLength > maxValueBytes) {
            return RemoteRejection.HOSTILE_LENGTH;
        }
        // Both lengths are small now, so the sum cannot overflow.
        if (HEADER_BYTES + namespaceLength + payloadLength + MAC_BYTES != length) {
            return HEADER_BYTES + namespaceLength + payloadLength + MAC_BYTES > length
                    ? RemoteRejection.TRUNCATED : RemoteRejection.HOSTILE_LENGTH;
        }
        if (!value.slice(base + HEADER_BYTES, namespaceLength).equals(ByteBuffer.wrap(namespaceBytes))) {
            return RemoteRejection.NAMESPACE;
        }
        if (header.getLong(OFFSET_BLOCK) != high || header.getLong(OFFSET_BLOCK + 8) != low
                || header.getLong(OFFSET_PARENT) != parentHigh || header.getLong(OFFSET_PARENT + 8) != parentLow) {
            return RemoteRejection.BLOCK;
        }
        if (header.getLong(OFFSET_LAYOUT) != layout.bytesPerBlock()
                || header.getInt(OFFSET_LAYOUT + 8) != layout.tokensPerBlock()
                || header.getInt(OFFSET_LAYOUT + 12) != layout.layers()
                || header.get(OFFSET_LAYOUT + 16) != (byte) layout.layerOrder()
                || payloadLength != layout.bytesPerBlock()) {
            return RemoteRejection.LAYOUT;
        }
        int payloadOffset = HEADER_BYTES + namespaceLength;
        int payloadBytes = (int) payloadLength;
        value.get(base + payloadOffset, payload, payloadAt, payloadBytes);
        CRC32C crc = new CRC32C();
        crc.update(payload, payloadAt, payloadBytes);
        if ((int) crc.getValue() != header.getInt(OFFSET_CRC)) {
            return RemoteRejection.CHECKSUM;
        }
        Mac mac = mac();
        mac.update(value.slice(base, payloadOffset));
        mac.update(payload, payloadAt, payloadBytes);
        byte[] expected = mac.doFinal();
        byte[] actual = new byte[MAC_BYTES];
        value.get(base + length - MAC_BYTES, actual);
        if (!MessageDigest.isEqual(expected, actual)) {
            return RemoteRejection.SIGNATURE;
        }
        return null;
    }

    private Mac mac() {
        try {
            return (Mac) prototype.clone();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException("the JDK's HmacSHA256 is cloneable", e);
        }
    }

    @Override
    public String toString() {
        return "RemoteBlockFormat[v" + VERSION + ", namespace=" + namespace + ", " + layout + "]"; // never the key
    }
}
