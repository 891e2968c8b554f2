package dev.kvtier;

import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
import dev.kvtier.testing.FaultLogRouting;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Listeners hear of committed changes only, with their tiers, in order; a throwing listener changes nothing. */
@Tag(FaultLogRouting.TAG)
class CacheChangeListenerTest {
    private static final int PAGE = 4096;

    @TempDir
    Path disk;

    /** Records every call as one line. */
    private static final class Recorder implements CacheChangeListener {
        final List<String> heard = new ArrayList<>();

        @Override
        public synchronized void segmentAdded(String key, Tier tier, long bytes) {
            heard.add("added " + key + " " + tier + " " + bytes);
        }

        @Override
        public synchronized void segmentMoved(String key, Tier from, Tier to, long bytes) {
            heard.add("moved " + key + " " + from + "->" + to + " " + bytes);
        }

        @Override
        public synchronized void segmentRemoved(String key, Tier tier, long bytes) {
            heard.add("removed " + key + " " + tier + " " + bytes);
        }

        @Override
        public synchronized void ensureResidentCompleted(String key, Tier tier, Tier foundOn, long nanos) {
            assertTrue(nanos >= 0, "nanos " + nanos);
            heard.add("resident " + key + " " + tier + " found on " + foundOn);
        }
    }

    private KvTierCache open(UnaryOperator<dev.kvtier.exec.ExecutionBackend> decorate) {
        return KvTierCache.open(KvTierConfig.builder().backend(Backend.HOST).pageSizeBytes(PAGE)
                .gpuBudgetBytes(2L * PAGE).cpuBudgetBytes(8L * PAGE).diskExtentBytes(16L * PAGE)
                .diskDirectory(disk).build(), decorate);
    }

    @Test
    void hearsPrefixBlocksStoredAndRemoved() {
        Recorder recorder = new Recorder();
        try (KvTierCache cache = open(UnaryOperator.identity())) {
            cache.addListener(recorder);
            var blocks = cache.prefixBlocks(dev.kvtier.prefix.BlockLayout.of(16, PAGE));
            var root = dev.kvtier.prefix.BlockHasher.namespaceRoot("listener-test");
            var hasher = new dev.kvtier.prefix.BlockHasher();
            var first = hasher.hash(root, 1, 2, 3);
            var second = hasher.hash(first, 4, 5, 6);
            blocks.storeBlocks(dev.kvtier.prefix.BlockHash.ROOT, List.of(first, second), MemorySegment.ofArray(new byte[2 * PAGE]));
            assertTrue(blocks.removeBlock(second));
            String firstKey = dev.kvtier.prefix.PrefixBlockCache.keyOf(first);
            String secondKey = dev.kvtier.prefix.PrefixBlockCache.keyOf(second);
            assertEquals(List.of("added " + firstKey + " GPU 4096", "added " + secondKey + " GPU 4096",
                    "removed " + secondKey + " GPU 4096"), recorder.heard);
        }
    }

    @Test
    void hearsEachCommittedChangeWithItsTiers() {
        Recorder recorder = new Recorder();
        try (KvTierCache cache = open(UnaryOperator.identity())) {
            cache.addListener(recorder);
            MemorySegment page = MemorySegment.ofArray(new byte[PAGE]);
            cache.put("a", PositionRange.of(0, 1), page, Tier.GPU);
            cache.put("b", PositionRange.of(1, 2), page, Tier.GPU);
            cache.put("c", PositionRange.of(2, 3), page, Tier.GPU); // evicts the least recently used, a
            cache.demote("c", Tier.DISK);
            cache.ensureResident("c", Tier.CPU);
            cache.ensureResidentAsync("c", Tier.CPU).join();
            try (SegmentPin pinned = cache.pin("a", Tier.GPU)) { // a move, but no ensureResident call of the caller's
                assertEquals(Tier.GPU, pinned.segment().tier());
            }
            cache.remove("b");
            assertThrows(SegmentNotFoundException.class, () -> cache.ensureResident("gone", Tier.GPU));
            assertEquals(List.of(
                    "added a GPU 4096", "added b GPU 4096", "moved a GPU->CPU 4096", "added c GPU 4096",
                    "moved c GPU->DISK 4096", "moved c DISK->CPU 4096", "resident c CPU found on DISK",
                    "resident c CPU found on CPU",
                    "moved a CPU->GPU 4096", "removed b GPU 4096", "resident gone GPU found on null"), recorder.heard);
            assertTrue(cache.removeListener(recorder));
            assertFalse(cache.removeListener(recorder));
            cache.remove("a");
            assertEquals(11, recorder.heard.size(), "nothing after removal: " + recorder.heard);
        }
    }

    @Test
    void aRolledBackMoveIsNotHeardAndAThrowingListenerChangesNothing() {
        Recorder recorder = new Recorder();
        try (KvTierCache cache = open(FaultInjectingBackend.failingCopy(2))) {
            cache.addListener(new CacheChangeListener() {
                @Override
                public void segmentAdded(String key, Tier tier, long bytes) {
                    throw new IllegalStateException("a broken listener");
                }
            });
            cache.addListener(recorder);
            cache.put("a", PositionRange.of(0, 1), MemorySegment.ofArray(new byte[PAGE]), Tier.CPU); // copy 1
            assertThrows(TransferFailedException.class, () -> cache.demote("a", Tier.DISK)); // copy 2 fails
            cache.demote("a", Tier.DISK);
            assertEquals(List.of("added a CPU 4096", "moved a CPU->DISK 4096"), recorder.heard);
            assertEquals(Tier.DISK, cache.get("a").orElseThrow().tier());
        }
    }
}
