package dev.kvtier.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The contract on JetStream: one nats-server for the class (started by PID on a free loopback port, with a
 * temporary store), one stream per test, and a second connection standing in for another process.
 */
class JetStreamSyncBusTest extends SyncBusContract {
    private static final AtomicInteger STREAMS = new AtomicInteger();
    private static LocalNatsServer server;
    private static Path store;

    @BeforeAll
    static void startServer() throws Exception {
        store = Files.createTempDirectory("kvtier-nats-");
        server = LocalNatsServer.start(store);
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.kill();
        }
        TestFiles.deleteTree(store);
    }

    @Override
    protected SyncBus newBus(int retainedMessages) {
        int id = STREAMS.incrementAndGet();
        return new JetStreamSyncBus(server.url(), "KVT" + id, "kvt" + id, retainedMessages, Duration.ofSeconds(5));
    }

    @Override
    protected SyncBus sameStream(SyncBus bus) {
        JetStreamSyncBus jetStream = (JetStreamSyncBus) bus;
        SyncBus other = jetStream.reconnect();
        register(other);
        return other;
    }
}
