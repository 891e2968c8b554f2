package dev.kvtier.tiering;

import dev.kvtier.CacheChangeListener;
import dev.kvtier.store.Tier;

import java.util.Arrays;

/**
 * The registered {@link CacheChangeListener}s, told of each committed change. With none registered
 * (the usual case) a notification is one read of a volatile field and no call. Registration copies
 * the array (rare); notification reads it without locking. A listener's exception is logged and
 * does not reach the operation. Thread-safe.
 */
final class ChangeListeners {
    private static final System.Logger LOG = System.getLogger(ChangeListeners.class.getName());
    private static final CacheChangeListener[] NONE = new CacheChangeListener[0];

    private volatile CacheChangeListener[] listeners = NONE;

    synchronized void add(CacheChangeListener listener) {
        CacheChangeListener[] grown = Arrays.copyOf(listeners, listeners.length + 1);
        grown[grown.length - 1] = listener;
        listeners = grown;
    }

    /** @return whether {@code listener} was registered (compared by identity) */
    synchronized boolean remove(CacheChangeListener listener) {
        CacheChangeListener[] current = listeners;
        for (int i = 0; i < current.length; i++) {
            if (current[i] == listener) {
                CacheChangeListener[] shrunk = new CacheChangeListener[current.length - 1];
                System.arraycopy(current, 0, shrunk, 0, i);
                System.arraycopy(current, i + 1, shrunk, i, current.length - i - 1);
                listeners = shrunk.length == 0 ? NONE : shrunk;
                return true;
            }
        }
        return false;
    }

    /** Whether any listener is registered: callers skip measuring (e.g. {@code nanoTime}) when none is. */
    boolean any() {
        return listeners.length != 0;
    }

    void added(String key, Tier tier, long bytes) {
        for (CacheChangeListener listener : listeners) {
            try {
                listener.segmentAdded(key, tier, bytes);
            } catch (RuntimeException e) {
                failed(listener, e);
            }
        }
    }

    void moved(String key, Tier from, Tier to, long bytes) {
        for (CacheChangeListener listener : listeners) {
            try {
                listener.segmentMoved(key, from, to, bytes);
            } catch (RuntimeException e) {
                failed(listener, e);
            }
        }
    }

    void removed(String key, Tier tier, long bytes) {
        for (CacheChangeListener listener : listeners) {
            try {
                listener.segmentRemoved(key, tier, bytes);
            } catch (RuntimeException e) {
                failed(listener, e);
            }
        }
    }

    void ensureResidentCompleted(String key, Tier tier, long nanos, boolean succeeded) {
        for (CacheChangeListener listener : listeners) {
            try {
                listener.ensureResidentCompleted(key, tier, nanos, succeeded);
            } catch (RuntimeException e) {
                failed(listener, e);
            }
        }
    }

    private static void failed(CacheChangeListener listener, RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "cache change listener " + listener + " threw (the change stands)", e);
    }
}
