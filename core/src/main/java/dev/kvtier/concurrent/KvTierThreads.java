package dev.kvtier.concurrent;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Every thread kvtier starts comes from here: daemon platform threads named {@code kvtier-<role>-<n>}
 * (so a thread dump says whose they are, and none keeps the JVM alive), and every pool kvtier owns
 * is shut down through {@link #shutdownAndAwait}. Thread-safe.
 */
public final class KvTierThreads {
    private KvTierThreads() {
    }

    /**
     * A factory of daemon threads named {@code kvtier-<role>-1}, {@code -2}, ...
     *
     * @param role what the threads do, used in their names (such as "copy"); not blank
     * @return a new factory; thread numbers count from 1 per factory
     * @throws IllegalArgumentException if {@code role} is null or blank
     */
    public static ThreadFactory factory(String role) {
        if (role == null || role.isBlank()) {
            throw new IllegalArgumentException("role must not be null or blank, was " + role);
        }
        AtomicInteger count = new AtomicInteger();
        return task -> Thread.ofPlatform().name("kvtier-" + role + "-" + count.incrementAndGet()).daemon()
                .unstarted(task);
    }

    /**
     * Shuts {@code threads} down and waits, uninterruptibly, until every task it accepted has run (the interrupt flag
     * is kept).
     *
     * @param threads the executor to shut down; this call owns its end, and returns once it has terminated
     */
    public static void shutdownAndAwait(ExecutorService threads) {
        threads.shutdown();
        boolean interrupted = false;
        while (true) {
            try {
                if (threads.awaitTermination(1, TimeUnit.MINUTES)) {
                    break;
                }
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Waits, uninterruptibly, until {@code thread} has ended (the interrupt flag is kept).
     *
     * @param thread the thread to wait for; a thread never started counts as ended
     */
    public static void joinUninterruptibly(Thread thread) {
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
