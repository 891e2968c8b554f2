package dev.kvtier.bench.sim;

/**
 * {@link CacheUnderTest} over {@code dev.kvtier.KvTierCache}. Placeholder until the facade lands on main:
 * opening fails with a clear message.
 */
final class KvTierCacheAdapter {
    private KvTierCacheAdapter() {
    }

    static CacheUnderTest open(CacheUnderTest.Settings settings) {
        throw new UnsupportedOperationException("dev.kvtier.KvTierCache is not on this branch yet");
    }
}
