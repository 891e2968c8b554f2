package dev.kvtier;

import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * DESIGN principle 12 for listeners: a {@link CacheChangeListener} runs outside the cache's locks and operations, so it
 * may call back into the cache, from its own thread or by handing work to another and waiting for it. On main at
 * 4c7eaf0 listeners ran under the changed segment's lock: a listener waiting for another thread's read of that key
 * waited for itself (the read timed out), and a change made from a listener was heard before the one that caused it
 * had finished being told.
 */
class ListenerOutsideLocksTest {
    private static final int PAGE = 4096;

    @TempDir
    Path disk;

    private KvTierCache open() {
        return KvTierCache.open(KvTierConfig.builder().backend(Backend.HOST).pageSizeBytes(PAGE)
                .gpuBudgetBytes(4L * PAGE).cpuBudgetBytes(8L * PAGE).diskExtentBytes(16L * PAGE)
                .diskDirectory(disk).build());
    }

    @Test
    void aListenerWaitingForAnotherThreadsReadOfTheSameKeyDoesNotWaitForItself() {
        byte[] bytes = new byte[PAGE];
        bytes[7] = 42;
        try (KvTierCache cache = open()) {
            List<byte[]> readBack = new CopyOnWriteArrayList<>();
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            cache.addListener(new CacheChangeListener() {
                @Override
                public void segmentAdded(String key, Tier tier, long size) {
                    try { // a runtime handing the new segment to a worker and waiting for it
                        readBack.add(CompletableFuture.supplyAsync(() -> {
                            byte[] copy = new byte[PAGE];
                            cache.read(key, MemorySegment.ofArray(copy));
                            return copy;
                        }).get(5, TimeUnit.SECONDS));
                    } catch (Exception e) {
                        failures.add(e);
                    }
                }
            });
            cache.put("turn-1", PositionRange.of(0, 16), MemorySegment.ofArray(bytes), Tier.GPU);
            assertEquals(List.of(), failures, "the listener's read of the key it heard of");
            assertEquals(1, readBack.size());
            assertArrayEquals(bytes, readBack.get(0));
        }
    }

    @Test
    void aChangeMadeByAListenerIsHeardAfterTheOneThatCausedIt() {
        try (KvTierCache cache = open()) {
            List<String> heard = new CopyOnWriteArrayList<>();
            cache.addListener(new CacheChangeListener() {
                @Override
                public void segmentAdded(String key, Tier tier, long size) {
                    heard.add("added " + key + " " + tier);
                    cache.demote(key, Tier.CPU); // a listener spilling what it hears of at once
                    heard.add("demoted " + key);
                }

                @Override
                public void segmentMoved(String key, Tier from, Tier to, long size) {
                    heard.add("moved " + key + " " + from + "->" + to);
                }
            });
            cache.put("turn-1", PositionRange.of(0, 16), MemorySegment.ofArray(new byte[PAGE]), Tier.GPU);
            assertEquals(List.of("added turn-1 GPU", "demoted turn-1", "moved turn-1 GPU->CPU"), heard);
        }
    }
}
