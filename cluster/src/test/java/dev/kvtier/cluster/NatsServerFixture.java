package dev.kvtier.cluster;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A test's {@link LocalNatsServer} (its own process) and what the test opens against it, torn down after each test:
 * the resources handed to {@link #closeLater} are closed in reverse order (publishers and routers before their buses),
 * then the server is killed by PID, also when a close failed. The store directory stays where the test put it (under
 * its {@code @TempDir}).
 *
 * <p>Register it as an instance field, {@code @RegisterExtension final NatsServerFixture nats = new
 * NatsServerFixture();}, and start the server inside the test, so that each test picks its store directory and
 * configuration. Not thread-safe: used from the test's thread.
 */
final class NatsServerFixture implements AfterEachCallback {
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private LocalNatsServer server;

    /** Starts a server storing into {@code storeDirectory}; see {@link LocalNatsServer#start(Path)}. */
    LocalNatsServer start(Path storeDirectory) throws IOException {
        requireNotStarted();
        server = LocalNatsServer.start(storeDirectory);
        return server;
    }

    /** Starts a server with a configuration file; see {@link LocalNatsServer#start(Path, String)}. */
    LocalNatsServer start(Path storeDirectory, String configuration) throws IOException {
        requireNotStarted();
        server = LocalNatsServer.start(storeDirectory, configuration);
        return server;
    }

    private void requireNotStarted() {
        if (server != null) {
            throw new IllegalStateException("this test already started a nats-server (" + server.url()
                    + "); restart it with server().start()");
        }
    }

    /** The server this test started (it may be stopped or killed for now). */
    LocalNatsServer server() {
        if (server == null) {
            throw new IllegalStateException("no nats-server started yet: call start(...) first");
        }
        return server;
    }

    /** Closes {@code resource} after the test, before the server is killed and before what was registered earlier. */
    <T extends AutoCloseable> T closeLater(T resource) {
        toClose.add(resource);
        return resource;
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        try {
            for (int i = toClose.size() - 1; i >= 0; i--) {
                toClose.get(i).close();
            }
        } finally {
            toClose.clear();
            if (server != null) {
                server.kill();
                server = null;
            }
        }
    }
}
