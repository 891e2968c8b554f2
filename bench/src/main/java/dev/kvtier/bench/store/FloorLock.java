package dev.kvtier.bench.store;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The uncontended path of the store's lock ({@code dev.kvtier.store.StoreLock}, package-private there), copied
 * instruction for instruction for {@link LockedSeedPort}: one compare-and-set to take it, a release store to
 * give it back, the holder's id written in between. A benchmark baseline only: it never waits (the benchmarks run
 * one thread, so the lock is always free) and throws if it is ever found held. Not reentrant.
 */
final class FloorLock {
    private static final VarHandle VERSION;

    static {
        try {
            VERSION = MethodHandles.lookup().findVarHandle(FloorLock.class, "version", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused")
    private long version;
    private long holder;

    long lock() {
        long v = (long) VERSION.getOpaque(this);
        if ((v & 1) == 0 && VERSION.compareAndSet(this, v, v + 1)) {
            VarHandle.storeStoreFence();
            holder = Thread.currentThread().threadId();
            return v + 1;
        }
        throw new IllegalStateException("FloorLock found held (version " + v + "): the floor benchmarks run one thread");
    }

    void unlock(long stamp) {
        holder = 0;
        VERSION.setRelease(this, stamp + 1);
    }
}
