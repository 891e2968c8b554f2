package dev.kvtier.concurrent;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * How a thread waits for something another thread will do: first a bounded busy spin (cheapest when
 * the other thread is running on another core right now: waking a parked thread costs 5-7 us on the
 * 2-vCPU VMs we measure on, as much as copying a megabyte), then a few yields, then parking for a
 * time that grows with each attempt up to a ceiling. The same idea as Agrona's
 * {@code BackoffIdleStrategy}; every wait-and-retry in kvtier uses one of these, so the phases are
 * named and tuned in one place.
 *
 * <p>Immutable and thread-safe; the attempt count is the caller's (a local variable), so one
 * instance serves any number of threads.
 */
public final class Backoff {
    /**
     * Between rounds of making room that freed nothing (others are moving the candidates): no spin,
     * park 2 ms, growing by 2 ms a round up to 20 ms.
     */
    public static final Backoff ROOM_RETRY = new Backoff(0, 0, TimeUnit.MILLISECONDS.toNanos(2),
            TimeUnit.MILLISECONDS.toNanos(20));
    /**
     * A waiter for a copy running on another core, and an idle copy thread looking for the next
     * copy: spin up to 50 us (a 1 MiB copy), then the caller parks as usual.
     */
    public static final Backoff BRIEF_SPIN = new Backoff(50_000, 0, 0, 0);

    private final long spinNanos;
    private final int yields;
    private final long minParkNanos;
    private final long maxParkNanos;

    /**
     * A backoff that spins, then yields, then parks, for the lengths given.
     *
     * @param spinNanos    how long {@link #spinUntil} busy-spins, and how long the spin phase of
     *                     {@link #idle} lasts in total, {@code >= 0}
     * @param yields       attempts of {@link #idle} that yield after the spin phase, {@code >= 0}
     * @param minParkNanos the first park of {@link #idle}; each later one parks this much longer, {@code >= 0}
     * @param maxParkNanos the longest park, {@code >= minParkNanos}
     * @throws IllegalArgumentException naming the parameter that is out of range
     */
    public Backoff(long spinNanos, int yields, long minParkNanos, long maxParkNanos) {
        if (spinNanos < 0) {
            throw new IllegalArgumentException("spinNanos must be >= 0, was " + spinNanos);
        }
        if (yields < 0) {
            throw new IllegalArgumentException("yields must be >= 0, was " + yields);
        }
        if (minParkNanos < 0) {
            throw new IllegalArgumentException("minParkNanos must be >= 0, was " + minParkNanos);
        }
        if (maxParkNanos < minParkNanos) {
            throw new IllegalArgumentException("maxParkNanos must be >= minParkNanos (" + minParkNanos + "), was "
                    + maxParkNanos);
        }
        this.spinNanos = spinNanos;
        this.yields = yields;
        this.minParkNanos = minParkNanos;
        this.maxParkNanos = maxParkNanos;
    }

    /**
     * How long {@link #spinUntil} spins at most, in nanoseconds.
     *
     * @return the spin limit in nanoseconds, {@code >= 0}; 0 when this backoff never spins
     */
    public long spinNanos() {
        return spinNanos;
    }

    /**
     * Busy-spins until {@code done} answers true or the spin time is over.
     *
     * @param done the condition waited for, asked repeatedly on the calling thread until it answers true; must be
     *             cheap and must not block
     * @return whether {@code done} answered true
     */
    public boolean spinUntil(BooleanSupplier done) {
        if (done.getAsBoolean()) {
            return true;
        }
        long deadline = System.nanoTime() + spinNanos;
        while (System.nanoTime() < deadline) {
            Thread.onSpinWait();
            if (done.getAsBoolean()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Waits once, as attempt {@code attempt} (0 for the first) of a retry loop: attempts in the spin
     * phase spin for a share of the spin time, then {@code yields} attempts yield, then each attempt
     * parks {@code minParkNanos * (k + 1)} for the k-th park, at most {@code maxParkNanos}. Parking
     * returns early on interrupt (the flag stays set).
     *
     * @param attempt how many times the caller has waited already in this loop, {@code >= 0}
     */
    public void idle(int attempt) {
        if (attempt < 0) {
            throw new IllegalArgumentException("attempt must be >= 0, was " + attempt);
        }
        int spinAttempts = spinNanos == 0 ? 0 : 1;
        if (attempt < spinAttempts) {
            long deadline = System.nanoTime() + spinNanos;
            while (System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            return;
        }
        if (attempt < spinAttempts + yields) {
            Thread.yield();
            return;
        }
        long nanos = parkNanos(attempt);
        if (nanos > 0) {
            LockSupport.parkNanos(this, nanos);
        }
    }

    /** How long attempt {@code attempt} of {@link #idle} parks, in nanoseconds; 0 for a spin or yield attempt. */
    long parkNanos(int attempt) {
        long parks = (long) attempt - (spinNanos == 0 ? 0 : 1) - yields;
        if (parks < 0) {
            return 0;
        }
        return minParkNanos > maxParkNanos / (parks + 1) ? maxParkNanos : minParkNanos * (parks + 1);
    }

    @Override
    public String toString() {
        return "Backoff[spin " + spinNanos + " ns, " + yields + " yields, park " + minParkNanos + ".." + maxParkNanos
                + " ns]";
    }
}
