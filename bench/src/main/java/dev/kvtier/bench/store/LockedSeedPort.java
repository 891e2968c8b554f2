package dev.kvtier.bench.store;

import dev.kvtier.store.Tier;

/**
 * The floor of issue 12's store benchmarks: the seed port ({@link SeedPortStore}, a {@code HashMap} of mutable
 * records) with every operation taken under the store's lock protocol ({@link FloorLock}) as {@code TieredStore}
 * takes it, one acquisition per operation. What thread safety by one exclusive lock costs with no index, no policy
 * and no snapshot. The one definition behind {@link LockedMapFloorBenchmark} and {@link StoreAbCheck}'s floor slices.
 * Answers as the port does. Single-threaded use only (its lock never waits; see {@link FloorLock}). Benchmarks only.
 */
final class LockedSeedPort {
    private final SeedPortStore store;
    private final FloorLock lock = new FloorLock();

    LockedSeedPort(long gpuBudget, long cpuBudget) {
        store = new SeedPortStore(gpuBudget, cpuBudget);
    }

    boolean register(SeedPortStore.Meta meta, Tier tier) {
        long stamp = lock.lock();
        try {
            return store.register(meta, tier);
        } finally {
            lock.unlock(stamp);
        }
    }

    SeedPortStore.Meta remove(String key) {
        long stamp = lock.lock();
        try {
            return store.remove(key);
        } finally {
            lock.unlock(stamp);
        }
    }

    boolean touch(String key) {
        long stamp = lock.lock();
        try {
            return store.touch(key);
        } finally {
            lock.unlock(stamp);
        }
    }

    /** The lookup under the lock, answering the record (as the port does; no snapshot). */
    SeedPortStore.Meta get(String key) {
        long stamp = lock.lock();
        try {
            return store.get(key);
        } finally {
            lock.unlock(stamp);
        }
    }

    SeedPortStore.Transfer demote(String key, Tier to) {
        long stamp = lock.lock();
        try {
            return store.demote(key, to);
        } finally {
            lock.unlock(stamp);
        }
    }

    SeedPortStore.Transfer promote(String key, Tier to) {
        long stamp = lock.lock();
        try {
            return store.promote(key, to);
        } finally {
            lock.unlock(stamp);
        }
    }

    /** The record's increment under the lock, the record found by the caller (what a handle gives). */
    boolean touch(SeedPortStore.Meta record) {
        long stamp = lock.lock();
        try {
            record.accessCount++;
            return true;
        } finally {
            lock.unlock(stamp);
        }
    }
}
