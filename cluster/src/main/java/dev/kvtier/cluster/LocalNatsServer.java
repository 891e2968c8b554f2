package dev.kvtier.cluster;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@code nats-server} with JetStream that this process starts and stops itself, by PID: for tests, benchmarks and
 * the simulator; never a system service. It listens on loopback only, on a free port, and stores its streams in a
 * directory the caller names (kept across {@link #kill()} and {@link #start()}, so a restarted server still has the
 * stream).
 *
 * <p>The binary is {@code -Dkvtier.nats.server=PATH} if set, else the first {@code nats-server} on {@code PATH},
 * {@code /usr/sbin}, {@code /usr/bin} or {@code /usr/local/bin}. Not thread-safe: one owner starts and stops it.
 */
public final class LocalNatsServer implements AutoCloseable {
    /** System property naming the nats-server binary. */
    public static final String BINARY_PROPERTY = "kvtier.nats.server";
    private static final long READY_TIMEOUT_MS = 10_000;

    private final Path binary;
    private final Path storeDirectory;
    private final int port;
    /** A configuration file given to the server with {@code -c}, or null. */
    private final Path configFile;
    private Process process;

    private LocalNatsServer(Path binary, Path storeDirectory, int port, Path configFile) {
        this.binary = binary;
        this.storeDirectory = storeDirectory;
        this.port = port;
        this.configFile = configFile;
    }

    /**
     * Starts a server on a free loopback port storing into {@code storeDirectory} and waits until it accepts
     * connections.
     *
     * @param storeDirectory where the server keeps its JetStream store and its log ({@code nats-server.log});
     *                       created if missing, never deleted by this class
     * @return the running server, owned by the caller ({@link #close()} stops it)
     * @throws IllegalStateException naming where it looked when there is no nats-server binary, or when the server
     *     does not accept connections within 10 s (its exit code, if it died)
     * @throws IOException           when no free port can be found, the directory cannot be created or the process
     *                               cannot be started
     */
    public static LocalNatsServer start(Path storeDirectory) throws IOException {
        LocalNatsServer server = new LocalNatsServer(findBinary(), storeDirectory, freePort(), null);
        server.start();
        return server;
    }

    /**
     * {@link #start(Path)} with {@code configuration} (nats-server configuration text: {@code max_payload},
     * {@code accounts} with users and permissions, ...) in a file beside the store directory, given with {@code -c};
     * the address, port, JetStream and store directory are still set on the command line and win.
     *
     * @param storeDirectory where the server keeps its JetStream store and its log; the configuration is written to
     *                       a sibling file named after it with {@code .conf} appended
     * @param configuration  nats-server configuration text, written as is
     * @return the running server, owned by the caller ({@link #close()} stops it)
     * @throws IllegalStateException as {@link #start(Path)}
     * @throws IOException           when the configuration file cannot be written, or as {@link #start(Path)}
     */
    public static LocalNatsServer start(Path storeDirectory, String configuration) throws IOException {
        Path absolute = storeDirectory.toAbsolutePath();
        Path configFile = absolute.resolveSibling(absolute.getFileName() + ".conf");
        Files.createDirectories(absolute.getParent());
        Files.writeString(configFile, configuration);
        LocalNatsServer server = new LocalNatsServer(findBinary(), storeDirectory, freePort(), configFile);
        server.start();
        return server;
    }

    /**
     * The binary this class would run; throws naming the places tried and the fix when there is none.
     *
     * @return the first executable {@code nats-server} among the places the class comment lists
     * @throws IllegalStateException naming the places tried and the fix when there is none
     */
    public static Path findBinary() {
        List<Path> tried = new ArrayList<>();
        String property = System.getProperty(BINARY_PROPERTY);
        if (property != null && !property.isBlank()) {
            tried.add(Path.of(property));
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String directory : path.split(java.io.File.pathSeparator)) {
                if (!directory.isEmpty()) {
                    tried.add(Path.of(directory, "nats-server"));
                }
            }
        }
        for (String directory : List.of("/usr/sbin", "/usr/bin", "/usr/local/bin")) {
            tried.add(Path.of(directory, "nats-server"));
        }
        for (Path candidate : tried) {
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("no nats-server binary found (tried -D" + BINARY_PROPERTY + ", PATH, /usr/sbin,"
                + " /usr/bin, /usr/local/bin): install it ('apt-get install nats-server') or set -D" + BINARY_PROPERTY);
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /**
     * (Re)starts the server process on the same port and store directory (after {@link #kill()} or {@link #stop()}).
     *
     * @throws IllegalStateException if it is already running or does not become ready within 10 s
     * @throws IOException           when the store directory cannot be created or the process cannot be started
     */
    public void start() throws IOException {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException("nats-server (pid " + process.pid() + ") is already running");
        }
        Files.createDirectories(storeDirectory);
        Path logFile = storeDirectory.resolve("nats-server.log");
        List<String> command = new ArrayList<>(List.of(binary.toString()));
        if (configFile != null) {
            command.addAll(List.of("-c", configFile.toString()));
        }
        command.addAll(List.of("-js", "-a", "127.0.0.1", "-p", Integer.toString(port), "-sd",
                storeDirectory.toString()));
        process = new ProcessBuilder(command)
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile())).start();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READY_TIMEOUT_MS);
        while (true) {
            if (!process.isAlive()) {
                throw new IllegalStateException("nats-server exited with " + process.exitValue() + " at start (port "
                        + port + "); its log: " + logFile);
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                if (System.nanoTime() > deadline) {
                    kill();
                    throw new IllegalStateException("nats-server did not accept connections on port " + port
                            + " within " + READY_TIMEOUT_MS + " ms; its log: " + logFile, notYet);
                }
                // A failed connect to a port nobody listens on returns at once: wait a little before the next try.
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
        }
    }

    /**
     * The client URL, {@code nats://127.0.0.1:<port>}.
     *
     * @return the URL, the same across restarts of this server (the port is kept)
     */
    public String url() {
        return "nats://127.0.0.1:" + port;
    }

    /**
     * The server's process id; throws if it is not running.
     *
     * @return the operating system's id of the running nats-server process
     * @throws IllegalStateException if it is not running
     */
    public long pid() {

        if (process == null || !process.isAlive()) {
            throw new IllegalStateException("nats-server is not running");
        }
        return process.pid();
    }

    /** SIGKILL and wait for the process to be gone (at most 10 s); the store directory stays. No-op when not running. */
    public void kill() {
        end(true);
    }

    /** SIGTERM (a clean shutdown) and wait, at most 10 s, then SIGKILL. No-op when not running. */
    public void stop() {
        end(false);
    }

    private void end(boolean forcibly) {
        if (process == null) {
            return;
        }
        if (forcibly) {
            process.destroyForcibly();
        } else {
            process.destroy();
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** {@link #stop()}. */
    @Override
    public void close() {
        stop();
    }
}
