package dev.kvtier;

import dev.kvtier.observe.KvTierFlightRecording;
import dev.kvtier.observe.micrometer.KvTierMetrics;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockHasher;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * The error conventions of the package comment of {@code dev.kvtier}: every kvtier failure is a {@link KvTierException};
 * a null argument is an {@link IllegalArgumentException} naming it, on every public method of the API's doors; the
 * silent acceptances made explicit (an empty segment refused, a move to where the segment is a no-op); bad disk
 * directories named with their real reason.
 */
class ErrorConventionTest {
    private static final int PAGE = 4096;

    @TempDir
    Path disk;

    private KvTierConfig.Builder config() {
        return KvTierConfig.builder().backend(Backend.HOST).pageSizeBytes(PAGE).gpuBudgetBytes(4L * PAGE)
                .cpuBudgetBytes(4L * PAGE).diskExtentBytes(16L * PAGE).diskDirectory(disk);
    }

    /**
     * On main at 8d41ee6 {@link SegmentNotFoundException} was a {@code NoSuchElementException} and a failed open an
     * {@code IllegalStateException} or {@code UncheckedIOException}, so {@code catch (KvTierException e)} missed
     * them (there this test does not compile: {@link CacheOpenException} is new).
     */
    @Test
    void everyFailureOfTheCacheIsAKvTierException() {
        try (KvTierCache cache = KvTierCache.open(config().build())) {
            KvTierException notFound = assertThrows(KvTierException.class, () -> cache.ensureResident("absent", Tier.GPU));
            assertInstanceOf(SegmentNotFoundException.class, notFound);
            assertEquals("absent", notFound.key());
            assertEquals("no segment with key \"absent\" is cached", notFound.getMessage());
            assertThrows(KvTierException.class, () -> cache.demote("absent", Tier.CPU));
            assertThrows(KvTierException.class, () -> cache.read("absent", MemorySegment.ofArray(new byte[1])));
            KvTierException full = assertThrows(KvTierException.class, () -> cache.put("huge", PositionRange.of(0, 1),
                    MemorySegment.ofArray(new byte[5 * PAGE]), Tier.GPU));
            assertInstanceOf(TierFullException.class, full);
        }
        KvTierException cuda = assertThrows(KvTierException.class, () -> KvTierCache.open(config()
                .backend(Backend.CUDA).cudaLibrary(disk.resolve("no-libcudart.so")).build()));
        assertInstanceOf(CacheOpenException.class, cuda);
        assertNull(cuda.key());
        assertTrue(Set.of(CacheOpenException.class).contains(PersistedDirectoryMismatchException.class.getSuperclass()),
                "a refused persisted directory is an open that failed");
    }

    @Test
    void aDiskDirectoryThatIsARegularFileIsNamedSo() throws Exception {
        Path file = Files.writeString(disk.resolve("not-a-directory"), "x");
        CacheOpenException e = assertThrows(CacheOpenException.class,
                () -> KvTierCache.open(config().diskDirectory(file).build()));
        assertTrue(e.getMessage().startsWith("cannot create the disk directory " + file + ": " + file
                + " is a regular file, not a directory"), e.getMessage());
        assertFalse(e.getMessage().contains("KvTierConfig["), "the whole configuration is not dumped: " + e.getMessage());
        CacheOpenException below = assertThrows(CacheOpenException.class,
                () -> KvTierCache.open(config().diskDirectory(file.resolve("kv")).build()));
        assertTrue(below.getMessage().contains(file + " is a regular file, not a directory"), below.getMessage());
    }

