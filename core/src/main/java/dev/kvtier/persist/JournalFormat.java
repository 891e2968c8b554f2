package dev.kvtier.persist;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * The journal's byte layout, beside the code that writes and reads it (see the package comment for
 * the drawing and the rules). All integers little-endian. Stateless.
 */
final class JournalFormat {
    /** "KVTJRNL" and a zero byte, read as a little-endian long. */
    static final long HEADER_MAGIC = ByteBuffer.wrap("KVTJRNL\0".getBytes(StandardCharsets.US_ASCII))
            .order(ByteOrder.LITTLE_ENDIAN).getLong();
    /** Bumped whenever the layout changes; a journal of another version is a mismatch. */
    static final int FORMAT_VERSION = 2;
    /** Offset of the namespace's bytes in the header. */
    static final int HEADER_FIXED = 28;
    /** "KVTR" as a little-endian int: where a record starts (what resynchronisation looks for). */
    static final int RECORD_MAGIC = 0x5254_564B;
    /** Magic, body length, body CRC32C. */
    static final int RECORD_HEADER = 12;
    /** Longest body accepted: a length beyond it is corruption, not a record. */
    static final int MAX_BODY = 1 << 20;
    static final byte PUT = 1;
    static final byte REMOVE = 2;
    /** Type, key length (in UTF-16 code units). */
    private static final int BODY_KEY = 5;
    /** Position start, position end, size, access count, CRC32C, run count. */
    private static final int PUT_FIXED = 8 + 8 + 8 + 8 + 4 + 4;
    private static final int RUN = 12;
    /** After the runs: block flag, parent key length (-1: none). */
    private static final int BLOCK_FIXED = 1 + 4;
    private static final byte PLAIN = 0;
    private static final byte BLOCK = 1;

    private JournalFormat() {
    }

    static ByteBuffer header(String namespace, int pageSize, long extentBytes) {
        byte[] name = namespace.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(HEADER_FIXED + name.length + 4).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(HEADER_MAGIC).putInt(FORMAT_VERSION).putInt(pageSize).putLong(extentBytes).putInt(name.length).put(name);
        b.putInt(crc(b.array(), 0, b.position()));
        return b.flip();
    }

    /** A PUT record, whole (header and body). */
    static byte[] put(SegmentRecord r) {
        int keyBytes = 2 * r.key().length();
        int parentChars = r.parentKey() == null ? 0 : r.parentKey().length();
        ByteBuffer body = body(PUT, r.key(), PUT_FIXED + RUN * r.runCount() + BLOCK_FIXED + 2 * parentChars);
        body.putLong(r.positionStart()).putLong(r.positionEnd()).putLong(r.sizeBytes()).putLong(r.accessCount())
                .putInt(r.crc32c()).putInt(r.runCount());
        for (int i = 0; i < r.runCount(); i++) {
            body.putInt(r.runChunk()[i]).putInt(r.runFirstPage()[i]).putInt(r.runPageCount()[i]);
        }
        body.put(r.block() ? BLOCK : PLAIN).putInt(r.parentKey() == null ? -1 : parentChars);
        for (int i = 0; i < parentChars; i++) {
            body.putChar(r.parentKey().charAt(i));
        }
        assert body.position() == RECORD_HEADER + BODY_KEY + keyBytes + PUT_FIXED + RUN * r.runCount() + BLOCK_FIXED
                + 2 * parentChars;
        return seal(body);
    }

    /** A REMOVE record, whole. */
    static byte[] remove(String key) {
        return seal(body(REMOVE, key, 0));
    }

    private static ByteBuffer body(byte type, String key, int rest) {
        int length = BODY_KEY + 2 * key.length() + rest;
        if (length > MAX_BODY) {
            throw new IllegalArgumentException("a journal record of " + length + " bytes exceeds " + MAX_BODY
                    + " (key of " + key.length() + " chars)");
        }
        ByteBuffer b = ByteBuffer.allocate(RECORD_HEADER + length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(RECORD_MAGIC).putInt(length).putInt(0).put(type).putInt(key.length());
        for (int i = 0; i < key.length(); i++) {
            b.putChar(key.charAt(i)); // UTF-16 code units: every Java string round-trips, unpaired surrogates too
        }
        return b;
    }

    private static byte[] seal(ByteBuffer b) {
        byte[] bytes = b.array();
        b.putInt(8, crc(bytes, RECORD_HEADER, bytes.length - RECORD_HEADER));
        return bytes;
    }

    static int crc(byte[] bytes, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, offset, length);
        return (int) crc.getValue();
    }

