package dev.kvtier.tiering;

import dev.kvtier.CacheStats;
import dev.kvtier.RemoteStoreStats;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/** Transfers, demotions, evictions, failures and bytes moved per tier pair, counted as they happen. Thread-safe. */
final class TierCounters {
    private static final int TIERS = Tier.values().length;

    private final LongAdder transfers = new LongAdder();
    private final LongAdder demotions = new LongAdder();
    private final LongAdder evictions = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private final AtomicLongArray bytesMoved = new AtomicLongArray(TIERS * TIERS);

    /** A move from {@code from} to {@code to} of {@code bytes} completed. */
    void transferred(Tier from, Tier to, long bytes) {
        transfers.increment();
        if (from.isFasterThan(to)) {
            demotions.increment();
        }
        bytesMoved.addAndGet(from.ordinal() * TIERS + to.ordinal(), bytes);
    }

    /** A segment was evicted from a full DISK tier: removed from the cache to make room there. */
    void evicted() {
        evictions.increment();
    }

    /** A call failed because bytes could not be moved or checked (counted once per call, not per retry). */
    void failed() {
        failures.increment();
    }

    /** A snapshot with the store's usage and the memories' allocated bytes. */
    CacheStats snapshot(TieredStore store, TierMemories memories, RemoteStoreStats remote) {
        long[] moved = new long[TIERS * TIERS];
        for (int i = 0; i < moved.length; i++) {
            moved[i] = bytesMoved.get(i);
        }
        long[] allocated = new long[TIERS];
        for (Tier tier : Tier.values()) {
            allocated[tier.ordinal()] = memories.bytesInUse(tier);
        }
        return new CacheStats(store.gpuUsed(), store.cpuUsed(), store.diskUsed(), transfers.sum(), demotions.sum(),
                evictions.sum(), failures.sum(), moved, allocated, remote);
    }
}
