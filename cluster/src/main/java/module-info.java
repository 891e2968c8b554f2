/**
 * kvtier across processes and hosts: the {@code SyncBus} SPI (in-process and NATS JetStream), the wire format, a
 * rank's publisher and cache bridge, the cluster state and the router answering {@code CacheRoutingHint}. Exports
 * {@code dev.kvtier.cluster}; reads {@code dev.kvtier.core}, whose types its API uses.
 */
module dev.kvtier.cluster {
    requires transitive dev.kvtier.core;
    requires io.nats.jnats;

    exports dev.kvtier.cluster;
}