    /** The header as read, or why it cannot be. */
    record Header(int version, int pageSize, long extentBytes, String namespace, int length) { }

    /** @return the header at the start of {@code file}, or null when it is not a whole, intact kvtier journal header */
    static Header readHeader(ByteBuffer file) {
        if (file.limit() < HEADER_FIXED + 4 || file.getLong(0) != HEADER_MAGIC) {
            return null;
        }
        int nameLength = file.getInt(24);
        if (nameLength < 0 || nameLength > file.limit() - HEADER_FIXED - 4) {
            return null;
        }
        int end = HEADER_FIXED + nameLength;
        if (crc(file.array(), 0, end) != file.getInt(end)) {
            return null;
        }
        byte[] name = new byte[nameLength];
        file.get(HEADER_FIXED, name);
        return new Header(file.getInt(8), file.getInt(12), file.getLong(16), new String(name, StandardCharsets.UTF_8),
                end + 4);
    }

    /** One record read back: a PUT ({@code segment} set) or a REMOVE ({@code segment} null). */
    record Decoded(String key, SegmentRecord segment, int length) { }

    /**
     * The record at {@code offset} when a whole, intact one starts there; null otherwise (the reader then
     * looks for the next one).
     */
    static Decoded readRecord(ByteBuffer file, int offset) {
        if (file.limit() - offset < RECORD_HEADER || file.getInt(offset) != RECORD_MAGIC) {
            return null;
        }
        int length = file.getInt(offset + 4);
        if (length < BODY_KEY || length > MAX_BODY || length > file.limit() - offset - RECORD_HEADER) {
            return null;
        }
        int body = offset + RECORD_HEADER;
        if (crc(file.array(), body, length) != file.getInt(offset + 8)) {
            return null;
        }
        byte type = file.get(body);
        int keyChars = file.getInt(body + 1);
        if (keyChars < 0 || keyChars > (length - BODY_KEY) / 2) {
            return null;
        }
        char[] key = new char[keyChars];
        for (int i = 0; i < keyChars; i++) {
            key[i] = file.getChar(body + BODY_KEY + 2 * i);
        }
        String name = new String(key);
        if (name.isBlank()) {
            return null; // no cache accepts a blank key: not a record of ours
        }
        int at = body + BODY_KEY + 2 * keyChars;
        int total = RECORD_HEADER + length;
        if (type == REMOVE) {
            return length == BODY_KEY + 2 * keyChars ? new Decoded(name, null, total) : null;
        }
        if (type != PUT || length < BODY_KEY + 2 * keyChars + PUT_FIXED) {
            return null;
        }
        long start = file.getLong(at);
        long end = file.getLong(at + 8);
        long size = file.getLong(at + 16);
        long accessCount = file.getLong(at + 24);
        int crc32c = file.getInt(at + 32);
        int runs = file.getInt(at + 36);
        if (runs < 0 || runs > (length - BODY_KEY) / RUN) {
            return null;
        }
        int runsEnd = BODY_KEY + 2 * keyChars + PUT_FIXED + RUN * runs; // no overflow: each term is below length
        if (length < runsEnd + BLOCK_FIXED || start < 0 || end < start || size < 0 || accessCount < 0) {
            return null;
        }
        byte kind = file.get(body + runsEnd);
        int parentChars = file.getInt(body + runsEnd + 1);
        if ((kind != PLAIN && kind != BLOCK) || parentChars < -1 || (kind == PLAIN && parentChars != -1)
                || length != runsEnd + BLOCK_FIXED + 2 * Math.max(0, parentChars)) {
            return null;
        }
        String parentKey = null;
        if (parentChars >= 0) {
            char[] parent = new char[parentChars];
            for (int i = 0; i < parentChars; i++) {
                parent[i] = file.getChar(body + runsEnd + BLOCK_FIXED + 2 * i);
            }
            parentKey = new String(parent);
            if (parentKey.isBlank()) {
                return null;
            }
        }
        int[] chunk = new int[runs];
        int[] first = new int[runs];
        int[] count = new int[runs];
        for (int i = 0, p = at + PUT_FIXED; i < runs; i++, p += RUN) {
            chunk[i] = file.getInt(p);
            first[i] = file.getInt(p + 4);
            count[i] = file.getInt(p + 8);
        }
        return new Decoded(name, new SegmentRecord(name, start, end, size, crc32c, accessCount, chunk, first, count,
                kind == BLOCK, parentKey),
                total);
    }
}
