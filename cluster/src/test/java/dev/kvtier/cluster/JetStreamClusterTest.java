package dev.kvtier.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The end-to-end contract over JetStream: each rank and the router on its own connection. */
class JetStreamClusterTest extends ClusterEndToEndContract {
    private static final AtomicInteger STREAMS = new AtomicInteger();
    private static LocalNatsServer server;
    private static Path store;
    private String stream;
    private int retained;

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
    protected void newStream(int retainedMessages) {
        stream = "E2E" + STREAMS.incrementAndGet();
        retained = retainedMessages;
    }

    @Override
    protected SyncBus handle() {
        return new JetStreamSyncBus(server.url(), stream, stream.toLowerCase(), retained, Duration.ofSeconds(5));
    }
}
