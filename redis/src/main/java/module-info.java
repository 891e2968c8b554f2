/**
 * kvtier's {@code RemoteBlockStore} on Redis: {@code dev.kvtier.redis.RedisRemoteBlockStore} over Lettuce (standalone,
 * TLS, ACL users, Redis Cluster), opened by URI ({@code redis://}, {@code rediss://}, {@code redis-cluster://},
 * {@code rediss-cluster://}) through core's {@code RemoteBlockStoreProvider} service, and a {@code redis-server} that
 * tests, benchmarks and the simulator start and stop by PID. Exports {@code dev.kvtier.redis}; reads
 * {@code dev.kvtier.core}, whose SPI it implements. Lettuce's types are not part of its API.
 */
module dev.kvtier.redis {
    requires transitive dev.kvtier.core;
    requires lettuce.core;
    requires io.netty.buffer;
    requires io.netty.common;
    requires io.netty.transport;

    exports dev.kvtier.redis;

    provides dev.kvtier.remote.RemoteBlockStoreProvider with dev.kvtier.redis.RedisRemoteBlockStoreProvider;
}
