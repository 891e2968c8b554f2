package dev.kvtier.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link SegmentHandle}: the handle-taking methods answer as the key-based ones; stale and foreign handles. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SegmentHandleTest {

    private static SegmentMeta seg(String key, long size) {
        return SegmentMeta.of(key, PositionRange.of(0, 4), size);
    }

    @Test
    void aHandleDoesWhatItsKeyDoes() {
        for (DemotionPolicy policy : List.of(DemotionPolicy.leastAccessedFirst(), DemotionPolicy.defaultPolicy())) {
            TieredStore byHandle = new TieredStore(100, 100, policy);
            TieredStore byKey = new TieredStore(100, 100, policy);
            SegmentHandle a = byHandle.registerHandle(seg("a", 10), Tier.GPU);
            SegmentHandle b = byHandle.registerHandle(seg("b", 20), Tier.GPU);
            assertTrue(byKey.register(seg("a", 10), Tier.GPU) && byKey.register(seg("b", 20), Tier.GPU));
            assertEquals("a", a.key());
            assertSame(a, byHandle.handle("a"), "handle(key) names the same registration");
            assertNull(byHandle.handle("nope"));

            assertEquals(byKey.touch("a"), byHandle.touch(a));
            assertEquals(byKey.demote("a", Tier.CPU), byHandle.demote(a, Tier.CPU));
            assertEquals(byKey.demote("a", Tier.CPU), byHandle.demote(a, Tier.CPU), "not slower: refused alike");
            assertEquals(byKey.tierOf("a"), byHandle.tierOf(a));
            assertEquals(byKey.promote("a", Tier.GPU), byHandle.promote(a, Tier.GPU));
            assertEquals(byKey.demote("b", Tier.DISK), byHandle.demote(b, Tier.DISK));
            assertEquals(byKey.hold("a"), byHandle.hold(a));
            assertEquals(byKey.release("a"), byHandle.release(a));
            assertEquals(byKey.get("a"), byHandle.get(a));
            assertEquals(byKey.get("b"), byHandle.get(b));
            assertEquals(byKey.segments(), byHandle.segments());
            assertEquals(byKey.candidatesForDemotion(Tier.GPU, 1), byHandle.candidatesForDemotion(Tier.GPU, 1));
            assertEquals(byKey.remove("a"), byHandle.remove(a));
            assertEquals(byKey.segments(), byHandle.segments());
            assertEquals(byKey.toString(), byHandle.toString());
        }
    }

    @Test
    void aRefusedRegistrationGivesNoHandle() {
        TieredStore store = new TieredStore(100, 100);
        assertNotNull(store.registerHandle(seg("a", 60), Tier.GPU));
        assertNull(store.registerHandle(seg("a", 1), Tier.GPU), "duplicate key");
        assertNull(store.registerHandle(seg("b", 60), Tier.GPU), "no room");
        assertEquals(1, store.numSegments());
        assertEquals(60, store.gpuUsed());
    }

    @Test
    void aStaleHandleAnswersAsAnUnknownKeyEvenAfterTheKeyIsRegisteredAgain() {
        TieredStore store = new TieredStore(100, 100);
        SegmentHandle old = store.registerHandle(seg("a", 10), Tier.GPU);
        assertTrue(store.touch(old));
        assertEquals(1, store.remove(old).orElseThrow().accessCount());
        assertStale(store, old);

        SegmentHandle again = store.registerHandle(seg("a", 30), Tier.CPU);
        assertNotSame(old, again, "a new registration gets a new handle");
        assertSame(again, store.handle("a"));
        assertStale(store, old);
        List<SegmentMeta> before = store.segments();
        assertEquals(30, store.cpuUsed());
        assertEquals(0, store.gpuUsed());
        assertEquals(before, store.segments(), "the stale handle changed nothing of the new registration");
        assertEquals(0, store.get(again).orElseThrow().accessCount());
        assertTrue(store.touch(again));
        assertEquals(Tier.CPU, store.tierOf(again));
        assertTrue(store.promote(again, Tier.GPU).isPresent());
        assertEquals(2, store.remove(again).orElseThrow().accessCount());
        assertStale(store, again);
        assertEquals(0, store.numSegments());
        assertEquals(0, store.gpuUsed() + store.cpuUsed() + store.diskUsed());
    }

    private static void assertStale(TieredStore store, SegmentHandle stale) {
        assertEquals("a", stale.key(), "the key stays readable");
        assertFalse(store.touch(stale));
        assertNull(store.tierOf(stale));
        assertEquals(Optional.empty(), store.get(stale));
        assertEquals(Optional.empty(), store.demote(stale, Tier.DISK));
        assertEquals(Optional.empty(), store.promote(stale, Tier.GPU));
        assertFalse(store.hold(stale));
        assertFalse(store.release(stale));
        assertEquals(Optional.empty(), store.remove(stale));
    }

    @Test
    void anotherStoresHandleIsRefusedNamingIt() {
        TieredStore mine = new TieredStore(100, 100);
        TieredStore theirs = new TieredStore(100, 100);
        assertTrue(mine.register(seg("a", 10), Tier.GPU));
        SegmentHandle foreign = theirs.registerHandle(seg("a", 10), Tier.GPU);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> mine.touch(foreign));
        assertTrue(e.getMessage().contains("segment a belongs to another store"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> mine.remove(foreign));
        assertThrows(IllegalArgumentException.class, () -> mine.demote(foreign, Tier.CPU));
        assertEquals(0, mine.get("a").orElseThrow().accessCount(), "nothing changed in either store");
        assertEquals(10, mine.gpuUsed());
        assertEquals(0, theirs.get(foreign).orElseThrow().accessCount());
    }

    /**
     * Workers touch, demote and promote through handles while one thread keeps removing segments by handle and
     * registering them again. Every access a worker saw succeed on a handle must be in the access count that
     * handle's removal returned: an access succeeding on a stale handle, or lost, breaks the equality.
     */
    @Test
    void accessesThroughHandlesRaceRemovalsWithoutLosingOrLeakingOne() throws InterruptedException {
        // W-TinyLFU's tracker takes every touch under the lock: there no access may be lost.
        accessesThroughHandlesRaceRemovals(DemotionPolicy.wTinyLfu());
    }

    /**
     * The same race where touches take no lock (the default policy): racing touches may lose increments (their own
     * or a promotion's) by contract, but an access never counts on a registration unless it succeeded there.
     */
    @Test
    void touchesWithoutTheLockRacingRemovalsNeverCountOnARegistrationMoreThanSucceededThere()
            throws InterruptedException {
        accessesThroughHandlesRaceRemovals(DemotionPolicy.defaultPolicy());
    }

    private static void accessesThroughHandlesRaceRemovals(DemotionPolicy policy) throws InterruptedException {
        int keys = 64;
        int workers = 3;
        TieredStore store = new TieredStore(keys * 10L, keys * 10L, policy);
        boolean lossy = policy.newTracker(1, 1).takesConcurrentUses();
        AtomicReferenceArray<SegmentHandle> current = new AtomicReferenceArray<>(keys);
        Map<SegmentHandle, AtomicLong> accessesSeen = new ConcurrentHashMap<>();
        Map<SegmentHandle, Long> countAtRemoval = new ConcurrentHashMap<>();
        for (int i = 0; i < keys; i++) {
            SegmentHandle h = store.registerHandle(seg("k" + i, 10), Tier.GPU);
            accessesSeen.put(h, new AtomicLong());
            current.set(i, h);
        }
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < workers; t++) {
            SplittableRandom random = new SplittableRandom(t);
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    for (int op = 0; op < 200_000 && !stop.get(); op++) {
                        SegmentHandle h = current.get(random.nextInt(keys));
                        switch (random.nextInt(4)) {
                            case 0, 1 -> {
                                if (store.touch(h)) {
                                    accessesSeen.get(h).incrementAndGet();
                                }
                            }
                            case 2 -> store.demote(h, Tier.CPU);
                            default -> {
                                if (store.promote(h, Tier.GPU).isPresent()) {
                                    accessesSeen.get(h).incrementAndGet();
                                }
                            }
                        }
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
        }
        Thread remover = Thread.ofPlatform().start(() -> {
            try {
                start.await();
                SplittableRandom random = new SplittableRandom(99);
                for (int round = 0; round < 20_000 && failures.isEmpty(); round++) {
                    int i = random.nextInt(keys);
                    SegmentHandle old = current.get(i);
                    countAtRemoval.put(old, store.remove(old).orElseThrow().accessCount());
                    SegmentHandle fresh = store.registerHandle(seg("k" + i, 10), Tier.GPU);
                    accessesSeen.put(fresh, new AtomicLong());
                    current.set(i, fresh);
                }
            } catch (Throwable e) {
                failures.add(e);
            } finally {
                stop.set(true);
            }
        });
        start.countDown();
        remover.join();
        for (Thread t : threads) {
            t.join();
        }
        assertTrue(failures.isEmpty(), () -> "failures: " + failures);
        for (int i = 0; i < keys; i++) {
            SegmentHandle h = current.get(i);
            countAtRemoval.put(h, store.remove(h).orElseThrow().accessCount());
        }
        assertEquals(0, store.numSegments());
        assertEquals(0, store.gpuUsed() + store.cpuUsed() + store.diskUsed());
        assertEquals(accessesSeen.keySet(), countAtRemoval.keySet());
        long succeeded = 0;
        long counted = 0;
        for (Map.Entry<SegmentHandle, AtomicLong> seen : accessesSeen.entrySet()) {
            long atRemoval = countAtRemoval.get(seen.getKey());
            succeeded += seen.getValue().get();
            counted += atRemoval;
            if (lossy) {
                assertTrue(atRemoval <= seen.getValue().get(), "accesses counted on the registration behind "
                        + seen.getKey() + " that did not succeed there: " + atRemoval + " > " + seen.getValue().get());
            } else {
                assertEquals(seen.getValue().get(), atRemoval,
                        "accesses that succeeded on the registration behind " + seen.getKey());
            }
        }
        assertTrue(counted > 0 && counted <= succeeded, policy.name() + ": counted " + counted + " of " + succeeded);
    }

    /** A custom order (a comparator: the store's sorted index) and a tracker that names keys by string. */
    private static List<DemotionPolicy> everyKindOfPolicy() {
        DemotionPolicy byKey = new DemotionPolicy() {
            @Override
            public String name() {
                return "by-key";
            }

            @Override
            public java.util.Comparator<Usage> demotionOrder() {
                return java.util.Comparator.comparing(Usage::key);
            }
        };
        // A tracker of its own that names keys as strings (here: S3-FIFO's, copied over one by one).
        DemotionPolicy byString = new DemotionPolicy() {
            @Override
            public String name() {
                return "by-string";
            }

            @Override
            public Tracker newTracker(long gpuBudget, long cpuBudget) {
                Tracker inner = DemotionPolicy.s3Fifo().newTracker(gpuBudget, cpuBudget);
                return new Tracker() {
                    public void registered(Segment segment, Tier tier) {
                        inner.registered(segment, tier);
                    }

                    public void used(Segment segment, Tier tier) {
                        inner.used(segment, tier);
                    }

                    public void demoted(Segment segment, Tier from, Tier to) {
                        inner.demoted(segment, from, to);
                    }

                    public void promoted(Segment segment, Tier from, Tier to) {
                        inner.promoted(segment, from, to);
                    }

                    public void rolledBack(Segment segment, Tier from, Tier to) {
                        inner.rolledBack(segment, from, to);
                    }

                    public void removed(Segment segment, Tier tier) {
                        inner.removed(segment, tier);
                    }

                    public void collectCandidates(Tier tier, long needed, List<String> keys) {
                        List<String> named = new ArrayList<>();
                        inner.collectCandidates(tier, needed, named);
                        for (String key : named) {
                            keys.add(key);
                        }
                    }
                };
            }
        };
        return List.of(DemotionPolicy.leastAccessedFirst(), DemotionPolicy.leastRecentlyUsed(), DemotionPolicy.s3Fifo(),
                DemotionPolicy.wTinyLfu(), DemotionPolicy.chainAwareS3Fifo(), DemotionPolicy.adaptiveS3Fifo(), byKey,
                byString);
    }

    @Test
    void candidateHandlesAreTheCandidateKeysRegistrationsWithTheirAttachments() {
        for (DemotionPolicy policy : everyKindOfPolicy()) {
            // Two stores with one history, one asked for keys and one for handles: a query is part of the history
            // (S3-FIFO reorganises its queues while answering), so one store asked both ways would differ.
            TieredStore byKey = new TieredStore(400, 400, policy);
            TieredStore byHandle = new TieredStore(400, 400, policy);
            Map<String, Object> attached = new java.util.HashMap<>();
            SplittableRandom random = new SplittableRandom(11);
            for (int step = 0; step < 3000; step++) {
                String key = "k" + random.nextInt(60);
                switch (random.nextInt(5)) {
                    case 0 -> {
                        SegmentMeta meta = seg(key, 1 + random.nextInt(20));
                        Object mine = new Object();
                        boolean registered = byKey.register(meta, Tier.GPU);
                        assertEquals(registered, byHandle.registerHandle(meta, Tier.GPU, mine) != null);
                        if (registered) {
                            attached.put(key, mine);
                        }
                    }
                    case 1 -> assertEquals(byKey.touch(key), byHandle.touch(key));
                    case 2 -> {
                        Tier to = random.nextBoolean() ? Tier.CPU : Tier.DISK;
                        assertEquals(byKey.demote(key, to), byHandle.demote(key, to));
                    }
                    case 3 -> assertEquals(byKey.promote(key, Tier.GPU), byHandle.promote(key, Tier.GPU));
                    default -> {
                        if (random.nextInt(4) == 0) {
                            assertEquals(byKey.remove(key), byHandle.remove(key));
                            attached.remove(key);
                        }
                    }
                }
                for (Tier tier : List.of(Tier.GPU, Tier.CPU)) {
                    long needed = random.nextInt(120);
                    List<String> keys = byKey.candidatesForDemotion(tier, needed);
                    List<SegmentHandle> handles = new ArrayList<>();
                    byHandle.candidatesForDemotion(tier, needed, handles);
                    assertEquals(keys, handles.stream().map(SegmentHandle::key).toList(), policy.name() + " step " + step);
                    for (SegmentHandle handle : handles) {
                        assertSame(byHandle.handle(handle.key()), handle, "the registration itself");
                        assertSame(attached.get(handle.key()), handle.attachment(), "its attachment");
                    }
                }
            }
        }
    }

    @Test
    void candidateHandlesAppendAndRefuseANullList() {
        TieredStore store = new TieredStore(100, 100, DemotionPolicy.defaultPolicy());
        SegmentHandle first = store.registerHandle(seg("a", 10), Tier.GPU);
        assertNull(first.attachment(), "registered without one");
        List<SegmentHandle> out = new ArrayList<>(List.of(first));
        store.candidatesForDemotion(Tier.GPU, 1, out);
        assertEquals(List.of(first, first), out, "appended after what was there");
        store.candidatesForDemotion(Tier.GPU, 0, out);
        assertEquals(2, out.size(), "nothing needed, nothing named");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> store.candidatesForDemotion(Tier.GPU, 1, (List<SegmentHandle>) null));
        assertTrue(e.getMessage().contains("out"), e.getMessage());
    }
}
