package dev.kvtier.tiering;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The cache's lifecycle: every operation {@link #enter enters} and {@link #exit exits}; {@link #close}
 * shuts the gate and waits until the operations inside have left. Thread-safe.
 */
public final class OperationGate {
    private final ReentrantLock lifecycle = new ReentrantLock();
    private final Condition idle = lifecycle.newCondition();
    private int activeOperations;
    private volatile boolean closed;

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
        lifecycle.lock();
        try {
            if (closed) {
                return false;
            }
            activeOperations++;
            return true;
        } finally {
            lifecycle.unlock();
        }
    }

    /** An operation left; the last one out wakes a waiting {@link #close()}. */
    public void exit() {
        lifecycle.lock();
        try {
            if (--activeOperations == 0) {
                idle.signalAll();
            }
        } finally {
            lifecycle.unlock();
        }
    }

    /**
     * Shuts the gate and waits until every operation inside has exited.
     *
     * @return false if the gate was closed already (nothing waited for)
     */
    public boolean close() {
        lifecycle.lock();
        try {
            if (closed) {
                return false;
            }
            closed = true;
            while (activeOperations > 0) {
                idle.awaitUninterruptibly();
            }
            return true;
        } finally {
            lifecycle.unlock();
        }
    }

    /** Whether {@link #close()} has been called. */
    public boolean isClosed() {
        return closed;
    }
}
