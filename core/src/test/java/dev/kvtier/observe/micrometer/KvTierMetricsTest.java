package dev.kvtier.observe.micrometer;

import dev.kvtier.Backend;
import dev.kvtier.CacheStats;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.SegmentCorruptedException;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockHasher;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The meters say what the cache did: each value against the cache's own stats and against the test's count. */
class KvTierMetricsTest {
    private static final int PAGE = 4096;

    @TempDir
    Path disk;

    private KvTierCache open() {
        return KvTierCache.open(KvTierConfig.builder().backend(Backend.HOST).pageSizeBytes(PAGE)
                .gpuBudgetBytes(2L * PAGE).cpuBudgetBytes(4L * PAGE).diskExtentBytes(16L * PAGE)
                .diskDirectory(disk).build());
    }

    @Test
    void metersMatchWhatTheCacheDid() throws IOException {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (KvTierCache cache = open(); KvTierMetrics metrics = new KvTierMetrics(cache, Tags.of("model", "m"))) {
            metrics.bindTo(registry);
            MemorySegment page = MemorySegment.ofArray(new byte[PAGE]);
            cache.put("a", PositionRange.of(0, 1), page, Tier.GPU);
            cache.put("b", PositionRange.of(1, 2), page, Tier.GPU);
            cache.put("c", PositionRange.of(2, 3), page, Tier.GPU); // GPU holds two: one of a, b goes to CPU
            cache.demote("c", Tier.DISK);
            long before = System.nanoTime();
            cache.ensureResident("c", Tier.GPU); // DISK -> GPU
            cache.ensureResident("c", Tier.CPU); // already faster: no move
            cache.ensureResidentAsync("c", Tier.CPU).join();
            long timedSpan = System.nanoTime() - before;
            String onCpu = cache.get("a").orElseThrow().tier() == Tier.CPU ? "a" : "b";
            cache.demote(onCpu, Tier.DISK);
            flipDiskBytes();
            assertThrows(SegmentCorruptedException.class, () -> cache.ensureResident(onCpu, Tier.CPU));

            CacheStats stats = cache.stats();
            // Counted by hand from the calls above.
            assertEquals(PAGE, counter(registry, "kvtier.moved", "from", "GPU", "to", "CPU"));
            assertEquals(PAGE, counter(registry, "kvtier.moved", "from", "GPU", "to", "DISK"));
            assertEquals(PAGE, counter(registry, "kvtier.moved", "from", "DISK", "to", "GPU"));
            assertEquals(PAGE, counter(registry, "kvtier.moved", "from", "CPU", "to", "DISK"));
            assertEquals(0, counter(registry, "kvtier.moved", "from", "DISK", "to", "CPU"));
            assertEquals(4, registry.get("kvtier.transfers").functionCounter().count());
            assertEquals(1, registry.get("kvtier.failures").functionCounter().count());
            // Per tier: the sizes of the segments the cache lists there, and its allocation.
            for (Tier tier : Tier.values()) {
                long listed = Stream.of("a", "b", "c").filter(k -> cache.get(k).orElseThrow().tier() == tier).count() * PAGE;
                assertEquals(listed, gauge(registry, "kvtier.tier.used", tier), "used on " + tier);
                assertEquals(stats.used(tier), gauge(registry, "kvtier.tier.used", tier), "used on " + tier);
                assertEquals(stats.allocated(tier), gauge(registry, "kvtier.tier.allocated", tier), "allocated on " + tier);
            }
            assertEquals(stats.transfers(), registry.get("kvtier.transfers").functionCounter().count());
            assertEquals(3, registry.get("kvtier.demotions").functionCounter().count(), "a or b, c and " + onCpu);
            assertEquals(0, registry.get("kvtier.evictions").functionCounter().count());
            // Lookups by the tier asked for: c on GPU came from DISK (a miss), on CPU was found on GPU twice (hits),
            // the corrupted segment on CPU failed (a miss).
            assertEquals(0, lookups(registry, "hit", Tier.GPU));
            assertEquals(1, lookups(registry, "miss", Tier.GPU));
            assertEquals(2, lookups(registry, "hit", Tier.CPU));
            assertEquals(1, lookups(registry, "miss", Tier.CPU));
            assertEquals(0, lookups(registry, "hit", Tier.DISK) + lookups(registry, "miss", Tier.DISK));

            Timer gpu = timer(registry, Tier.GPU, "success");
            Timer cpu = timer(registry, Tier.CPU, "success");
            assertEquals(1, gpu.count());
            assertEquals(2, cpu.count());
            assertEquals(1, timer(registry, Tier.CPU, "failure").count());
            assertEquals(0, timer(registry, Tier.DISK, "success").count());
            double timed = gpu.totalTime(TimeUnit.NANOSECONDS) + cpu.totalTime(TimeUnit.NANOSECONDS);
            assertTrue(timed > 0 && timed <= timedSpan, "timed " + timed + " ns of a span of " + timedSpan + " ns");
            assertEquals("m", registry.get("kvtier.ensure.resident").tag("tier", "GPU").timer().getId().getTag("model"));

            metrics.close(); // stops the timing, nothing else
            cache.ensureResident("c", Tier.GPU);
            assertEquals(1, gpu.count());
            cache.remove("c");
            assertEquals(stats.used(Tier.GPU) - PAGE, gauge(registry, "kvtier.tier.used", Tier.GPU));
        }
    }

