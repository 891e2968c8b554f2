package dev.kvtier.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The snapshot a segment's entry keeps for {@code get} (SegmentEntry#shown): handed out again while nothing it shows
 * changed, never once the tier or the access count moved on, also when a racing reader left a stale one behind.
 */
class SnapshotReuseTest {

    private static final PositionRange POSITIONS = PositionRange.of(0, 16);

    @Test
    void anUnchangedSegmentsSnapshotIsReusedAndAChangedOnesIsNot() {
        for (DemotionPolicy policy : List.of(DemotionPolicy.leastAccessedFirst(), DemotionPolicy.adaptiveS3Fifo(),
                DemotionPolicy.wTinyLfu())) {
            TieredStore store = new TieredStore(1_000, 1_000, policy);
            SegmentHandle handle = store.registerHandle(SegmentMeta.of("a", POSITIONS, 10), Tier.GPU);
            Optional<SegmentMeta> first = store.get("a");
            assertSame(first, store.get("a"), policy.name() + ": nothing changed, nothing allocated");
            assertSame(first, store.get(handle), policy.name());

            store.touch("a");
            Optional<SegmentMeta> touched = store.get("a");
            assertEquals(1, touched.orElseThrow().accessCount(), policy.name() + ": a touch is shown");
            assertSame(touched, store.get("a"), policy.name());

            TierTransfer down = store.demote("a", Tier.CPU).orElseThrow();
            assertEquals(Tier.CPU, store.get("a").orElseThrow().tier(), policy.name() + ": a demotion is shown");
            store.rollback(down);
            assertEquals(Tier.GPU, store.get("a").orElseThrow().tier(), policy.name() + ": a rollback is shown");
            store.demote("a", Tier.DISK).orElseThrow();
            store.promote("a", Tier.GPU).orElseThrow();
            SegmentMeta promoted = store.get(handle).orElseThrow();
            assertEquals(Tier.GPU, promoted.tier(), policy.name());
            assertEquals(2, promoted.accessCount(), policy.name() + ": a promotion is shown");

            store.touch(handle);
            Optional<SegmentMeta> removed = store.remove("a");
            assertEquals(SegmentMeta.placed("a", POSITIONS, 10, Tier.GPU, 3), removed.orElseThrow(),
                    policy.name() + ": the final snapshot shows the last touch");
            assertEquals(Optional.empty(), store.get("a"), policy.name());
            assertEquals(Optional.empty(), store.get(handle), policy.name());
        }
    }

    /**
     * What a get racing a change can leave in the entry (it read the state before a touch or a move and wrote its
     * snapshot after it; the optimistic read is then discarded or, for a touch without the lock, kept): a snapshot
     * that no longer shows the entry. Made by hand here; the next get must not hand it out.
     */
    @Test
    void aStaleSnapshotLeftByARacingGetIsNotHandedOut() throws ReflectiveOperationException {
        TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.leastAccessedFirst());
        SegmentEntry entry = (SegmentEntry) store.registerHandle(SegmentMeta.of("a", POSITIONS, 10), Tier.GPU);
        store.touch("a");
        store.touch("a");
        Field shown = SegmentEntry.class.getDeclaredField("shown");
        shown.setAccessible(true);
        shown.set(entry, Optional.of(SegmentMeta.placed("a", POSITIONS, 10, Tier.GPU, 1))); // the count before a touch
        assertEquals(2, store.get("a").orElseThrow().accessCount());
        shown.set(entry, Optional.of(SegmentMeta.placed("a", POSITIONS, 10, Tier.CPU, 2))); // the tier of another move
        assertEquals(Tier.GPU, store.get("a").orElseThrow().tier());
        shown.set(entry, Optional.of(SegmentMeta.placed("a", POSITIONS, 10, Tier.GPU, 1)));
        assertEquals(2, store.remove("a").orElseThrow().accessCount(), "the final snapshot too");
    }

    /**
     * Gets racing touches without the lock (least-accessed-first) and moves under it: whatever snapshots the
     * racing gets cached, once the writers stop every get shows exactly the entry's state (as segments() builds
     * it afresh). (Not compared during the race: a touch without the lock may lose a racing increment, so a count
     * may even fall back.)
     */
    @Test
    void getsRacingTouchesAndMovesShowTheFinalStateOnceTheyStop() throws InterruptedException {
        for (DemotionPolicy policy : List.of(DemotionPolicy.leastAccessedFirst(), DemotionPolicy.adaptiveS3Fifo())) {
            TieredStore store = new TieredStore(1_000_000, 1_000_000, policy);
            int keys = 8;
            for (int k = 0; k < keys; k++) {
                store.register(SegmentMeta.of("k" + k, POSITIONS, 10), Tier.GPU);
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch started = new CountDownLatch(3);
            Runnable toucher = () -> {
                started.countDown();
                for (int i = 0; !stop.get(); i++) {
                    store.touch("k" + (i % keys));
                }
            };
            Runnable mover = () -> {
                started.countDown();
                for (int i = 0; !stop.get(); i++) {
                    String key = "k" + (i % keys);
                    store.demote(key, Tier.CPU);
                    store.promote(key, Tier.GPU);
                }
            };
            Thread getter = new Thread(() -> {
                started.countDown();
                try {
                    for (int i = 0; !stop.get(); i++) {
                        store.get("k" + (i % keys)).orElseThrow();
                    }
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
            Thread[] writers = {new Thread(toucher), new Thread(mover)};
            for (Thread writer : writers) {
                writer.start();
            }
            getter.start();
            assertTrue(started.await(30, TimeUnit.SECONDS));
            Thread.sleep(300);
            stop.set(true);
            for (Thread writer : writers) {
                writer.join();
            }
            getter.join();
            assertEquals(null, failure.get(), policy.name());
            List<SegmentMeta> truth = store.segments();
            for (int k = 0; k < keys; k++) {
                SegmentMeta now = truth.get(k);
                Optional<SegmentMeta> got = store.get("k" + k);
                assertEquals(now, got.orElseThrow(), policy.name() + ": k" + k);
                assertNotSame(now, got.orElseThrow(), "segments() builds its own");
            }
        }
    }
}
