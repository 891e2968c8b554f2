package dev.kvtier.persist;

import java.time.Duration;
import java.util.Locale;

/**
 * Progress of one recovery in the log, for opens long enough to make an operator wonder: at most one INFO
 * line per interval (2 s, or the system property {@code kvtier.recovery.progressMillis}), each naming the
 * directory, the phase, how far it got and the time elapsed since the open began. A short recovery logs
 * nothing here. Cheap per step (the clock is read once every 1024 steps). Confined to the opening thread.
 */
public final class RecoveryProgress {
    private static final System.Logger LOG = System.getLogger(RecoveryProgress.class.getName());
    private static final int STEPS_PER_CLOCK_READ = 1024;

    private final String directory;
    private final long startNanos;
    private final long intervalNanos;
    private long lastNanos;
    private long lines;

    /**
     * Starts the progress of one open, with nothing logged yet.
     *
     * @param directory  the directory recovered, as the log lines name it
     * @param startNanos when the open began, a {@link System#nanoTime()} reading; the elapsed time counts from it
     */
    public RecoveryProgress(String directory, long startNanos) {
        this.directory = directory;
        this.startNanos = startNanos;
        this.lastNanos = startNanos;
        this.intervalNanos = Duration.ofMillis(Math.max(0, Long.getLong("kvtier.recovery.progressMillis", 2000)))
                .toNanos();
    }

    /**
     * One more item of {@code phase} is done ({@code done} so far, of {@code total}, or -1 when unknown);
     * logs a line when the interval has passed since the last one.
     *
     * @param phase what is being recovered, as the log line names it (such as "journal records read")
     * @param done  how many items of the phase are done so far, {@code >= 0}
     * @param total how many items the phase has, or -1 when unknown
     */
    public void step(String phase, long done, long total) {
        if (done % STEPS_PER_CLOCK_READ != 0) {
            return;
        }
        long now = System.nanoTime();
        if (now - lastNanos < intervalNanos) {
            return;
        }
        lastNanos = now;
        lines++;
        LOG.log(System.Logger.Level.INFO, String.format(Locale.ROOT, "kvtier recovery of %s: %s %,d%s so far, %.1f s"
                + " elapsed", directory, phase, done, total < 0 ? "" : String.format(Locale.ROOT, " of %,d", total),
                (now - startNanos) / 1e9));
    }

    /**
     * Lines logged so far.
     *
     * @return the number of progress lines this recovery has logged, 0 for a recovery shorter than one interval
     */
    public long lines() {
        return lines;
    }
}