    /** The prefix meters did not exist on main at 8d41ee6 (a runtime restoring prefixes saw no restore timed). */
    @Test
    void prefixLookupsCountBlocksAndRestoresAreTimed() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (KvTierCache cache = open(); KvTierMetrics metrics = new KvTierMetrics(cache)) {
            metrics.bindTo(registry);
            PrefixBlockCache blocks = cache.prefixBlocks(BlockLayout.of(16, PAGE));
            BlockHasher hasher = new BlockHasher();
            BlockHash first = hasher.hash(BlockHash.ROOT, 1);
            BlockHash second = hasher.hash(first, 2);
            BlockHash third = hasher.hash(second, 3);
            blocks.storeBlocks(BlockHash.ROOT, List.of(first, second), MemorySegment.ofArray(new byte[2 * PAGE]), Tier.DISK);
            assertEquals(2, blocks.lookupPrefix(List.of(first, second, third)).cachedBlocks());
            assertEquals(0, blocks.lookupPrefix(List.of(third)).cachedBlocks());
            assertEquals(2, registry.get("kvtier.prefix.lookups").counter().count());
            assertEquals(4, registry.get("kvtier.prefix.blocks").tag("result", "queried").counter().count());
            assertEquals(2, registry.get("kvtier.prefix.blocks").tag("result", "matched").counter().count());

            try (var pinned = blocks.ensurePrefixResident(List.of(first, second, third), Tier.GPU)) {
                assertEquals(2, pinned.size());
            }
            Timer restores = registry.get("kvtier.prefix.restore").tag("tier", "GPU").tag("outcome", "success").timer();
            assertEquals(1, restores.count());
            assertTrue(restores.totalTime(TimeUnit.NANOSECONDS) > 0);
            assertEquals(2, registry.get("kvtier.prefix.restore.blocks").tag("tier", "GPU").counter().count());
        }
    }

    @Test
    void evictionsFromABoundedDiskTierAreCounted() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (KvTierCache cache = KvTierCache.open(KvTierConfig.builder().backend(Backend.HOST).pageSizeBytes(PAGE)
                .gpuBudgetBytes(PAGE).cpuBudgetBytes(PAGE).diskBudgetBytes(PAGE).diskDirectory(disk).build());
             KvTierMetrics metrics = new KvTierMetrics(cache)) {
            metrics.bindTo(registry);
            cache.put("a", PositionRange.of(0, 1), MemorySegment.ofArray(new byte[PAGE]), Tier.DISK);
            cache.put("b", PositionRange.of(0, 1), MemorySegment.ofArray(new byte[PAGE]), Tier.DISK);
            assertEquals(1, registry.get("kvtier.evictions").functionCounter().count());
        }
    }

    @Test
    void aClosedCacheKeepsItsLastValuesAndABinderBindsOnce() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        KvTierCache cache = open();
        KvTierMetrics metrics = new KvTierMetrics(cache);
        metrics.bindTo(registry);
        cache.put("a", PositionRange.of(0, 1), MemorySegment.ofArray(new byte[3 * PAGE]), Tier.CPU);
        assertEquals(3 * PAGE, gauge(registry, "kvtier.tier.used", Tier.CPU));
        cache.close();
        assertEquals(3 * PAGE, gauge(registry, "kvtier.tier.used", Tier.CPU));
        assertEquals(0, registry.get("kvtier.transfers").functionCounter().count());
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> metrics.bindTo(new SimpleMeterRegistry()));
        assertTrue(twice.getMessage().contains("already bound"), twice.getMessage());
    }

    private static double lookups(SimpleMeterRegistry registry, String result, Tier tier) {
        return registry.get("kvtier.lookups").tag("result", result).tag("tier", tier.name()).counter().count();
    }

    private static double counter(SimpleMeterRegistry registry, String name, String... tags) {
        return registry.get(name).tags(tags).functionCounter().count();
    }

    private static double gauge(SimpleMeterRegistry registry, String name, Tier tier) {
        return registry.get(name).tag("tier", tier.name()).gauge().value();
    }

    private static Timer timer(SimpleMeterRegistry registry, Tier tier, String outcome) {
        return registry.get("kvtier.ensure.resident").tag("tier", tier.name()).tag("outcome", outcome).timer();
    }

    private void flipDiskBytes() throws IOException {
        List<Path> extents;
        try (Stream<Path> files = Files.list(disk)) {
            extents = files.filter(p -> p.toString().endsWith(".extent")).toList();
        }
        assertTrue(!extents.isEmpty(), "DISK extents live in " + disk);
        for (Path extent : extents) {
            try (FileChannel channel = FileChannel.open(extent, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                ByteBuffer all = ByteBuffer.allocate((int) channel.size());
                channel.read(all, 0);
                for (int i = 0; i < all.capacity(); i++) {
                    all.put(i, (byte) ~all.get(i));
                }
                channel.write(all.flip(), 0);
            }
        }
    }
}
