package dev.kvtier.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Touches without the store's lock (DemotionPolicy.Tracker#takesConcurrentUses): which trackers take them, that
 * a touch does not wait for a change holding the lock, that the order index survives what a racing touch can leave
 * behind (a count below where its record was filed, two records stamped alike), and a stress run of touches racing
 * every kind of change with the indexes checked whole afterwards. Single-threaded answers are the other store
 * tests' (unchanged).
 */
class ConcurrentTouchTest {

    private static final PositionRange POSITIONS = PositionRange.of(0, 16);

    @Test
    void theBuiltInOrderAndS3FifoTrackersTakeTouchesWithoutTheLockAndTheOthersDoNot() {
        for (DemotionPolicy policy : List.of(DemotionPolicy.leastAccessedFirst(), DemotionPolicy.leastRecentlyUsed(),
                DemotionPolicy.s3Fifo(), DemotionPolicy.chainAwareS3Fifo(), DemotionPolicy.adaptiveS3Fifo())) {
            assertTrue(policy.newTracker(100, 100).takesConcurrentUses(), policy.name());
        }
        assertFalse(DemotionPolicy.wTinyLfu().newTracker(100, 100).takesConcurrentUses(), "w-tinylfu");
        DemotionPolicy customOrder = new DemotionPolicy() {
            @Override
            public String name() {
                return "custom-order";
            }

            @Override
            public java.util.Comparator<Usage> demotionOrder() {
                return java.util.Comparator.comparingLong(Usage::lastUse);
            }
        };
        assertFalse(customOrder.newTracker(100, 100).takesConcurrentUses(), "a custom order's tree re-files every use");
    }

    /**
     * The adaptive default's simulations must see every use of a key they sample, under the lock: a fresh tracker
     * samples every key (rate 1), so a use on GPU is refused without the lock and nothing changes; a use on CPU (no
     * simulation there) is taken.
     */
    @Test
    void theAdaptiveTrackerAsksForTheLockForAKeyItsSimulationsSample() {
        TieredStore owner = new TieredStore(1_000, 1_000);
        DemotionPolicy.Tracker adaptive = DemotionPolicy.adaptiveS3Fifo().newTracker(1_000, 1_000);
        SegmentEntry onGpu = new SegmentEntry(owner, SegmentMeta.of("a", POSITIONS, 10), Tier.GPU, 1);
        adaptive.registered(onGpu, Tier.GPU);
        assertFalse(adaptive.usedConcurrently(onGpu, Tier.GPU));
        assertEquals(0, onGpu.uses, "a refused use changes nothing");
        SegmentEntry onCpu = new SegmentEntry(owner, SegmentMeta.of("b", PositionRange.of(100, 116), 10), Tier.CPU, 2);
        adaptive.registered(onCpu, Tier.CPU);
        assertTrue(adaptive.usedConcurrently(onCpu, Tier.CPU));
        assertEquals(1, onCpu.uses);
    }

    /**
     * The chain-tail rule moves a segment that ended its walk when its window of accesses has passed, a queue move
     * that needs the lock: uses without the lock are taken until then, the one that would move it is refused, and
     * once a use under the lock has made the move they are taken again.
     */
    @Test
    void aChainTrackerAsksForTheLockWhenAPendingSegmentIsDueToLeaveItsRing() {
        TieredStore owner = new TieredStore(1_000, 1_000);
        DemotionPolicy.Tracker chain = DemotionPolicy.chainAwareS3Fifo().newTracker(1_000, 1_000);
        SegmentEntry a = new SegmentEntry(owner, SegmentMeta.of("a", POSITIONS, 10), Tier.GPU, 1);
        chain.registered(a, Tier.GPU);
        int taken = 0;
        while (taken < 1_000 && chain.usedConcurrently(a, Tier.GPU)) {
            taken++;
        }
        assertTrue(taken >= 1 && taken < 1_000, "uses taken before the pending segment was due: " + taken);
        chain.used(a, Tier.GPU); // under the lock: drops it from the ring
        assertTrue(chain.usedConcurrently(a, Tier.GPU));
    }

