package dev.kvtier.persist;

import dev.kvtier.DiskPersistence;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * The journal's byte layout, beside the code that writes and reads it (see the package comment for
 * the drawing and the rules), and the layout of the generations file. All integers little-endian.
 * Stateless.
 */
final class JournalFormat {
    /** "KVTJRNL" and a zero byte, read as a little-endian long. */
    static final long HEADER_MAGIC = ByteBuffer.wrap("KVTJRNL\0".getBytes(StandardCharsets.US_ASCII))
            .order(ByteOrder.LITTLE_ENDIAN).getLong();
    /**
     * Bumped whenever the layout changes. 3: two header copies, a generation in every PUT, the generations
     * file. A journal of version 2 is migrated on open; any other version is a mismatch.
     */
    static final int FORMAT_VERSION = 3;
    /** The one older version an open converts (its records carry no generation, its header is single). */
    static final int MIGRATED_VERSION = 2;
    /** Offset of the namespace's bytes in a header copy. */
    static final int HEADER_FIXED = 28;
    /**
     * Bytes each header copy occupies, zero-padded: the longest namespace fits, so the second copy is found
     * at a fixed offset even when the first one's namespace length is what got damaged.
     */
    static final int HEADER_SLOT = HEADER_FIXED + DiskPersistence.MAX_NAMESPACE_BYTES + 4;
    /** Where the records of a version-3 journal start: after both header copies. */
    static final int RECORDS_START = 2 * HEADER_SLOT;
    /** "KVTR" as a little-endian int: where a record starts (what resynchronisation looks for). */
    static final int RECORD_MAGIC = 0x5254_564B;
    /** Magic, body length, body CRC32C. */
    static final int RECORD_HEADER = 12;
    /**
     * Longest body accepted: a length beyond it is corruption, not a record. A key of the door's longest
     * ({@code KvTierCache.MAX_KEY_LENGTH}, 65,536 chars: 128 KiB) leaves room for about 76,000 page runs.
     */
    static final int MAX_BODY = 1 << 20;
    static final byte PUT = 1;
    static final byte REMOVE = 2;
    /** Type, key length (in UTF-16 code units). */
    private static final int BODY_KEY = 5;
    /** Generation (version 3 only). */
    private static final int GENERATION = 8;
    /** Position start, position end, size, access count, CRC32C, run count. */
    private static final int PUT_FIXED = 8 + 8 + 8 + 8 + 4 + 4;
    private static final int RUN = 12;
    /** After the runs: block flag, parent key length (-1: none). */
    private static final int BLOCK_FIXED = 1 + 4;
    private static final byte PLAIN = 0;
    private static final byte BLOCK = 1;
    /** Bytes per page in the generations file: one i64 each. */
    static final int STAMP = 8;

    private JournalFormat() {
    }

    /** The header of a new journal: two identical copies, each in its slot. */
    static ByteBuffer header(String namespace, int pageSize, long extentBytes) {
        byte[] name = namespace.getBytes(StandardCharsets.UTF_8);
        if (name.length > DiskPersistence.MAX_NAMESPACE_BYTES) {
            throw new IllegalArgumentException("namespace of " + name.length + " UTF-8 bytes exceeds " + DiskPersistence.MAX_NAMESPACE_BYTES);
        }
        ByteBuffer b = ByteBuffer.allocate(RECORDS_START).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(HEADER_MAGIC).putInt(FORMAT_VERSION).putInt(pageSize).putLong(extentBytes).putInt(name.length).put(name);
        b.putInt(crc(b.array(), 0, b.position()));
        System.arraycopy(b.array(), 0, b.array(), HEADER_SLOT, HEADER_SLOT);
        return b.clear();
    }

    /** A PUT record of {@code generation}, whole (header and body). */
    static byte[] put(SegmentRecord r, long generation) {
        int keyBytes = 2 * r.key().length();
        int parentChars = r.parentKey() == null ? 0 : r.parentKey().length();
        ByteBuffer body = body(PUT, r.key(), GENERATION + PUT_FIXED + RUN * r.runCount() + BLOCK_FIXED + 2 * parentChars);
        body.putLong(generation);
        body.putLong(r.positionStart()).putLong(r.positionEnd()).putLong(r.sizeBytes()).putLong(r.accessCount())
                .putInt(r.crc32c()).putInt(r.runCount());
        for (int i = 0; i < r.runCount(); i++) {
            body.putInt(r.runChunk()[i]).putInt(r.runFirstPage()[i]).putInt(r.runPageCount()[i]);
        }
        body.put(r.block() ? BLOCK : PLAIN).putInt(r.parentKey() == null ? -1 : parentChars);
        for (int i = 0; i < parentChars; i++) {
            body.putChar(r.parentKey().charAt(i));
        }
        assert body.position() == RECORD_HEADER + BODY_KEY + keyBytes + GENERATION + PUT_FIXED + RUN * r.runCount()
                + BLOCK_FIXED + 2 * parentChars;
        return seal(body);
    }

