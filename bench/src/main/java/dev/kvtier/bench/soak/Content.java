package dev.kvtier.bench.soak;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

/**
 * The bytes of one version of one key: a 16-byte header (magic, key number, version, size) and a body drawn from a
 * generator seeded by the run's seed, the key and the version. So any bytes read back say whose they claim to be, and
 * whether they are exactly that: another key's bytes, an older version, a torn copy or zeros are all told apart.
 * Stateless and thread-safe.
 */
final class Content {
    /** Header bytes; a segment is never smaller. */
    static final int HEADER = 16;
    private static final int MAGIC = 0x4B565431; // "KVT1"

    private final long runSeed;

    Content(long runSeed) {
        this.runSeed = runSeed;
    }

    /** The bytes of {@code version} of key {@code keyNumber}, {@code size >= HEADER} long. */
    byte[] bytes(int keyNumber, int version, int size) {
        if (size < HEADER) {
            throw new IllegalArgumentException("size must be >= " + HEADER + ", was " + size);
        }
        byte[] data = new byte[size];
        ByteBuffer buffer = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(MAGIC).putInt(keyNumber).putInt(version).putInt(size);
        SplittableRandom random = new SplittableRandom(mix(keyNumber, version));
        while (buffer.remaining() >= Long.BYTES) {
            buffer.putLong(random.nextLong());
        }
        while (buffer.hasRemaining()) {
            buffer.put((byte) random.nextInt());
        }
        return data;
    }

    /**
     * Checks {@code got} (at least the segment's size) against what {@link #bytes} makes for the key and a version in
     * {@code [minVersion, maxVersion]}, with the size the header claims.
     *
     * @return null when the bytes are exactly one such version, else what is wrong (for the report)
     */
    String check(byte[] got, int gotLength, int keyNumber, int minVersion, int maxVersion) {
        if (gotLength < HEADER) {
            return "only " + gotLength + " bytes";
        }
        ByteBuffer header = ByteBuffer.wrap(got).order(ByteOrder.LITTLE_ENDIAN);
        int magic = header.getInt(0);
        int key = header.getInt(4);
        int version = header.getInt(8);
        int size = header.getInt(12);
        if (magic != MAGIC) {
            return String.format("no header (first bytes %08x %08x %08x %08x)", magic, key, version, size);
        }
        if (key != keyNumber) {
            return "bytes of key " + key + " v" + version;
        }
        if (version < minVersion || version > maxVersion) {
            return "version " + version + ", expected " + (minVersion == maxVersion ? "v" + minVersion
                    : "v" + minVersion + "..v" + maxVersion);
        }
        if (size != gotLength) {
            return "header says " + size + " bytes, segment has " + gotLength;
        }
        byte[] expected = bytes(keyNumber, version, size);
        for (int i = HEADER; i < size; i++) {
            if (got[i] != expected[i]) {
                int end = i;
                while (end < size && got[end] != expected[end]) {
                    end++;
                }
                return "v" + version + " differs from byte " + i + " (" + (end - i) + " bytes on, "
                        + (allZero(got, i, end) ? "zeros" : "not zeros") + ")";
            }
        }
        return null;
    }

    /** The size the header claims, or -1 without a header. */
    static int claimedSize(byte[] got) {
        ByteBuffer header = ByteBuffer.wrap(got).order(ByteOrder.LITTLE_ENDIAN);
        return header.getInt(0) == MAGIC ? header.getInt(12) : -1;
    }

    private static boolean allZero(byte[] data, int from, int to) {
        for (int i = from; i < to; i++) {
            if (data[i] != 0) {
                return false;
            }
        }
        return true;
    }

    private long mix(int keyNumber, int version) {
        long z = runSeed ^ ((long) keyNumber << 32 | (version & 0xFFFFFFFFL)) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        return z ^ (z >>> 27);
    }
}
