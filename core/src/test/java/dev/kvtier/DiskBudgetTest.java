package dev.kvtier;

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
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A bounded DISK tier ({@link KvTierConfig#diskBudgetBytes()}): a full one makes room by evicting the policy's
 * candidates from the cache, counted; a prefix chain leaves it tail first; a persisted directory larger than the
 * budget is recovered up to it. On main at 8d41ee6 the DISK tier had no budget (this test did not compile there).
 */
class DiskBudgetTest {
    private static final int PAGE = 4096;

    @TempDir
    Path disk;

    private KvTierConfig.Builder config(int diskPages) {
        return KvTierConfig.builder().backend(Backend.HOST).pageSizeBytes(PAGE).gpuBudgetBytes(2L * PAGE)
                .cpuBudgetBytes(2L * PAGE).diskBudgetBytes((long) diskPages * PAGE).diskExtentBytes(16L * PAGE)
                .diskDirectory(disk).policy(DemotionPolicy.leastRecentlyUsed()).roomBatchFraction(0);
    }

    private static MemorySegment page(int fill) {
        byte[] bytes = new byte[PAGE];
        java.util.Arrays.fill(bytes, (byte) fill);
        return MemorySegment.ofArray(bytes);
    }

    /** Removals heard by a listener, as "key tier". */
    private static final class Removals implements CacheChangeListener {
        final List<String> heard = Collections.synchronizedList(new ArrayList<>());

        @Override
        public void segmentRemoved(String key, Tier tier, long bytes) {
            heard.add(key + " " + tier);
        }
    }

    @Test
    void aFullDiskTierEvictsInThePolicysOrderAndCountsIt() {
        try (KvTierCache cache = KvTierCache.open(config(3).build())) {
            Removals removals = new Removals();
            cache.addListener(removals);
            for (String key : List.of("a", "b", "c")) {
                cache.put(key, PositionRange.of(0, 1), page(key.charAt(0)), Tier.DISK);
            }
            cache.ensureResident("a", Tier.DISK); // a use: b is now the least recently used
            cache.put("d", PositionRange.of(0, 1), page('d'), Tier.DISK);
            assertTrue(cache.get("b").isEmpty(), "b, least recently used, was evicted");
            assertEquals(List.of("b DISK"), removals.heard);
            assertEquals(1, cache.stats().evictions());
            assertEquals(3L * PAGE, cache.stats().diskUsed());

            // Room made on a full CPU tier spills its victim to the full DISK tier, which evicts for it: c is now the
            // least recently used there. An explicit demote makes no room (as on every tier), so it fails instead.
            cache.put("e1", PositionRange.of(0, 1), page(1), Tier.CPU);
            cache.put("e2", PositionRange.of(0, 1), page(2), Tier.CPU);
            assertThrows(TierFullException.class, () -> cache.demote("e1", Tier.DISK));
            cache.put("e3", PositionRange.of(0, 1), page(3), Tier.CPU);
            assertEquals(Tier.DISK, cache.get("e1").orElseThrow().tier());
            assertTrue(cache.get("c").isEmpty());
            assertEquals(List.of("b DISK", "c DISK"), removals.heard);
            assertEquals(2, cache.stats().evictions());
            MemorySegment read = MemorySegment.ofArray(new byte[PAGE]);
            cache.read("e1", read);
            assertEquals(-1L, page(1).mismatch(read), "the spilled segment's bytes are intact");
            cache.read("a", read);
            assertEquals(-1L, page('a').mismatch(read), "a survivor's bytes are intact");

            TierFullException tooLarge = assertThrows(TierFullException.class, () -> cache.put("huge",
                    PositionRange.of(0, 1), MemorySegment.ofArray(new byte[4 * PAGE]), Tier.DISK));
            assertTrue(tooLarge.getMessage().contains("larger than the DISK budget"), tooLarge.getMessage());
            assertTrue(cache.remove("a").isPresent());
            assertEquals(2, cache.stats().evictions(), "a removal asked for is not an eviction");
        }
    }

    @Test
    void aChainLeavesAFullDiskTierTailFirst() {
        try (KvTierCache cache = KvTierCache.open(config(3).build())) {
            PrefixBlockCache blocks = cache.prefixBlocks(BlockLayout.of(16, PAGE));
            BlockHasher hasher = new BlockHasher();
            BlockHash root = hasher.hash(BlockHash.ROOT, 1);
            BlockHash middle = hasher.hash(root, 2);
            BlockHash tail = hasher.hash(middle, 3);
            MemorySegment bytes = MemorySegment.ofArray(new byte[3 * PAGE]);
            assertEquals(3, blocks.storeBlocks(BlockHash.ROOT, List.of(root, middle, tail), bytes, Tier.DISK));
            // The root is the least recently used, then the middle: each is refused while its child is cached.
            cache.put("x", PositionRange.of(0, 1), page('x'), Tier.DISK);
            assertEquals(2, blocks.lookupPrefix(List.of(root, middle, tail)).cachedBlocks(), "the tail left first");
            cache.put("y", PositionRange.of(0, 1), page('y'), Tier.DISK);
            assertEquals(1, blocks.lookupPrefix(List.of(root, middle, tail)).cachedBlocks(), "then the middle");
            assertEquals(2, cache.stats().evictions());
        }
    }

    @Test
    void aPersistedDirectoryLargerThanTheBudgetIsRecoveredUpToIt() {
        DiskPersistence persistence = DiskPersistence.of("disk-budget-test");
        try (KvTierCache cache = KvTierCache.open(config(4).persistence(persistence).build())) {
            for (String key : List.of("a", "b", "c", "d")) {
                cache.put(key, PositionRange.of(0, 1), page(key.charAt(0)), Tier.DISK);
            }
        }
        try (KvTierCache cache = KvTierCache.open(config(2).persistence(persistence).build())) {
            RecoveryReport report = cache.recovery().orElseThrow();
            assertEquals(2, report.recovered(), report::toString);
            assertEquals(2L, report.discarded().get(RecoveryReport.DiscardReason.OVER_BUDGET), report::toString);
            assertEquals(2L * PAGE, cache.stats().diskUsed());
            for (String key : report.recoveredKeys()) {
                MemorySegment read = MemorySegment.ofArray(new byte[PAGE]);
                cache.read(key, read);
                assertEquals(-1L, page(key.charAt(0)).mismatch(read), key);
            }
        }
    }

    @Test
    void theOpenSaysWhereTheDiskTierIsAndThatItIsUnbounded() {
        Logger logger = Logger.getLogger("dev.kvtier.tiering.TieringEngine");
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                lines.add(record.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(handler);
        try {
            try (KvTierCache cache = KvTierCache.open(KvTierConfig.builder().backend(Backend.HOST)
                    .gpuBudgetBytes(PAGE).cpuBudgetBytes(PAGE).build())) {
                cache.stats();
            }
            try (KvTierCache cache = KvTierCache.open(config(3).build())) {
                cache.stats();
            }
        } finally {
            logger.removeHandler(handler);
        }
        List<String> opens = lines.stream().filter(line -> line.startsWith("kvtier backend: ")).toList();
        assertEquals(2, opens.size(), lines::toString);
        assertTrue(opens.get(0).contains("(a temporary directory, deleted on close: set diskDirectory to choose one)")
                && opens.get(0).contains("unbounded until the file system is full"), opens.get(0));
        assertTrue(opens.get(1).contains("DISK tier: " + disk + ", budget " + 3 * PAGE + " bytes"), opens.get(1));
    }
}