    /** The generation of a version-3 PUT record made by {@link #put}. */
    static long generationOf(byte[] put) {
        return ByteBuffer.wrap(put).order(ByteOrder.LITTLE_ENDIAN).getLong(RECORD_HEADER + BODY_KEY + 2 * keyChars(put));
    }

    /** Receives one run of pages: extent slot, first page, page count. */
    interface RunVisitor {
        void run(int slot, int firstPage, int pageCount) throws IOException;
    }

    /** Calls {@code visitor} for each run of a version-3 PUT record made by {@link #put}, in order. */
    static void forEachRun(byte[] put, RunVisitor visitor) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(put).order(ByteOrder.LITTLE_ENDIAN);
        int at = RECORD_HEADER + BODY_KEY + 2 * keyChars(put) + GENERATION;
        int runs = b.getInt(at + PUT_FIXED - 4);
        for (int i = 0, p = at + PUT_FIXED; i < runs; i++, p += RUN) {
            visitor.run(b.getInt(p), b.getInt(p + 4), b.getInt(p + 8));
        }
    }

    private static int keyChars(byte[] record) {
        return ByteBuffer.wrap(record).order(ByteOrder.LITTLE_ENDIAN).getInt(RECORD_HEADER + 1);
    }

    /** The byte offset of page {@code page} of extent slot {@code slot} in the generations file. */
    static long stampOffset(int slot, int page, int pagesPerExtent) {
        return ((long) slot * pagesPerExtent + page) * STAMP;
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

    /** A header copy as read. */
    record Header(int version, int pageSize, long extentBytes, String namespace, int length) { }

    /** A header copy read at some offset: the header when intact, else which check failed. */
    record HeaderCopy(Header header, String failedCheck) { }

    /**
     * The header copy at {@code offset}: intact, or the first check it failed (too short, magic, namespace
     * length, checksum), named with the values found.
     */
    static HeaderCopy readHeader(ByteBuffer file, int offset) {
        if (file.limit() - offset < HEADER_FIXED + 4) {
            return new HeaderCopy(null, "too short (" + Math.max(0, file.limit() - offset) + " bytes there)");
        }
        long magic = file.getLong(offset);
        if (magic != HEADER_MAGIC) {
            return new HeaderCopy(null, "magic (found 0x" + Long.toHexString(magic) + ", not \"KVTJRNL\\0\")");
        }
        int nameLength = file.getInt(offset + 24);
        if (nameLength < 0 || nameLength > DiskPersistence.MAX_NAMESPACE_BYTES || nameLength > file.limit() - offset - HEADER_FIXED - 4) {
            return new HeaderCopy(null, "namespace length (" + nameLength + " bytes, beyond the header)");
        }
        int end = offset + HEADER_FIXED + nameLength;
        int computed = crc(file.array(), offset, HEADER_FIXED + nameLength);
        if (computed != file.getInt(end)) {
            return new HeaderCopy(null, "checksum (stored 0x" + Integer.toHexString(file.getInt(end)) + ", computed 0x"
                    + Integer.toHexString(computed) + ")");
        }
        byte[] name = new byte[nameLength];
        file.get(offset + HEADER_FIXED, name);
        return new HeaderCopy(new Header(file.getInt(offset + 8), file.getInt(offset + 12), file.getLong(offset + 16),
                new String(name, StandardCharsets.UTF_8), HEADER_FIXED + nameLength + 4), null);
    }

    /** One record read back: a PUT ({@code segment} set, with its generation) or a REMOVE ({@code segment} null). */
    record Decoded(String key, SegmentRecord segment, long generation, int length) { }

    /**
     * The record at {@code offset} when a whole, intact one of format {@code version} starts there; null
     * otherwise (the reader then looks for the next one). A version-2 PUT has no generation (read as 0).
     */
    static Decoded readRecord(ByteBuffer file, int offset, int version) {
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
        int total = RECORD_HEADER + length;
        if (type == REMOVE) {
            return length == BODY_KEY + 2 * keyChars ? new Decoded(name, null, 0, total) : null;
        }
        int generationBytes = version >= FORMAT_VERSION ? GENERATION : 0;
        if (type != PUT || length < BODY_KEY + 2 * keyChars + generationBytes + PUT_FIXED) {
            return null;
        }
        int at = body + BODY_KEY + 2 * keyChars;
        long generation = generationBytes == 0 ? 0 : file.getLong(at);
        at += generationBytes;
        long start = file.getLong(at);
        long end = file.getLong(at + 8);
        long size = file.getLong(at + 16);
        long accessCount = file.getLong(at + 24);
        int crc32c = file.getInt(at + 32);
        int runs = file.getInt(at + 36);
        if (runs < 0 || runs > (length - BODY_KEY) / RUN) {
            return null;
        }
        // no overflow: each term is below length
        int runsEnd = BODY_KEY + 2 * keyChars + generationBytes + PUT_FIXED + RUN * runs;
        if (length < runsEnd + BLOCK_FIXED || start < 0 || end < start || size < 0 || accessCount < 0
                || (generationBytes > 0 && generation <= 0)) {
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
                kind == BLOCK, parentKey), generation, total);
    }
}
