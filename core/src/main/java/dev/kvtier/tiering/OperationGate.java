package dev.kvtier.tiering;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The cache's lifecycle: every operation {@link #enter enters} and {@link #exit exits}; {@link #close}
 * shuts the gate and waits until the operations inside have left. Thread-safe.
 *
 * <p>Entering and exiting are one atomic update each (no lock): they happen several times per cache
 * call, and a small block's whole call should cost little more than its copy. The lock is only for the
 * one {@link #close()} that waits, and for the last operation out waking it.
 */
public final class OperationGate {
    /** Added to {@link #state} once closed; the rest is the number of operations inside. */
    private static final long CLOSED = 1L << 62;

    /** Operations inside, plus {@link #CLOSED} once {@link #close()} began. */
    private final AtomicLong state = new AtomicLong();
    private final ReentrantLock lifecycle = new ReentrantLock();
    private final Condition idle = lifecycle.newCondition();
    /** Run after every {@link #exit()}, outside the gate: delivers what the operation left to tell its listeners. */
    private final Runnable afterExit;

    /** A gate with nothing to do after an operation left. */
    public OperationGate() {
        this(() -> { });
    }

    /** @param afterExit run by every {@link #exit()} once the operation is out (it must hold no lock then) */
    OperationGate(Runnable afterExit) {
        this.afterExit = afterExit;
    }

    /**
     * Lets an operation in; balance with {@link #exit()}.
     *
     * @throws IllegalStateException after {@link #close()}
     */
    public void enter() {
        if (!tryEnter()) {
            throw new IllegalStateException("the cache is closed");
        }
    }

    /** Lets an operation in unless the gate is closed; true means the caller must {@link #exit()}. */
    public boolean tryEnter() {
        while (true) {
            long current = state.get();
            if (current >= CLOSED) {
                return false;
            }
            if (state.compareAndSet(current, current + 1)) {
                return true;
            }
        }
    }

    /** An operation left; the last one out after {@link #close()} began wakes it. */
    public void exit() {
        if (state.decrementAndGet() == CLOSED) {
            // Under the lock: close() looks at the state under it before waiting, so this cannot slip between.
            lifecycle.lock();
            try {
                idle.signalAll();
            } finally {
                lifecycle.unlock();
            }
        }
        afterExit.run();
    }

    /**
     * Shuts the gate and waits until every operation inside has exited.
     *
     * @return false if the gate was closed already (nothing waited for)
     */
    public boolean close() {
        lifecycle.lock();
        try {
            while (true) {
                long current = state.get();
                if (current >= CLOSED) {
                    return false;
                }
                if (state.compareAndSet(current, current + CLOSED)) {
                    break;
                }
            }
            while (state.get() != CLOSED) {
                idle.awaitUninterruptibly();
            }
            return true;
        } finally {
            lifecycle.unlock();
        }
    }

    /** Whether {@link #close()} has been called. */
    public boolean isClosed() {
        return state.get() >= CLOSED;
    }
}
