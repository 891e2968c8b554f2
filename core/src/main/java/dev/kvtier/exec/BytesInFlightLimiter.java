package dev.kvtier.exec;

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
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    private long inFlight;

    BytesInFlightLimiter(long maxBytes) {
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("maxBytesInFlight must be > 0, was " + maxBytes);
        }
        this.maxBytes = maxBytes;
    }

    /** Waits until {@code bytes} (capped at the bound) fit; returns the amount to {@link #release}. */
    long acquire(long bytes) {
        long grant = Math.min(bytes, maxBytes);
        if (grant == 0) {
            return 0;
        }
        lock.lock();
        try {
            while (inFlight + grant > maxBytes) {
                released.awaitUninterruptibly();
            }
            inFlight += grant;
            return grant;
        } finally {
            lock.unlock();
        }
    }

    void release(long grant) {
        if (grant == 0) {
            return;
        }
        lock.lock();
        try {
            inFlight -= grant;
            released.signalAll();
        } finally {
            lock.unlock();
        }
    }

    long bytesInFlight() {
        lock.lock();
        try {
            return inFlight;
        } finally {
            lock.unlock();
        }
    }

    long maxBytes() {
        return maxBytes;
    }
}
