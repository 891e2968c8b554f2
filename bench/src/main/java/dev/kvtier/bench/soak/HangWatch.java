package dev.kvtier.bench.soak;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The hang detector: every operation (and every open and close) runs between {@link Slot#begin} and {@link Slot#end};
 * a watcher thread checks a few times a second and counts an operation that has run longer than the bound as a hang,
 * once per operation, and prints a full thread dump for the first hang of the run. It never interrupts anything: a hang
 * is a finding to report, not a thing to repair.
 */
final class HangWatch implements AutoCloseable {
    private final List<Slot> slots = new CopyOnWriteArrayList<>();
    private final AtomicBoolean dumped = new AtomicBoolean();
    private final PrintStream err;
    private final Thread watcher;
    private volatile long boundNanos;
    private volatile EpochCounters counters;
    private volatile boolean closed;

    /** One thread's current operation. Only its thread begins and ends it; the watcher reads it. */
    final class Slot {
        private final Thread thread;
        private volatile String what;
        private volatile boolean reported;
        private volatile long startNanos; // 0: idle

        private Slot(Thread thread) {
            this.thread = thread;
        }

        /** {@code what} starts now. */
        void begin(String what) {
            this.what = what;
            this.reported = false;
            this.startNanos = System.nanoTime() | 1; // never 0, which means idle
        }

        /** The operation returned (or threw). */
        void end() {
            startNanos = 0;
        }

        /** Whether the current operation was counted as a hang. */
        boolean reported() {
            return reported;
        }
    }

    HangWatch(Duration bound, PrintStream err) {
        this.boundNanos = bound.toNanos();
        this.err = err;
        this.watcher = Thread.ofPlatform().name("soak-hang-watch").daemon().start(this::watch);
    }

    /** A slot for the calling thread. */
    Slot slot() {
        Slot slot = new Slot(Thread.currentThread());
        slots.add(slot);
        return slot;
    }

    /** Stops watching {@code slot} (its thread is done). */
    void release(Slot slot) {
        slots.remove(slot);
    }

    /** Where hangs are counted from now on, and the bound for this epoch. */
    void epoch(EpochCounters counters, Duration bound) {
        this.counters = counters;
        this.boundNanos = bound.toNanos();
    }

    private void watch() {
        while (!closed) {
            long now = System.nanoTime();
            for (Slot slot : slots) {
                long start = slot.startNanos;
                if (start != 0 && now - start > boundNanos && !slot.reported) {
                    slot.reported = true;
                    String what = slot.what + " on " + slot.thread.getName() + " has run longer than "
                            + Duration.ofNanos(boundNanos).toMillis() + " ms";
                    EpochCounters current = counters;
                    if (current != null) {
                        current.hang(what);
                    }
                    err.println("soak: HANG: " + what);
                    if (dumped.compareAndSet(false, true)) {
                        err.println(threadDump());
                    }
                }
            }
            try {
                TimeUnit.MILLISECONDS.sleep(200);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Every thread's full stack (ThreadInfo's own text stops at eight frames). */
    static String threadDump() {
        StringBuilder dump = new StringBuilder("soak: thread dump\n");
        for (Map.Entry<Thread, StackTraceElement[]> entry : Thread.getAllStackTraces().entrySet()) {
            Thread thread = entry.getKey();
            dump.append('"').append(thread.getName()).append("\" ").append(thread.getState()).append('\n');
            for (StackTraceElement frame : entry.getValue()) {
                dump.append("    at ").append(frame).append('\n');
            }
            dump.append('\n');
        }
        return dump.toString();
    }

    @Override
    public void close() {
        closed = true;
        watcher.interrupt();
        try {
            watcher.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
