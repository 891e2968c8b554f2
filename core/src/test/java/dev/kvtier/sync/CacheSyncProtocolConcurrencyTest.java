package dev.kvtier.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Several threads record events at once; afterwards (and during, for readers) the state is one that
 * some serial order of those events produces. Bounded in operations, never in time.
 */
class CacheSyncProtocolConcurrencyTest {
    private static final int THREADS = 8;
    private static final int EVENTS_PER_THREAD = 5_000;
    private static final int WORLD = 4;
    private static final int LAYERS = 6;
    private static final int PREFIX_IDS = 16;
    /** Every thread's payload (seqPos / numTokens) is {@code thread * TAG + i}: tells who sent it and when. */
    private static final long TAG = 1_000_000L;

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void concurrentRecordingIsLinearizableAndLosesNothing() throws Exception {
        CacheSyncProtocol proto = new CacheSyncProtocol(WORLD, LAYERS).withMaxLogSize(THREADS * EVENTS_PER_THREAD);
        List<List<SyncEvent>> sentByThread = runConcurrently(THREADS, thread -> {
            SplittableRandom random = new SplittableRandom(thread);
            List<SyncEvent> sent = new ArrayList<>(EVENTS_PER_THREAD);
            for (int i = 0; i < EVENTS_PER_THREAD; i++) {
                long payload = thread * TAG + i;
                int roll = random.nextInt(100);
                SyncEvent event;
                if (roll < 55) {
                    event = new SyncEvent.ShardUpdated(random.nextInt(WORLD), random.nextInt(LAYERS), payload);
                } else if (roll < 75) {
                    event = new SyncEvent.ShardEvicted(random.nextInt(WORLD), random.nextInt(LAYERS), payload);
                } else if (roll < 99) {
                    event = new SyncEvent.PrefixConfirmed(random.nextLong() % PREFIX_IDS, payload);
                } else {
                    event = new SyncEvent.FlushAll();
                }
                proto.recordEvent(event);
                sent.add(event);
                if (roll % 10 == 0) {
                    // Readers interleaved with writers must never see a broken snapshot.
                    List<SyncEvent> recent = proto.recentEvents(8);
                    assertTrue(recent.size() <= 8 && recent.stream().allMatch(java.util.Objects::nonNull));
                    proto.minSyncedPosition(random.nextInt(LAYERS));
                }
            }
            return sent;
        });

        // Nothing lost: the log holds every event, and each thread's events in the order it sent them.
        int total = THREADS * EVENTS_PER_THREAD;
        assertEquals(total, proto.eventCount());
        List<SyncEvent> log = proto.recentEvents(total);
        List<List<SyncEvent>> loggedByThread = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            loggedByThread.add(new ArrayList<>());
        }
        int flushesLogged = 0;
        for (SyncEvent event : log) {
            if (event instanceof SyncEvent.FlushAll) {
                flushesLogged++;
            } else {
                loggedByThread.get((int) (payload(event) / TAG)).add(event);
            }
        }
        int flushesSent = 0;
        for (int t = 0; t < THREADS; t++) {
            List<SyncEvent> sentWithoutFlushes = new ArrayList<>();
            for (SyncEvent event : sentByThread.get(t)) {
                if (event instanceof SyncEvent.FlushAll) {
                    flushesSent++;
                } else {
                    sentWithoutFlushes.add(event);
                }
            }
            assertEquals(sentWithoutFlushes, loggedByThread.get(t), "events of thread " + t);
        }
        assertEquals(flushesSent, flushesLogged);

        // Linearizable: replaying the log serially gives exactly the concurrent end state.
        CacheSyncProtocol replay = new CacheSyncProtocol(WORLD, LAYERS);
        log.forEach(replay::recordEvent);
        for (int layer = 0; layer < LAYERS; layer++) {
            assertEquals(replay.minSyncedPosition(layer), proto.minSyncedPosition(layer), "layer " + layer);
            for (int rank = 0; rank < WORLD; rank++) {
                assertEquals(replay.latestPosition(rank, layer), proto.latestPosition(rank, layer),
                        "rank " + rank + " layer " + layer);
            }
        }
        for (long id = -PREFIX_IDS + 1; id < PREFIX_IDS; id++) {
            assertEquals(replay.prefixTokens(id), proto.prefixTokens(id), "prefix " + id);
            assertEquals(replay.isPrefixConfirmed(id), proto.isPrefixConfirmed(id), "prefix " + id);
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void readersSeeEachRanksProgressOnlyGrow() throws Exception {
        // Writer r owns rank r and reports increasing positions; readers check that what they see
        // never goes back and that minSyncedPosition never exceeds any position read after it.
        int writers = WORLD;
        int readers = 4;
        int rounds = 3_000;
        CacheSyncProtocol proto = new CacheSyncProtocol(WORLD, LAYERS).withMaxLogSize(64);
        runConcurrently(writers + readers, worker -> {
            if (worker < writers) {
                for (int round = 0; round < rounds; round++) {
                    for (int layer = 0; layer < LAYERS; layer++) {
                        proto.recordEvent(new SyncEvent.ShardUpdated(worker, layer, round));
                    }
                }
                return List.of();
            }
            long[] lastSeen = new long[WORLD * LAYERS];
            long[] lastMin = new long[LAYERS];
            java.util.Arrays.fill(lastSeen, -1);
            java.util.Arrays.fill(lastMin, -1);
            for (int check = 0; check < rounds; check++) {
                int layer = check % LAYERS;
                OptionalLong min = proto.minSyncedPosition(layer);
                long minValue = min.orElse(-1);
                assertTrue(minValue >= lastMin[layer], "min of layer " + layer + " went back");
                lastMin[layer] = minValue;
                for (int rank = 0; rank < WORLD; rank++) {
                    long seen = proto.latestPosition(rank, layer).orElse(-1);
                    assertTrue(seen >= lastSeen[rank * LAYERS + layer], "rank " + rank + " layer " + layer + " went back");
                    assertTrue(seen >= minValue, "a rank read after the min is below it");
                    lastSeen[rank * LAYERS + layer] = seen;
                }
                List<SyncEvent> recent = proto.recentEvents(100);
                assertTrue(recent.size() <= 64, "log over its bound: " + recent.size());
            }
            return List.of();
        });
        for (int layer = 0; layer < LAYERS; layer++) {
            assertEquals(OptionalLong.of(rounds - 1), proto.minSyncedPosition(layer));
        }
        assertEquals(64, proto.eventCount());
    }

    private static long payload(SyncEvent event) {
        return switch (event) {
            case SyncEvent.ShardUpdated e -> e.seqPos();
            case SyncEvent.ShardEvicted e -> e.seqPos();
            case SyncEvent.PrefixConfirmed e -> e.numTokens();
            case SyncEvent.FlushAll _ -> throw new IllegalArgumentException("FlushAll has no payload");
        };
    }

    private interface Worker {
        List<SyncEvent> run(int index) throws Exception;
    }

    /** Runs {@code count} workers released together; returns their results in worker order, rethrowing failures. */
    private static List<List<SyncEvent>> runConcurrently(int count, Worker worker) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(count);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<List<SyncEvent>>> futures = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                int index = i;
                Callable<List<SyncEvent>> task = () -> {
                    start.await();
                    return worker.run(index);
                };
                futures.add(pool.submit(task));
            }
            start.countDown();
            List<List<SyncEvent>> results = new ArrayList<>();
            for (Future<List<SyncEvent>> future : futures) {
                results.add(future.get());
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }
}
