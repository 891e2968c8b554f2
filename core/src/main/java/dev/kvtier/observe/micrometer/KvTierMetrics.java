package dev.kvtier.observe.micrometer;

import dev.kvtier.CacheChangeListener;
import dev.kvtier.CacheStats;
import dev.kvtier.KvTierCache;
import dev.kvtier.store.Tier;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;

import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * Micrometer meters for one {@link KvTierCache}, what users ask first leading:
 * <ul>
 *   <li>{@code kvtier.lookups} (counter, tags {@code result} {@code hit} or {@code miss}, {@code tier}): the
 *       {@code ensureResident} and {@code ensureResidentAsync} calls for {@code tier}, as Micrometer's
 *       {@code cache.gets} counts a cache's gets: a hit found the segment on {@code tier} or a faster one, a miss
 *       had to bring it up from a slower tier or did not find it (not cached, or the call failed). The hit rate on
 *       GPU is {@code hit / (hit + miss)} with {@code tier=GPU};</li>
 *   <li>{@code kvtier.prefix.lookups} (counter) and {@code kvtier.prefix.blocks} (counter, tag {@code result}
 *       {@code queried} or {@code matched}): prefix lookups ({@code PrefixBlockCache.lookupPrefix}), the blocks
 *       they asked for and the leading blocks they found cached; {@code matched / queried} is the prefix hit rate
 *       (the figure vLLM and LMCache lead with);</li>
 *   <li>{@code kvtier.prefix.restore} (timer, tags {@code tier} asked for, {@code outcome}): the latency of prefix
 *       restores ({@code ensurePrefixResident}, {@code ensurePrefixResidentByLayer} until its last layer), and
 *       {@code kvtier.prefix.restore.blocks} (counter, tag {@code tier}): the blocks they pinned;</li>
 *   <li>{@code kvtier.demotions} (counter): completed moves to a slower tier, made to make room or asked for;
 *       {@code kvtier.evictions} (counter): segments removed from a full, bounded DISK tier to make room there;</li>
 *   <li>{@code kvtier.tier.used} (gauge, bytes, tag {@code tier}): bytes of segments on each tier;</li>
 *   <li>{@code kvtier.tier.allocated} (gauge, bytes, tag {@code tier}): bytes held in the cache's own pages;</li>
 *   <li>{@code kvtier.transfers} (counter): completed moves between tiers;</li>
 *   <li>{@code kvtier.failures} (counter): calls that failed because bytes could not be moved or checked;</li>
 *   <li>{@code kvtier.moved} (counter, bytes, tags {@code from}, {@code to}): bytes moved per tier pair;</li>
 *   <li>{@code kvtier.ensure.resident} (timer, tags {@code tier} asked for, {@code outcome} success or
 *       failure): the latency of {@code ensureResident} and {@code ensureResidentAsync}.</li>
 *   <li>With a remote block store ({@code KvTierConfig.remote()}): {@code kvtier.remote.blocks.found},
 *       {@code .blocks.gated}, {@code .blocks.fetched}, {@code .fetched} (bytes), {@code .blocks.written},
 *       {@code .writes.dropped}, {@code .failures}, {@code .rejections} (tag {@code cause}) (counters), and
 *       {@code kvtier.remote.down}, {@code .estimate.fetch}, {@code .estimate.recompute} (gauges, seconds): see
 *       {@link dev.kvtier.RemoteStoreStats}.</li>
 * </ul>
 * Gauges and the counters of moves, failures, demotions and evictions read {@link KvTierCache#stats()} when the
 * registry asks (they count from the cache's open, not from binding); after the cache is closed they keep their
 * last values. The lookups, prefix meters and timers count from binding: they are fed by a
 * {@link CacheChangeListener} registered in {@link #bindTo} and removed by {@link #close} (so an
 * {@code ensureResident} call is timed only while bound: see that listener method for why that matters).
 *
 * <p>Micrometer is an optional dependency of kvtier: only this package uses it, so a cache works
 * without it on the class path; whoever binds this class brings {@code micrometer-core}. Bind one
 * instance to one registry (a composite registry for several). Thread-safe. On the module path, the application's
 * module {@code requires micrometer.core} as well as {@code dev.kvtier.core}, which reads it only statically.
 */
@SuppressWarnings("exports") // Micrometer's types in the signatures: the optional dependency stays optional
public final class KvTierMetrics implements MeterBinder, AutoCloseable {
    private final KvTierCache cache;
    private final Iterable<Tag> tags;
    private volatile CacheStats last;
    private volatile Listener listener;

    /**
     * Meters for {@code cache}, each with {@code tags} (e.g. the model or rank it serves) added; null tags: none.
     *
     * @throws IllegalArgumentException if {@code cache} is null
     */
    public KvTierMetrics(KvTierCache cache, Iterable<Tag> tags) {
        if (cache == null) {
            throw new IllegalArgumentException("cache must not be null");
        }
        this.cache = cache;
        this.tags = tags == null ? Tags.empty() : tags;
    }

    /** Meters for {@code cache} with no extra tags. */
    public KvTierMetrics(KvTierCache cache) {
        this(cache, Tags.empty());
    }

    /**
     * Registers the meters and starts timing {@code ensureResident}.
     *
     * @throws IllegalStateException    if this instance is already bound (bind to a composite registry
     *                                  instead), or the cache is closed
     * @throws IllegalArgumentException if {@code registry} is null
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        if (registry == null) {
            throw new IllegalArgumentException("registry must not be null");
        }
        synchronized (this) {
            if (listener != null) {
                throw new IllegalStateException("already bound to a registry; bind to a CompositeMeterRegistry to"
                        + " report to several");
            }
            last = cache.stats();
            int tiers = Tier.values().length;
            listener = new Listener(new Timer[tiers][2], new Counter[tiers][2], new Timer[tiers][2], new Counter[tiers],
                    Counter.builder("kvtier.prefix.lookups").tags(tags)
                            .description("Prefix lookups").register(registry),
                    prefixBlocks(registry, "queried", "Blocks asked for by prefix lookups"),
                    prefixBlocks(registry, "matched", "Leading blocks prefix lookups found cached"));
        }
        Timer[][] timers = listener.timers();
        for (Tier tier : Tier.values()) {
            String name = tier.name();
            for (boolean hit : new boolean[] {true, false}) {
                listener.lookups()[tier.ordinal()][hit ? 0 : 1] = Counter.builder("kvtier.lookups")
                        .tags(tags).tag("result", hit ? "hit" : "miss").tag("tier", name)
                        .description("ensureResident calls for the tier: hits found the segment there or faster")
                        .register(registry);
                listener.restores()[tier.ordinal()][hit ? 0 : 1] = Timer.builder("kvtier.prefix.restore")
                        .tags(tags).tag("tier", name).tag("outcome", hit ? "success" : "failure")
                        .description("Latency of prefix restores, by the tier asked for").register(registry);
            }
            listener.restoredBlocks()[tier.ordinal()] = Counter.builder("kvtier.prefix.restore.blocks")
                    .tags(tags).tag("tier", name).description("Blocks pinned by prefix restores").register(registry);
            Gauge.builder("kvtier.tier.used", this, m -> m.stats().used(tier))
                    .tags(tags).tag("tier", name).baseUnit(BaseUnits.BYTES)
                    .description("Bytes of segments on the tier").register(registry);
            Gauge.builder("kvtier.tier.allocated", this, m -> m.stats().allocated(tier))
                    .tags(tags).tag("tier", name).baseUnit(BaseUnits.BYTES)
                    .description("Bytes of segments held in the cache's own pages on the tier").register(registry);
            for (boolean succeeded : new boolean[] {true, false}) {
                timers[tier.ordinal()][succeeded ? 0 : 1] = Timer.builder("kvtier.ensure.resident")
                        .tags(tags).tag("tier", name).tag("outcome", succeeded ? "success" : "failure")
                        .description("Latency of ensureResident, by the tier asked for").register(registry);
            }
        }
        counter(registry, "kvtier.transfers", s -> s.transfers(), null, "Completed moves between tiers");
        counter(registry, "kvtier.demotions", s -> s.demotions(), null, "Completed moves to a slower tier");
        counter(registry, "kvtier.evictions", s -> s.evictions(), null,
                "Segments removed from a full DISK tier to make room there");
        counter(registry, "kvtier.failures", s -> s.failures(), null,
                "Calls that failed because bytes could not be moved or checked");
        for (Tier from : Tier.values()) {
            for (Tier to : Tier.values()) {
                if (from != to) {
                    FunctionCounter.builder("kvtier.moved", this, m -> m.stats().bytesMoved(from, to))
                            .tags(tags).tag("from", from.name()).tag("to", to.name()).baseUnit(BaseUnits.BYTES)
                            .description("Bytes moved by completed transfers").register(registry);
                }
            }
        }
        if (last.remote().configured()) {
            bindRemote(registry);
        }
        cache.addListener(listener);
    }

    /** The remote block store's meters, beside the others (registered only when the cache has a store). */
    private void bindRemote(MeterRegistry registry) {
        counter(registry, "kvtier.remote.blocks.found", s -> s.remote().remoteBlocksFound(), null,
                "Blocks prefix lookups found in the remote store (after the cost gate)");
        counter(registry, "kvtier.remote.blocks.gated", s -> s.remote().gatedBlocks(), null,
                "Remote blocks reported not cached because the cost gate judged recomputing faster");
        counter(registry, "kvtier.remote.blocks.fetched", s -> s.remote().blocksFetched(), null,
                "Blocks fetched from the remote store, checked and stored locally");
        counter(registry, "kvtier.remote.fetched", s -> s.remote().bytesFetched(), BaseUnits.BYTES,
                "Bytes of values fetched from the remote store");
        counter(registry, "kvtier.remote.blocks.written", s -> s.remote().blocksWritten(), null,
                "Blocks written through to the remote store");
        counter(registry, "kvtier.remote.writes.dropped", s -> s.remote().writesDropped(), null,
                "Blocks not written through: queue full or store down");
        counter(registry, "kvtier.remote.failures", s -> s.remote().failures(), null,
                "Calls to the remote store that failed or timed out");
        for (dev.kvtier.RemoteRejection cause : dev.kvtier.RemoteRejection.values()) {
            FunctionCounter.builder("kvtier.remote.rejections", this, m -> m.stats().remote().rejections(cause))
                    .tags(tags).tag("cause", cause.name().toLowerCase(java.util.Locale.ROOT))
                    .description("Values from the remote store not served, by cause").register(registry);
        }
        Gauge.builder("kvtier.remote.down", this, m -> m.stats().remote().down() ? 1 : 0).tags(tags)
                .description("1 while the remote store is marked down").register(registry);
        Gauge.builder("kvtier.remote.estimate.fetch", this, m -> m.stats().remote().estimatedFetchNanos() / 1e9)
                .tags(tags).baseUnit("seconds")
                .description("The cost gate's last estimate of fetching a prefix's remote blocks").register(registry);
        Gauge.builder("kvtier.remote.estimate.recompute", this,
                        m -> m.stats().remote().estimatedRecomputeNanos() / 1e9)
                .tags(tags).baseUnit("seconds")
                .description("The cost gate's last estimate of recomputing them").register(registry);
    }

    private Counter prefixBlocks(MeterRegistry registry, String result, String description) {
        return Counter.builder("kvtier.prefix.blocks").tags(tags).tag("result", result).description(description)
                .register(registry);
    }

    private void counter(MeterRegistry registry, String name, ToDoubleFunction<CacheStats> value, String unit,
                         String description) {
        FunctionCounter.builder(name, this, m -> value.applyAsDouble(m.stats()))
                .tags(tags).baseUnit(unit).description(description).register(registry);
    }

    /** The cache's counters now, or the last ones read once it is closed. */
    private CacheStats stats() {
        try {
            CacheStats now = cache.stats();
            last = now;
            return now;
        } catch (IllegalStateException closed) {
            CacheStats before = last;
            if (before == null) {
                throw closed;
            }
            return before;
        }
    }

    /** Stops timing {@code ensureResident} (the gauges and counters stay registered). Idempotent. */
    @Override
    public void close() {
        Listener timing = listener;
        if (timing != null) {
            cache.removeListener(timing);
        }
    }

    /** Feeds the timers, the lookups and the prefix meters (by tier ordinal, then success or hit first); the others are read from the stats. */
    private record Listener(Timer[][] timers, Counter[][] lookups, Timer[][] restores, Counter[] restoredBlocks,
                            Counter prefixLookups, Counter queriedBlocks, Counter matchedBlocks)
            implements CacheChangeListener {
        @Override
        public void ensureResidentCompleted(String key, Tier tier, Tier foundOn, long nanos) {
            timers[tier.ordinal()][foundOn != null ? 0 : 1].record(nanos, TimeUnit.NANOSECONDS);
            boolean hit = foundOn != null && !tier.isFasterThan(foundOn);
            lookups[tier.ordinal()][hit ? 0 : 1].increment();
        }

        @Override
        public void prefixLookedUp(int queried, int matched) {
            prefixLookups.increment();
            queriedBlocks.increment(queried);
            matchedBlocks.increment(matched);
        }

        @Override
        public void prefixRestoreCompleted(Tier tier, int blocks, long nanos, boolean succeeded) {
            restores[tier.ordinal()][succeeded ? 0 : 1].record(nanos, TimeUnit.NANOSECONDS);
            restoredBlocks[tier.ordinal()].increment(blocks);
        }
    }
}
