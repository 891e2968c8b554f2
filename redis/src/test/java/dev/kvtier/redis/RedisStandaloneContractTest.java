package dev.kvtier.redis;

import dev.kvtier.remote.RemoteBlockStore;
import dev.kvtier.remote.RemoteBlockStoreContract;
import dev.kvtier.remote.RemoteBlockStores;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * The store contract on one {@code redis-server} (started by this class on a loopback port), the store opened by URI
 * through {@link RemoteBlockStores} and this module's provider.
 */
class RedisStandaloneContractTest extends RemoteBlockStoreContract {
    private static Path directory;
    private static LocalRedisServer server;

    @BeforeAll
    static void startServer() throws IOException {
        directory = Files.createTempDirectory("kvtier-redis-contract");
        server = LocalRedisServer.start(directory, "");
    }

    @AfterAll
    static void stopServer() throws IOException {
        server.kill();
        TestDirectories.delete(directory);
    }

    @Override
    protected RemoteBlockStore newStore() {
        return RemoteBlockStores.open(URI.create(server.uri()), Map.of("commandTimeoutMs", "10000"));
    }

    @Override
    protected Duration callReturnBound() {
        return Duration.ofMillis(50); // a loaded 2-core machine; the calls only queue
    }
}
