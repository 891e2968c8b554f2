package dev.kvtier.exec;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BytesInFlightLimiterTest {

    @Test
    void theBoundHoldsUnderContentionAndEveryWaiterIsWoken() throws Exception {
        long max = 1_000;
        BytesInFlightLimiter limiter = new BytesInFlightLimiter(max);
        AtomicLong held = new AtomicLong();
        AtomicLong worst = new AtomicLong();
        List<CompletableFuture<Void>> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            int seed = t;
            threads.add(CompletableFuture.runAsync(() -> {
                SplittableRandom random = new SplittableRandom(seed);
                for (int i = 0; i < 20_000; i++) {
                    long grant = limiter.acquire(1 + random.nextLong(max), Long.MAX_VALUE);
                    worst.accumulateAndGet(held.addAndGet(grant), Math::max);
                    held.addAndGet(-grant);
                    limiter.release(grant);
                }
            }, Thread::startVirtualThread));
        }
        CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(100, TimeUnit.SECONDS);
        assertTrue(worst.get() <= max, "held " + worst.get() + " bytes at once, bound " + max);
        assertEquals(0, limiter.bytesInFlight());
    }

    @Test
    void aTransferLargerThanTheBoundTakesAllOfItAndAWaiterProceedsOnRelease() throws Exception {
        BytesInFlightLimiter limiter = new BytesInFlightLimiter(100);
        long big = limiter.acquire(10_000, Long.MAX_VALUE);
        assertEquals(100, big);
        CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> limiter.acquire(1, Long.MAX_VALUE), Thread::startVirtualThread);
        Thread.sleep(50);
        assertFalse(waiter.isDone(), "acquired past the bound");
        limiter.release(big);
        assertEquals(1, waiter.get(30, TimeUnit.SECONDS));
        assertEquals(1, limiter.bytesInFlight());
        assertEquals(0, limiter.acquire(0, Long.MAX_VALUE));
    }

    @Test
    void aNonPositiveBoundIsRefused() {
        var e = assertThrows(IllegalArgumentException.class, () -> new BytesInFlightLimiter(0));
        assertTrue(e.getMessage().contains("0"), e.getMessage());
    }
}
