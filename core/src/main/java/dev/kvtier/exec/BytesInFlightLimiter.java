package dev.kvtier.exec;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Backpressure: a bound on the bytes of copies started but not finished. A burst of transfers
 * waits here instead of piling up staging and pinned memory. A single transfer larger than the
 * bound is let through alone (it takes the whole bound), so nothing can wait forever.
 * Thread-safe.
 */
final class BytesInFlightLimiter {
    private final long maxBytes;
    /**
     * Bytes granted and not released. Changed by compare-and-set, not under the lock: the lock is
     * only for waiting, so a release on a copy thread never makes the next acquire park (being
     * woken costs more than copying a megabyte on a small VM: 5-7 us measured).
     */
    private final AtomicLong inFlight = new AtomicLong();
    /** Threads in {@link #acquire} that found no room; a release signals only when there are some. */
    private final AtomicInteger waiters = new AtomicInteger();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();

    BytesInFlightLimiter(long maxBytes) {
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("maxBytesInFlight must be > 0, was " + maxBytes);
        }
        this.maxBytes = maxBytes;
    }

    /**
     * Waits until {@code bytes} (capped at the bound) fit, at most {@code timeoutNanos}; returns the
     * amount to {@link #release}. Uninterruptible (the interrupt flag is kept).
     *
     * @throws TransferTimeoutException if they did not fit in time (copies that never completed hold
     *                                  the bound)
     */
    long acquire(long bytes, long timeoutNanos) {
        long grant = Math.min(bytes, maxBytes);
        if (grant == 0 || tryAcquire(grant)) {
            return grant;
        }
        long deadline = System.nanoTime() + timeoutNanos;
        lock.lock();
        try {
            // Counted before looking again: a release either sees this waiter or frees bytes this look sees.
            waiters.incrementAndGet();
            boolean interrupted = false;
            try {
                while (!tryAcquire(grant)) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new TransferTimeoutException("waiting for " + grant + " bytes of room among the copies"
                                + " in flight (" + inFlight.get() + " of " + maxBytes + " bytes)",
                                java.time.Duration.ofNanos(timeoutNanos));
                    }
                    try {
                        released.awaitNanos(left);
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            } finally {
                waiters.decrementAndGet();
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
            return grant;
        } finally {
            lock.unlock();
        }
    }

    private boolean tryAcquire(long grant) {
        while (true) {
            long current = inFlight.get();
            if (current + grant > maxBytes) {
                return false;
            }
            if (inFlight.compareAndSet(current, current + grant)) {
                return true;
            }
        }
    }

    /** Gives back what {@link #acquire} granted and wakes waiters. */
    void release(long grant) {
        if (grant == 0) {
            return;
        }
        inFlight.addAndGet(-grant);
        if (waiters.get() > 0) {
            lock.lock();
            try {
                released.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /** Bytes granted and not yet released. */
    long bytesInFlight() {
        return inFlight.get();
    }

    long maxBytes() {
        return maxBytes;
    }
}