    /**
     * A thread holding the store's lock (as a long change would) does not hold up touches by key or by handle of a
     * least-accessed-first store: they complete, and count. Without the lock-free path they would wait until the
     * lock is released, which here happens only after they were checked.
     */
    @Test
    void aTouchCompletesWhileAChangeHoldsTheLock() throws Exception {
        // The bucket orders' tracker answers from the entry itself (OrderTracker#usedConcurrently), S3-FIFO's from its queues.
        for (DemotionPolicy policy : List.of(DemotionPolicy.leastAccessedFirst(), DemotionPolicy.leastRecentlyUsed(),
                DemotionPolicy.s3Fifo())) {
            TieredStore store = new TieredStore(1_000, 1_000, policy);
            SegmentHandle handle = store.registerHandle(SegmentMeta.of("a", POSITIONS, 10), Tier.GPU);
            StoreLock lock = lockOf(store);
            long stamp = lock.lock();
            try {
                AtomicBoolean touched = new AtomicBoolean();
                Thread toucher = Thread.ofPlatform().start(() -> touched.set(store.touch("a") && store.touch(handle)));
                toucher.join(TimeUnit.SECONDS.toMillis(30));
                assertFalse(toucher.isAlive(), policy.name() + ": a touch waited for the lock held by a change");
                assertTrue(touched.get(), policy.name());
            } finally {
                lock.unlock(stamp);
            }
            assertEquals(2, store.get("a").orElseThrow().accessCount(), policy.name());
        }
    }

    /**
     * A touch of a segment whose record sits in a bucket's tree (it arrived by demotion with an older last use than
     * the bucket's tail) is not taken without the lock: the record is re-filed under it at once, as the tracker's
     * locked use does (the bucket orders' tracker asks the entry directly, OrderTracker#usedConcurrently; the answer
     * must be the bucket index's). The order named afterwards is the touched one's new place.
     */
    @Test
    void aTouchOfARecordInABucketsTreeTakesTheLockAndReFilesIt() {
        for (DemotionPolicy policy : List.of(DemotionPolicy.leastAccessedFirst(), DemotionPolicy.leastRecentlyUsed())) {
            TieredStore store = new TieredStore(1_000, 1_000, policy);
            for (String key : List.of("a", "b", "c")) {
                store.register(SegmentMeta.of(key, POSITIONS, 10), Tier.GPU);
            }
            store.demote("c", Tier.CPU).orElseThrow(); // filed at the tail of the CPU tier's list (last use 3)
            store.demote("a", Tier.CPU).orElseThrow(); // last use 1, older than the tail: into the tree
            SegmentEntry a = entry(store, "a");
            int cpu = Tier.CPU.ordinal();
            assertTrue(a.recordOutOfOrder(cpu), policy.name());
            assertFalse(a.takesUseInPlace(cpu), policy.name());
            assertTrue(entry(store, "b").takesUseInPlace(Tier.GPU.ordinal()), policy.name());
            assertTrue(store.touch("a"), policy.name());
            assertFalse(a.recordOutOfOrder(cpu), policy.name() + ": re-filed by the use under the lock");
            assertEquals(List.of("c", "a"), store.candidatesForDemotion(Tier.CPU, Long.MAX_VALUE), policy.name());
        }
    }

