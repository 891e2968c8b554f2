package dev.kvtier;

import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 24 item 12, second half: a key longer than a journal record can hold is refused at the door, with
 * the limit in the message, whatever the tier and whether or not the cache is persistent; a key of the
 * longest length accepted survives a restart. On main at 8d41ee6 the first test fails at its first
 * assertion: a 500,000-char key is accepted on GPU (and refused only once its put reaches a persistent DISK).
 */
class KeyLengthLimitTest {
    private static final PositionRange RANGE = PositionRange.of(0, 4);

    @TempDir
    Path directory;

    private static String key(int length) {
        char[] chars = new char[length];
        Arrays.fill(chars, 'q');
        return new String(chars);
    }

    @Test
    void aKeyBeyondTheLimitIsRefusedAtTheDoorWithTheLimitInTheMessage() {
        String tooLong = key(500_000);
        try (KvTierCache cache = KvTierCache.open(PersistedSegments.config(directory, DiskPersistence.of("keys")).build());
             Arena arena = Arena.ofConfined()) {
            MemorySegment bytes = MemorySegment.ofArray(new byte[64]);
            for (Tier tier : Tier.values()) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> cache.put(tooLong, RANGE, bytes, tier), tier::toString);
                assertTrue(e.getMessage().contains("at most 65536 chars") && e.getMessage().contains("was 500000"),
                        e.getMessage());
            }
            assertThrows(IllegalArgumentException.class, () -> cache.adopt(tooLong, RANGE, arena.allocate(64)));
            assertThrows(IllegalArgumentException.class, () -> cache.ensureResidentAsync(tooLong, Tier.GPU));
            assertThrows(IllegalArgumentException.class,
                    () -> cache.put(key(KvTierCache.MAX_KEY_LENGTH + 1), RANGE, bytes, Tier.GPU));
            assertTrue(cache.get(tooLong).isEmpty());
        }
    }

    @Test
    void aKeyOfTheLongestLengthSurvivesARestartOnAPersistentDisk() {
        String longest = key(KvTierCache.MAX_KEY_LENGTH);
        byte[] content = new byte[3 * PersistedSegments.PAGE];
        Arrays.fill(content, (byte) 7);
        KvTierConfig config = PersistedSegments.config(directory, DiskPersistence.of("keys")).build();
        try (KvTierCache cache = KvTierCache.open(config)) {
            cache.put(longest, RANGE, MemorySegment.ofArray(content), Tier.DISK);
        }
        try (KvTierCache cache = KvTierCache.open(config)) {
            assertEquals(1, cache.recovery().orElseThrow().recovered(), cache.recovery().orElseThrow().toString());
            byte[] back = new byte[content.length];
            cache.read(longest, MemorySegment.ofArray(back));
            assertArrayEquals(content, back);
        }
    }
}
