package dev.kvtier;

import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * The deterministic segments of the persistence tests: a key's size, positions and every byte follow
 * from the key alone, so whoever reopens a directory (this JVM or another, after a kill) can check
 * every byte served without knowing what the writer did. Also the configuration both sides use.
 */
final class PersistedSegments {
    /** Small pages keep 10^4 segments to a few megabytes of extents. */
    static final int PAGE = 512;
    static final long EXTENT = 256L * PAGE;

    private PersistedSegments() {
    }

    static KvTierConfig.Builder config(Path directory, DiskPersistence persistence) {
        return KvTierConfig.builder().backend(Backend.HOST).gpuBudgetBytes(16L * PAGE).cpuBudgetBytes(32L * PAGE)
                .pageSizeBytes(PAGE).diskExtentBytes(EXTENT).diskDirectory(directory).persistence(persistence);
    }

    /** 1 to 2000 bytes (up to four pages), a function of the key. */
    static byte[] content(String key) {
        SplittableRandom random = new SplittableRandom(key.hashCode() * 0x9E3779B97F4A7C15L + key.length());
        byte[] bytes = new byte[1 + random.nextInt(2000)];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) random.nextInt(256);
        }
        return bytes;
    }

    static PositionRange positions(String key) {
        int start = Math.floorMod(key.hashCode(), 1 << 20);
        return PositionRange.of(start, start + 1 + content(key).length / 16);
    }

    static void put(KvTierCache cache, String key, Tier tier) {
        cache.put(key, positions(key), MemorySegment.ofArray(content(key)), tier);
    }

    /**
     * Reads {@code key} back and compares every byte and the positions with the generator.
     *
     * @throws AssertionError naming the key and the first differing byte
     */
    static void verify(KvTierCache cache, String key) {
        byte[] expected = content(key);
        var meta = cache.get(key).orElseThrow(() -> new AssertionError("segment " + key + " is not cached"));
        if (meta.sizeBytes() != expected.length || !meta.positions().equals(positions(key))) {
            throw new AssertionError("segment " + key + " came back as " + meta + ", expected " + expected.length
                    + " bytes at " + positions(key));
        }
        byte[] actual = new byte[expected.length];
        cache.read(key, MemorySegment.ofArray(actual));
        for (int i = 0; i < expected.length; i++) {
            if (actual[i] != expected[i]) {
                throw new AssertionError("segment " + key + " differs at byte " + i + " of " + expected.length);
            }
        }
    }
}
