package dev.kvtier.tiering;

import dev.kvtier.concurrent.KvTierThreads;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where the futures an operation hands out are completed when the operation cannot complete them itself: on a
 * kvtier completion thread, so that their dependents (the caller's code) never run on a thread that holds a block's
 * lock or is inside the {@link OperationGate} (a dependent may re-enter the cache, pin, remove or close it), and the
 * operation never waits for a dependent. Each operation posts to its own {@link Sequence}, whose completions run one
 * after another in the order posted (a restore's layer {@code l} before layer {@code l + 1}, all before its pin);
 * sequences run independently of one another. Thread-safe.
 */
final class Completions {
    private static final System.Logger LOG = System.getLogger(Completions.class.getName());
    /** Set on the completion threads: a close from a dependent must not wait for itself. */
    private static final ThreadLocal<Boolean> ON_COMPLETER = ThreadLocal.withInitial(() -> Boolean.FALSE);

    private final ExecutorService completers;

    Completions(String role) {
        ThreadFactory threads = KvTierThreads.factory(role);
        this.completers = Executors.newCachedThreadPool(task -> threads.newThread(() -> {
            ON_COMPLETER.set(Boolean.TRUE);
            task.run();
        }));
    }

    /** A new sequence of completions for one operation. */
    Sequence sequence() {
        return new Sequence();
    }

    /** Whether the calling thread is one of this class's completion threads (of any cache). */
    static boolean onCompleter() {
        return ON_COMPLETER.get();
    }

    /**
     * After the gate closed: takes no more sequences' work and waits until the completions posted have run, at most
     * until {@code deadlineNanos} ({@link System#nanoTime}), and not at all from a completion thread (a dependent
     * closing the cache). A dependent may block: close does not wait for it past the deadline.
     */
    void shutdown(long deadlineNanos) {
        completers.shutdown();
        if (onCompleter()) {
            return;
        }
        awaitUntil(completers, deadlineNanos, "completions of handed-out futures");
    }

    /**
     * Waits until {@code threads} has terminated or {@code deadlineNanos} passed (uninterruptibly: the flag is kept).
     *
     * @return whether it terminated
     */
    static boolean awaitUntil(ExecutorService threads, long deadlineNanos, String what) {
        boolean interrupted = false;
        boolean terminated = false;
        while (true) {
            try {
                terminated = threads.awaitTermination(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (!terminated) {
            LOG.log(System.Logger.Level.WARNING, "close: " + what + " still running at the close deadline"
                    + " (KvTierConfig.transferTimeout); not waiting for them");
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return terminated;
    }

    /**
     * One operation's completions, run in the order posted on a completion thread; posting never waits for one to
     * run. Thread-safe.
     */
    final class Sequence implements Runnable {
        private final Queue<Runnable> posted = new ConcurrentLinkedQueue<>();
        /** Completions posted and not yet run; the post that raises it from 0 starts the drain. */
        private final AtomicInteger pending = new AtomicInteger();

        private Sequence() {
        }

        /**
         * Runs {@code completion} after the ones posted before it, on a completion thread. Once the cache has closed
         * (which only happens while no operation is inside the gate) it runs on the calling thread instead: the caller
         * must then hold no lock of the cache and be outside the gate, as every post after the operation left it is.
         */
        void post(Runnable completion) {
            posted.add(completion);
            if (pending.getAndIncrement() == 0) {
                try {
                    completers.execute(this);
                } catch (RejectedExecutionException closed) {
                    run();
                }
            }
        }

        /** Drains: runs every completion posted, in order, until none is left. */
        @Override
        public void run() {
            do {
                Runnable completion = posted.poll();
                try {
                    completion.run();
                } catch (RuntimeException | Error e) {
                    // A completion only completes futures (their dependents' failures stay in the dependents' futures):
                    // this is a bug, and the completions after it must still run.
                    LOG.log(System.Logger.Level.ERROR, "a completion failed", e);
                }
            } while (pending.decrementAndGet() != 0);
        }
    }
}
