package dev.kvtier.exec.host;

import dev.kvtier.exec.CopyPlan;
import dev.kvtier.exec.CopyRegion;
import dev.kvtier.exec.MemoryKind;

import dev.kvtier.concurrent.Backoff;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostCopyEngineTest {
    private static final int SLOT = 64;

    private static CopyPlan plan(MemorySegment source, MemorySegment destination) {
        return CopyPlan.between(MemoryKind.HOST, List.of(source), MemoryKind.HOST, List.of(destination));
    }

    /**
     * Only the copy threads run these copies (nobody joins a copy's own future), with pauses longer than
     * the idle spin mixed in so threads park and must be woken: a lost wake-up leaves a future
     * incomplete and the test times out.
     */
    @ParameterizedTest(name = "{0} copy thread(s)")
    @ValueSource(ints = {1, 2})
    void copiesSubmittedFromManyThreadsAllLandWithoutAnyoneWaitingOnThem(int copyThreads) throws Exception {
        int submitters = 4;
        int perSubmitter = 5_000;
        try (Arena arena = Arena.ofShared(); HostCopyEngine engine = new HostCopyEngine(copyThreads)) {
            MemorySegment source = arena.allocate((long) submitters * perSubmitter * SLOT);
            MemorySegment destination = arena.allocate(source.byteSize());
            for (long i = 0; i < source.byteSize() / 8; i++) {
                source.setAtIndex(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
            }
            List<CompletableFuture<List<CompletableFuture<Void>>>> threads = new ArrayList<>();
            for (int t = 0; t < submitters; t++) {
                int first = t * perSubmitter;
                threads.add(CompletableFuture.supplyAsync(() -> {
                    SplittableRandom random = new SplittableRandom(first);
                    List<CompletableFuture<Void>> futures = new ArrayList<>();
                    for (int i = first; i < first + perSubmitter; i++) {
                        futures.add(engine.submit(plan(source.asSlice((long) i * SLOT, SLOT),
                                destination.asSlice((long) i * SLOT, SLOT))));
                        if (random.nextInt(5) == 0) { // around the idle spin: copy threads spin, park, wake
                            LockSupport.parkNanos(random.nextLong(3 * Backoff.BRIEF_SPIN.spinNanos()));
                        }
                    }
                    return futures;
                }, Thread::startVirtualThread));
            }
            for (var thread : threads) {
                // allOf waits on its own future, so no submitted copy runs on this thread
                CompletableFuture.allOf(thread.get(60, TimeUnit.SECONDS).toArray(CompletableFuture[]::new))
                        .get(60, TimeUnit.SECONDS);
            }
            assertEquals(-1, source.mismatch(destination));
        }
    }

    /**
     * One copy at a time, each after a pause around the idle spin (so the copy thread is spinning,
     * giving up, announcing itself or parked), each waited for without running it: a single lost
     * wake-up strands that copy and fails the test.
     */
    @Test
    void everyCopyIsTakenUpWhateverTheCopyThreadIsDoing() throws Exception {
        try (Arena arena = Arena.ofShared(); HostCopyEngine engine = new HostCopyEngine(1)) {
            MemorySegment source = arena.allocate(SLOT).fill((byte) 7);
            MemorySegment destination = arena.allocate(SLOT);
            SplittableRandom random = new SplittableRandom(11);
            for (int round = 0; round < 3_000; round++) {
                destination.fill((byte) 0);
                LockSupport.parkNanos(random.nextLong(3 * Backoff.BRIEF_SPIN.spinNanos()));
                CompletableFuture<Void> copy = engine.submit(plan(source, destination));
                CompletableFuture.allOf(copy).get(10, TimeUnit.SECONDS);
                assertEquals(-1, source.mismatch(destination), "round " + round);
            }
        }
    }

    @Test
    void closeLetsEverySubmittedCopyFinishThenRefusesNewOnes() {
        HostCopyEngine engine = new HostCopyEngine(2);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment source = arena.allocate(1 << 20).fill((byte) 3);
            List<MemorySegment> destinations = new ArrayList<>();
            List<CompletableFuture<Void>> futures = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                MemorySegment destination = arena.allocate(source.byteSize());
                destinations.add(destination);
                futures.add(engine.submit(plan(source, destination)));
            }
            engine.close();
            for (int i = 0; i < futures.size(); i++) {
                assertTrue(futures.get(i).isDone(), "copy " + i + " unfinished after close");
                assertEquals(-1, source.mismatch(destinations.get(i)), "copy " + i);
            }
            MemorySegment destination = destinations.getFirst();
            IllegalStateException submit = assertThrows(IllegalStateException.class,
                    () -> engine.submit(plan(source, destination)));
            assertTrue(submit.getMessage().contains("closed"), submit.getMessage());
            assertThrows(IllegalStateException.class, () -> engine.copyAndWait(plan(source, destination), Long.MAX_VALUE));
            engine.close(); // idempotent
        }
    }

    /**
     * A dependent of a copy runs on the copy thread that completed it; closing the engine there must
     * not wait for itself. (Attached while the 32 MiB copy runs; an attempt where the copy finished
     * first closes on this thread instead and is repeated.)
     */
    @Test
    void closingFromACopyThreadReturns() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment source = arena.allocate(32 << 20).fill((byte) 1);
            MemorySegment destination = arena.allocate(source.byteSize());
            Thread closer = null;
            for (int attempt = 0; attempt < 10 && (closer == null || !closer.getName().startsWith("kvtier-host-copy-")); attempt++) {
                HostCopyEngine engine = new HostCopyEngine(1);
                java.util.function.Function<Void, Thread> closeHere = ignored -> {
                    engine.close();
                    return Thread.currentThread();
                };
                CompletableFuture<Thread> closedOn = engine.submit(plan(source, destination)).thenApply(closeHere);
                CompletableFuture.allOf(closedOn).get(30, TimeUnit.SECONDS);
                closer = closedOn.join();
                assertEquals(-1, source.mismatch(destination));
                assertThrows(IllegalStateException.class, () -> engine.submit(plan(source, destination)));
            }
            assertTrue(closer.getName().startsWith("kvtier-host-copy-"), "never closed on a copy thread, last on " + closer);
        }
    }

    @Test
    void aFailingCopyFailsItsFutureAndTheThreadsKeepWorking() throws Exception {
        try (Arena arena = Arena.ofShared(); HostCopyEngine engine = new HostCopyEngine(1)) {
            MemorySegment destination = arena.allocate(SLOT);
            MemorySegment gone;
            try (Arena shortLived = Arena.ofShared()) {
                gone = shortLived.allocate(SLOT);
            }
            CompletableFuture<Void> failed = engine.submit(plan(gone, destination));
            var thrown = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> CompletableFuture.allOf(failed).get(30, TimeUnit.SECONDS));
            assertTrue(thrown.getCause() instanceof IllegalStateException, String.valueOf(thrown.getCause()));

            MemorySegment source = arena.allocate(SLOT).fill((byte) 9);
            CompletableFuture.allOf(engine.submit(plan(source, destination))).get(30, TimeUnit.SECONDS);
            assertEquals(-1, source.mismatch(destination));
        }
    }

    @Test
    void aWaiterGetsTheCopyDoneWhetherOrNotACopyThreadTookIt() {
        try (Arena arena = Arena.ofShared(); HostCopyEngine engine = new HostCopyEngine(1)) {
            MemorySegment source = arena.allocate(256 << 10).fill((byte) 5);
            for (int i = 0; i < 2_000; i++) {
                MemorySegment destination = arena.allocate(source.byteSize());
                engine.submit(plan(source, destination)).join();
                assertEquals(-1, source.mismatch(destination), "copy " + i);
            }
        }
    }
}