    /**
     * A racing touch can lose another's increment after a query re-filed the record under the higher count: the
     * segment's count is then below its filing. The next query must still name it (in place), not re-file it into
     * a bucket the walk has passed (where it would be missing from a query for the whole tier). The lost increment
     * is made here by hand, as the race would leave it.
     */
    @Test
    void aSegmentWhoseCountARacingTouchLeftBelowItsFilingIsStillNamed() {
        TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.leastAccessedFirst());
        for (String key : List.of("a", "b", "c")) {
            store.register(SegmentMeta.of(key, POSITIONS, 10), Tier.GPU);
        }
        for (int i = 0; i < 3; i++) {
            store.touch("a");
        }
        assertEquals(List.of("b", "c", "a"), store.candidatesForDemotion(Tier.GPU, Long.MAX_VALUE)); // a re-filed at 3
        entry(store, "a").accessCount = 1; // two increments lost to racing touches
        List<String> all = store.candidatesForDemotion(Tier.GPU, Long.MAX_VALUE);
        assertEquals(Set.of("a", "b", "c"), new HashSet<>(all));
        assertEquals(3, all.size());
    }

    /**
     * Two touches racing without the lock can take one stamp of the clock; two records filed into one bucket's tree
     * (arrivals by demotion with older stamps) under one last use must both stay there, and removing one must not
     * take the other out. The shared stamp is made here by hand, as the race would leave it.
     */
    @Test
    void twoRecordsFiledUnderOneLastUseAreBothKept() {
        TieredStore store = new TieredStore(1_000, 1_000, DemotionPolicy.leastAccessedFirst());
        store.register(SegmentMeta.of("a", POSITIONS, 10), Tier.GPU);
        store.register(SegmentMeta.of("b", POSITIONS, 10), Tier.GPU);
        store.register(SegmentMeta.of("c", POSITIONS, 10), Tier.CPU); // the CPU bucket's newest: later arrivals go to its tree
        entry(store, "b").lastUse = entry(store, "a").lastUse;
        assertTrue(store.demote("a", Tier.CPU).isPresent());
        assertTrue(store.demote("b", Tier.CPU).isPresent());
        assertEquals(Set.of("a", "b", "c"), new HashSet<>(store.candidatesForDemotion(Tier.CPU, Long.MAX_VALUE)));
        assertTrue(store.remove("a").isPresent());
        assertEquals(Set.of("b", "c"), new HashSet<>(store.candidatesForDemotion(Tier.CPU, Long.MAX_VALUE)));
        assertEquals(2, store.candidatesForDemotion(Tier.CPU, Long.MAX_VALUE).size());
    }

    /**
     * Two threads touch (by key and by handle) without pause while a third makes every kind of change to the same
     * few segments (register, remove, demote, promote, rollback, hold, release, candidate queries). Afterwards, and
     * after more single-threaded changes, each tier's index holds exactly the tier's segments, each once, and the
     * byte counts add up. Checked that the touchers raced the changes: they touched thousands of times while the
     * changer ran.
     */
    @Test
    void touchesRacingEveryChangeLeaveEveryIndexWhole() throws InterruptedException {
        for (DemotionPolicy policy : List.of(DemotionPolicy.leastAccessedFirst(), DemotionPolicy.leastRecentlyUsed(),
                DemotionPolicy.s3Fifo(), DemotionPolicy.chainAwareS3Fifo(), DemotionPolicy.adaptiveS3Fifo(),
                DemotionPolicy.adaptiveContinuationS3Fifo())) {
            stress(policy);
        }
    }

    private static void stress(DemotionPolicy policy) throws InterruptedException {
        int keys = 48;
        long size = 10;
        // Room for a third of the keys on GPU, two thirds on CPU: demotions, promotions and refusals all happen.
        TieredStore store = new TieredStore(keys / 3 * size, 2 * keys / 3 * size, policy, 2);
        SegmentHandle[] handles = new SegmentHandle[keys];
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicBoolean changing = new AtomicBoolean(true);
        AtomicLong touchesWhileChanging = new AtomicLong();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> touchers = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            long seed = t;
            touchers.add(Thread.ofPlatform().name("toucher-" + t).start(() -> {
                try {
                    start.await();
                    SplittableRandom random = new SplittableRandom(seed);
                    while (changing.get()) {
                        int k = random.nextInt(keys);
                        SegmentHandle handle = handles[k];
                        if (random.nextBoolean() || handle == null) {
                            store.touch("k" + k);
                        } else {
                            store.touch(handle);
                        }
                        touchesWhileChanging.incrementAndGet();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
        }
        start.countDown();
        try {
            change(store, handles, new SplittableRandom(99), 60_000, keys, size);
        } catch (Throwable e) {
            failures.add(e);
        } finally {
            changing.set(false);
        }
        for (Thread toucher : touchers) {
            toucher.join();
        }
        assertTrue(failures.isEmpty(), () -> policy.name() + ": " + failures);
        assertTrue(touchesWhileChanging.get() >= 1_000, policy.name() + ": the touchers raced the changes ("
                + touchesWhileChanging.get() + " touches)");
        checkWhole(store, policy);
        // The indexes keep working single-threaded after the race.
        change(store, handles, new SplittableRandom(7), 5_000, keys, size);
        for (int k = 0; k < keys; k++) {
            store.touch("k" + k);
        }
        checkWhole(store, policy);
    }

    /** {@code ops} random changes (and the odd touch) to keys k0..k(keys-1), keeping {@code handles} current. */
    private static void change(TieredStore store, SegmentHandle[] handles, SplittableRandom random, int ops, int keys,
                               long size) {
        List<TierTransfer> booked = new ArrayList<>();
        for (int op = 0; op < ops; op++) {
            int k = random.nextInt(keys);
            String key = "k" + k;
            Tier tier = Tier.values()[random.nextInt(3)];
            switch (random.nextInt(10)) {
                case 0, 1 -> {
                    SegmentHandle handle = store.registerHandle(SegmentMeta.of(key, PositionRange.of(16L * k, 16L * k + 16),
                            size), tier);
                    if (handle != null) {
                        handles[k] = handle;
                    }
                }
                case 2 -> store.remove(key);
                case 3 -> store.demote(key, tier).ifPresent(booked::add);
                case 4 -> store.promote(key, tier).ifPresent(booked::add);
                case 5 -> {
                    if (!booked.isEmpty()) {
                        store.rollback(booked.remove(random.nextInt(booked.size())));
                    }
                }
                case 6 -> {
                    List<String> named = store.candidatesForDemotion(tier, 1 + random.nextLong(6 * size));
                    check(new HashSet<>(named).size() == named.size(), "duplicate candidates " + named);
                }
                case 7 -> {
                    if (random.nextBoolean()) {
                        store.hold(key);
                    } else {
                        store.release(key);
                    }
                }
                default -> store.touch(key);
            }
            if (booked.size() > 64) {
                booked.remove(0);
            }
        }
    }

    /** Each tier's candidates for everything are exactly its segments, each once; usage adds up. */
    private static void checkWhole(TieredStore store, DemotionPolicy policy) {
        Map<Tier, Set<String>> onTier = new EnumMap<>(Tier.class);
        Map<Tier, Long> bytes = new EnumMap<>(Tier.class);
        for (Tier tier : Tier.values()) {
            onTier.put(tier, new HashSet<>());
            bytes.put(tier, 0L);
        }
        for (SegmentMeta meta : store.segments()) {
            onTier.get(meta.tier()).add(meta.key());
            bytes.merge(meta.tier(), meta.sizeBytes(), Long::sum);
        }
        for (Tier tier : Tier.values()) {
            List<String> named = store.candidatesForDemotion(tier, Long.MAX_VALUE);
            assertEquals(onTier.get(tier), new HashSet<>(named), policy.name() + ": " + tier + " index");
            assertEquals(onTier.get(tier).size(), named.size(), policy.name() + ": " + tier + " named once each");
        }
        assertEquals(bytes.get(Tier.GPU), store.gpuUsed(), policy.name());
        assertEquals(bytes.get(Tier.CPU), store.cpuUsed(), policy.name());
        assertEquals(bytes.get(Tier.DISK), store.diskUsed(), policy.name());
    }

    private static SegmentEntry entry(TieredStore store, String key) {
        return (SegmentEntry) store.handle(key);
    }

    private static StoreLock lockOf(TieredStore store) throws ReflectiveOperationException {
        Field field = TieredStore.class.getDeclaredField("lock");
        field.setAccessible(true);
        return (StoreLock) field.get(store);
    }

    private static void check(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }
}
