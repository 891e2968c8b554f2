package dev.kvtier.observe.micrometer;

import dev.kvtier.CacheChangeListener;
import dev.kvtier.CacheStats;
import dev.kvtier.KvTierCache;
import dev.kvtier.store.Tier;
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
 * Micrometer meters for one {@link KvTierCache}:
 * <ul>
 *   <li>{@code kvtier.tier.used} (gauge, bytes, tag {@code tier}): bytes of segments on each tier;</li>
 *   <li>{@code kvtier.tier.allocated} (gauge, bytes, tag {@code tier}): bytes held in the cache's own pages;</li>
 *   <li>{@code kvtier.transfers} (counter): completed moves between tiers;</li>
 *   <li>{@code kvtier.failures} (counter): calls that failed because bytes could not be moved or checked;</li>
 *   <li>{@code kvtier.moved} (counter, bytes, tags {@code from}, {@code to}): bytes moved per tier pair;</li>
 *   <li>{@code kvtier.ensure.resident} (timer, tags {@code tier} asked for, {@code outcome} success or
 *       failure): the latency of {@code ensureResident} and {@code ensureResidentAsync}.</li>
 * </ul>
 * Gauges and counters read {@link KvTierCache#stats()} when the registry asks (they count from the
 * cache's open, not from binding); after the cache is closed they keep their last values. The timer
 * is fed by a {@link CacheChangeListener} registered in {@link #bindTo} and removed by {@link #close}.
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

    /** Meters for {@code cache}, each with {@code tags} (e.g. the model or rank it serves) added. */
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
     * @throws IllegalStateException if this instance is already bound (bind to a composite registry
     *                               instead), or the cache is closed
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        synchronized (this) {
            if (listener != null) {
                throw new IllegalStateException("already bound to a registry; bind to a CompositeMeterRegistry to"
                        + " report to several");
            }
            last = cache.stats();
            listener = new Listener(new Timer[Tier.values().length][2]);
        }
        Timer[][] timers = listener.timers();
        for (Tier tier : Tier.values()) {
            String name = tier.name();
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
        cache.addListener(listener);
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

    /** Feeds the timers; the others are read from the stats. */
    private record Listener(Timer[][] timers) implements CacheChangeListener {
        @Override
        public void ensureResidentCompleted(String key, Tier tier, long nanos, boolean succeeded) {
            timers[tier.ordinal()][succeeded ? 0 : 1].record(nanos, TimeUnit.NANOSECONDS);
        }
    }
}