    @Test
    void aDiskDirectoryWithoutPermissionIsNamedSo() throws Exception {
        assumeFalse("root".equals(System.getProperty("user.name")), "root is never denied permission");
        Path locked = Files.createDirectory(disk.resolve("locked"));
        Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("r-x------"));
        try {
            CacheOpenException e = assertThrows(CacheOpenException.class,
                    () -> KvTierCache.open(config().diskDirectory(locked.resolve("kv")).build()));
            assertTrue(e.getMessage().contains(locked.resolve("kv") + " permission denied"), e.getMessage());
        } finally {
            Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("rwx------"));
        }
    }

    /** A 0-byte put is cached, as {@link KvTierCache#put} documents: it lives, moves, is read and removed like others. */
    @Test
    void anEmptySegmentIsCachedLikeAnyOther() {
        try (KvTierCache cache = KvTierCache.open(config().build())) {
            cache.put("empty", PositionRange.of(5, 5), MemorySegment.ofArray(new byte[0]), Tier.CPU);
            assertEquals(0, cache.get("empty").orElseThrow().sizeBytes());
            assertEquals(0, cache.stats().cpuUsed(), "it costs no budget");
            cache.demote("empty", Tier.DISK);
            assertEquals(Tier.GPU, cache.ensureResident("empty", Tier.GPU).tier());
            cache.read("empty", MemorySegment.ofArray(new byte[0]));
            assertEquals(0, cache.remove("empty").orElseThrow().sizeBytes());
        }
    }

    @Test
    void aMoveToWhereTheSegmentIsIsANoOpAndOneTheOtherWayAnError() {
        try (KvTierCache cache = KvTierCache.open(config().build())) {
            cache.put("a", PositionRange.of(0, 1), MemorySegment.ofArray(new byte[PAGE]), Tier.CPU);
            long transfers = cache.stats().transfers();
            cache.demote("a", Tier.CPU);
            cache.promote("a", Tier.CPU);
            assertEquals(transfers, cache.stats().transfers(), "nothing moved");
            assertEquals(Tier.CPU, cache.get("a").orElseThrow().tier());
            assertThrows(IllegalArgumentException.class, () -> cache.demote("a", Tier.GPU));
            assertThrows(IllegalArgumentException.class, () -> cache.promote("a", Tier.DISK));
        }
    }

    /**
     * Every public method of the doors, called with each of its reference arguments null in turn (the others
     * valid), throws {@link IllegalArgumentException} whose message says which argument was null, and changes nothing.
     */
    @Test
    void aNullArgumentIsAnIllegalArgumentEverywhere() throws Exception {
        List<String> broken = new ArrayList<>();
        try (KvTierCache cache = KvTierCache.open(config().build())) {
            BlockLayout layout = BlockLayout.of(16, PAGE);
            PrefixBlockCache blocks = cache.prefixBlocks(layout);
            Samples samples = new Samples(cache, layout);
            checkNulls(cache, KvTierCache.class, samples, Set.of("removeListener"), broken);
            checkNulls(blocks, PrefixBlockCache.class, samples, Set.of(), broken);
            checkNulls(KvTierConfig.builder(), KvTierConfig.Builder.class, samples, Set.of(), broken);
            checkNulls(DiskPersistence.of("n"), DiskPersistence.class, samples, Set.of(), broken);
            checkNulls(new BlockHasher(), BlockHasher.class, samples, Set.of(), broken);
            checkNulls(null, KvTierConfig.class, samples, Set.of(), broken);
            checkNulls(null, ByteSizes.class, samples, Set.of("isShare"), broken);
            checkNulls(null, BlockLayout.class, samples, Set.of(), broken);
            checkNulls(null, KvTierCache.class, samples, Set.of(), broken);
            checkNulls(null, KvTierFlightRecording.class, samples, Set.of(), broken);
            try (KvTierMetrics metrics = new KvTierMetrics(cache)) {
                checkNulls(metrics, KvTierMetrics.class, samples, Set.of(), broken);
                assertThrows(IllegalArgumentException.class, () -> new KvTierMetrics(null));
            }
            assertFalse(cache.removeListener(null), "null has a documented meaning here");
            assertEquals(0, cache.stats().gpuUsed() + cache.stats().cpuUsed() + cache.stats().diskUsed(),
                    "no call with a null argument cached anything");
        }
        assertEquals(List.of(), broken);
    }

    /** Calls every public method of {@code type} ({@code target} null: its static ones) once per reference argument. */
    private static void checkNulls(Object target, Class<?> type, Samples samples, Set<String> exempt, List<String> broken)
            throws Exception {
        for (Method method : type.getMethods()) {
            if (method.getDeclaringClass() != type || exempt.contains(method.getName())
                    || Modifier.isStatic(method.getModifiers()) != (target == null) || method.isSynthetic()) {
                continue;
            }
            Class<?>[] parameters = method.getParameterTypes();
            for (int i = 0; i < parameters.length; i++) {
                if (parameters[i].isPrimitive()) {
                    continue;
                }
                Object[] arguments = new Object[parameters.length];
                for (int j = 0; j < parameters.length; j++) {
                    arguments[j] = j == i ? null : samples.of(parameters[j]);
                }
                String call = type.getSimpleName() + "." + method.getName() + " with argument " + i + " null";
                try {
                    method.invoke(target, arguments);
                    broken.add(call + ": returned");
                } catch (InvocationTargetException e) {
                    Throwable thrown = e.getCause();
                    if (!(thrown instanceof IllegalArgumentException) || thrown.getMessage() == null
                            || !thrown.getMessage().contains("null")) {
                        broken.add(call + ": " + thrown);
                    }
                }
            }
        }
    }

    /** A valid value of each argument type the doors take. */
    private static final class Samples {
        private final KvTierCache cache;
        private final BlockLayout layout;
        private final BlockHash hash = new BlockHasher().hash(BlockHash.ROOT, 1, 2, 3);

        Samples(KvTierCache cache, BlockLayout layout) {
            this.cache = cache;
            this.layout = layout;
        }

        Object of(Class<?> type) {
            if (type == int.class) {
                return 1;
            }
            if (type == long.class) {
                return (long) PAGE;
            }
            if (type == double.class) {
                return 0.5;
            }
            if (type == String.class) {
                return "sample";
            }
            if (type == Tier.class) {
                return Tier.CPU;
            }
            if (type == PositionRange.class) {
                return PositionRange.of(0, 16);
            }
            if (type == MemorySegment.class) {
                return MemorySegment.ofArray(new byte[PAGE]);
            }
            if (type == CacheChangeListener.class) {
                return new CacheChangeListener() { };
            }
            if (type == BlockLayout.class) {
                return layout;
            }
            if (type == BlockHash.class) {
                return hash;
            }
            if (type == List.class) {
                return List.of(hash);
            }
            if (type == int[].class) {
                return new int[] {1};
            }
            if (type == Path.class) {
                return Path.of("/tmp/sample");
            }
            if (type == DemotionPolicy.class) {
                return DemotionPolicy.defaultPolicy();
            }
            if (type == Backend.class) {
                return Backend.HOST;
            }
            if (type == DiskTransferMode.class) {
                return DiskTransferMode.AUTO;
            }
            if (type == Duration.class) {
                return Duration.ofSeconds(1);
            }
            if (type == DiskPersistence.class) {
                return DiskPersistence.of("sample");
            }
            if (type == Map.class) {
                return Map.of();
            }
            if (type == Properties.class) {
                return new Properties();
            }
            if (type == KvTierConfig.class) {
                return cache.config();
            }
            if (type.isEnum()) {
                return type.getEnumConstants()[0];
            }
            if (type == BlockLayout.LayerOrder.class) {
                return BlockLayout.LayerOrder.values()[0];
            }
            throw new AssertionError("no sample of " + type + ": add one");
        }
    }
}
