/**
 * kvtier: LLM-inference KV cache kept on GPU, pinned host memory and disk. The API packages are exported: the door
 * ({@code dev.kvtier}: {@code KvTierCache}, its configuration and exceptions), the prefix-block API
 * ({@code dev.kvtier.prefix}), the logical store's types the API speaks ({@code dev.kvtier.store}: {@code Tier},
 * {@code PositionRange}, {@code DemotionPolicy}, ...), cross-rank coordination ({@code dev.kvtier.sync}) and
 * observability ({@code dev.kvtier.observe}, {@code dev.kvtier.observe.micrometer}, the latter only with
 * Micrometer present). The machinery ({@code tiering}, {@code exec}, {@code persist}, {@code concurrent}) is
 * internal; the cluster module gets the two utilities it shares.
 */
@SuppressWarnings("module") // qualified exports name dev.kvtier.cluster, built after this module
module dev.kvtier.core {
    requires dev.kvtier.bindings;
    requires java.management;  // the CPU budget's default reads the machine's memory (KvTierConfig)
    requires jdk.management;
    requires transitive jdk.jfr;
    // Optional, and not transitive: whoever binds KvTierMetrics (a MeterBinder) requires micrometer.core itself.
    requires static micrometer.core;

    exports dev.kvtier;
    exports dev.kvtier.prefix;
    exports dev.kvtier.remote;
    exports dev.kvtier.store;
    exports dev.kvtier.sync;
    exports dev.kvtier.observe;
    exports dev.kvtier.observe.micrometer;

    uses dev.kvtier.remote.RemoteBlockStoreProvider;

    exports dev.kvtier.concurrent to dev.kvtier.cluster;
    exports dev.kvtier.persist to dev.kvtier.cluster;
}
