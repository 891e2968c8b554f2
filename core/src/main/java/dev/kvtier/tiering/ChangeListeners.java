package dev.kvtier.tiering;

import dev.kvtier.CacheChangeListener;
import dev.kvtier.store.Tier;

import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The registered {@link CacheChangeListener}s, told of each committed change: queued where the change is made (under
 * its locks), delivered in that order once the operation left the gate ({@link #deliver()}), so no listener runs
 * under kvtier's locks or inside an operation. With none registered (the usual case) a notification is one read of a
 * volatile field and nothing queued. Registration copies
 * the array (rare); notification reads it without locking. A listener's exception is logged and
 * does not reach the operation. Thread-safe.
 */
final class ChangeListeners {
    private static final System.Logger LOG = System.getLogger(ChangeListeners.class.getName());
    private static final CacheChangeListener[] NONE = new CacheChangeListener[0];

    private volatile CacheChangeListener[] listeners = NONE;
    /**
     * Notifications not yet delivered, in the order they were made: a change is queued under its segment's lock (so
     * one key's changes queue in the order they were committed) and delivered by {@link #deliver()} once an operation
     * left the gate, outside every lock.
     */
    private final ConcurrentLinkedQueue<Runnable> pending = new ConcurrentLinkedQueue<>();
    /** Whether a thread is in {@link #deliver()}'s loop: one at a time, so the queue's order is the delivery order. */
    private final AtomicBoolean delivering = new AtomicBoolean();
    /**
     * The listeners that implement {@link CacheChangeListener#ensureResidentCompleted}: only they make
     * {@code ensureResident} read the clock twice (a resident hit costs ~2x with the timing), so a
     * listener that only follows changes (the cluster bridge) does not slow hits down.
     */
    private volatile CacheChangeListener[] timed = NONE;

    synchronized void add(CacheChangeListener listener) {
        listeners = appended(listeners, listener);
        if (wantsResidencyTimes(listener)) {
            timed = appended(timed, listener);
        }
    }

    private static CacheChangeListener[] appended(CacheChangeListener[] current, CacheChangeListener listener) {
        CacheChangeListener[] grown = Arrays.copyOf(current, current.length + 1);
        grown[grown.length - 1] = listener;
        return grown;
    }

    /** Whether {@code listener}'s class overrides the default (empty) {@code ensureResidentCompleted}. */
    static boolean wantsResidencyTimes(CacheChangeListener listener) {
        try {
            return listener.getClass()
                    .getMethod("ensureResidentCompleted", String.class, Tier.class, Tier.class, long.class)
                    .getDeclaringClass() != CacheChangeListener.class;
        } catch (NoSuchMethodException e) {
            throw new AssertionError("CacheChangeListener.ensureResidentCompleted is public", e);
        }
    }

    /** @return whether {@code listener} was registered (compared by identity) */
    synchronized boolean remove(CacheChangeListener listener) {
        CacheChangeListener[] shrunk = without(listeners, listener);
        if (shrunk == listeners) {
            return false;
        }
        listeners = shrunk;
        timed = without(timed, listener);
        return true;
    }

    /** {@code current} without its first element identical to {@code listener}; {@code current} itself when absent. */
    private static CacheChangeListener[] without(CacheChangeListener[] current, CacheChangeListener listener) {
        for (int i = 0; i < current.length; i++) {
            if (current[i] == listener) {
                CacheChangeListener[] shrunk = new CacheChangeListener[current.length - 1];
                System.arraycopy(current, 0, shrunk, 0, i);
                System.arraycopy(current, i + 1, shrunk, i, current.length - i - 1);
                return shrunk.length == 0 ? NONE : shrunk;
            }
        }
        return current;
    }

    /**
     * Whether a registered listener wants {@code ensureResident} completion times: callers skip the
     * {@code nanoTime} calls when none does.
     */
    boolean anyTimed() {
        return timed.length != 0;
    }

    void added(String key, Tier tier, long bytes) {
        queue(false, listener -> listener.segmentAdded(key, tier, bytes));
    }

    void moved(String key, Tier from, Tier to, long bytes) {
        queue(false, listener -> listener.segmentMoved(key, from, to, bytes));
    }

    void removed(String key, Tier tier, long bytes) {
        queue(false, listener -> listener.segmentRemoved(key, tier, bytes));
    }

    void ensureResidentCompleted(String key, Tier tier, Tier foundOn, long nanos) {
        queue(true, listener -> listener.ensureResidentCompleted(key, tier, foundOn, nanos));
    }

    /** Whether any listener is registered: a prefix restore is timed only then. */
    boolean any() {
        return listeners.length != 0;
    }

    void prefixLookedUp(int queriedBlocks, int matchedBlocks) {
        queue(false, listener -> listener.prefixLookedUp(queriedBlocks, matchedBlocks));
    }

    void prefixRestoreCompleted(Tier tier, int blocks, long nanos, boolean succeeded) {
        queue(false, listener -> listener.prefixRestoreCompleted(tier, blocks, nanos, succeeded));
    }

    /**
     * Queues one notification for the listeners registered when it is delivered ({@code timedOnly}: only those that
     * want {@code ensureResident} times); nothing is queued when there are none now. A listener's exception is logged.
     */
    private void queue(boolean timedOnly, Consumer<CacheChangeListener> call) {
        if ((timedOnly ? timed : listeners).length == 0) {
            return;
        }
        pending.add(() -> {
            for (CacheChangeListener listener : timedOnly ? timed : listeners) {
                try {
                    call.accept(listener);
                } catch (RuntimeException e) {
                    failed(listener, e);
                }
            }
        });
    }

    /**
     * Delivers the queued notifications, in order, on this thread, unless another thread is delivering (it then
     * delivers these too: it looks at the queue again after letting go). Called after an operation left the gate,
     * holding no lock, so a listener may call back into the cache; a notification it causes is delivered by this
     * same loop.
     */
    void deliver() {
        while (!pending.isEmpty() && delivering.compareAndSet(false, true)) {
            try {
                Runnable notification;
                while ((notification = pending.poll()) != null) {
                    notification.run();
                }
            } finally {
                delivering.set(false);
            }
        }
    }

    private static void failed(CacheChangeListener listener, RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "cache change listener " + listener + " threw (the change stands)", e);
    }
}
