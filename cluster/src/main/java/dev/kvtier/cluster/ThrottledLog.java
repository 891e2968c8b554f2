package dev.kvtier.cluster;

import java.util.concurrent.TimeUnit;

/**
 * A warning that may come thousands of times a second (bad messages from a broken or hostile publisher): logged at most
 * once per {@code interval}, each line saying how many were not logged since the last one, so that a flood costs a
 * counter increment, not a log line, and the log still says it happened. Counting what was refused is the caller's
 * job (its counters are exact; this only thins the log). Thread-safe.
 */
final class ThrottledLog {
    private final System.Logger logger;
    private final long intervalNanos;
    private long lastLogged; // guarded by this
    private boolean loggedOnce; // guarded by this
    private long suppressed; // guarded by this

    ThrottledLog(System.Logger logger, java.time.Duration interval) {
        this.logger = logger;
        this.intervalNanos = interval.toNanos();
    }

    /** Logs {@code message} at WARNING unless a line was logged less than the interval ago (then only counts it). */
    void warn(String message) {
        long suppressedBefore;
        synchronized (this) {
            long now = System.nanoTime();
            if (loggedOnce && now - lastLogged < intervalNanos) {
                suppressed++;
                return;
            }
            loggedOnce = true;
            lastLogged = now;
            suppressedBefore = suppressed;
            suppressed = 0;
        }
        logger.log(System.Logger.Level.WARNING, suppressedBefore == 0 ? message
                : message + " (" + suppressedBefore + " more like it not logged in the last "
                        + TimeUnit.NANOSECONDS.toMillis(intervalNanos) + " ms)");
    }
}
