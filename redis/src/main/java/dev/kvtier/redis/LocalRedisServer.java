package dev.kvtier.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A {@code redis-server} that this process starts and stops itself, by PID: for tests, benchmarks and the simulator;
 * never a system service. It listens on loopback only, on a free port, with its data (RDB, AOF, cluster state) in a
 * directory the caller names, kept across {@link #kill()} and {@link #start()} unless {@link #deleteData()} removes
 * it. {@code DEBUG} is enabled for local connections (tests slow the server with {@code DEBUG SLEEP}); nothing is
 * saved unless the extra configuration asks for it ({@code save}, {@code appendonly yes}).
 *
 * <p>The binary is {@code -Dkvtier.redis.server=PATH} if set, else the first {@code redis-server} on {@code PATH},
 * {@code /usr/bin}, {@code /usr/local/bin} or {@code /usr/sbin}; {@link #cli} runs the {@code redis-cli} beside it.
 * Not thread-safe: one owner starts and stops it.
 */
public final class LocalRedisServer implements AutoCloseable {
    /** System property naming the redis-server binary. */
    public static final String BINARY_PROPERTY = "kvtier.redis.server";
    private static final long READY_TIMEOUT_MS = 10_000;
    /** How many free ports {@link #start(Path, String)} tries when another process takes the one it picked. */
    private static final int PORT_ATTEMPTS = 5;

    private final Path binary;
    private final Path directory;
    private final int port;
    private final String extraConfiguration;
    private Process process;

    private LocalRedisServer(Path binary, Path directory, int port, String extraConfiguration) {
        this.binary = binary;
        this.directory = directory.toAbsolutePath();
        this.port = port;
        this.extraConfiguration = extraConfiguration;
    }

    /**
     * Starts a server on a free loopback port with its data in {@code directory} and {@code extraConfiguration}
     * (redis.conf lines: {@code maxmemory}, {@code appendonly yes}, {@code cluster-enabled yes}, ...; may be empty)
     * and waits until it answers {@code PING}.
     *
     * @param directory where the server keeps its redis.conf, log and data (created with its parents if absent; data
     *     already there is loaded; nothing is deleted on stop); not null
     * @param extraConfiguration redis.conf lines written after the defaults (so they override them); not null, may
     *     be empty
     * @return the running server, owned by the caller, who closes it to stop the process
     * @throws IOException if no free loopback port can be bound, the directory or its redis.conf cannot be created or
     *     written, or the redis-server process cannot be launched
     * @throws IllegalStateException naming where it looked when there is no redis-server binary, or when the server
     *     does not answer within 10 s or exits at start (its exit code and the end of its log); a port another process
     *     took between this method's look and the server's bind is not a failure: another free port is tried, up to
     *     5 in all
     */
    public static LocalRedisServer start(Path directory, String extraConfiguration) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                return start(directory, extraConfiguration, freePort(false));
            } catch (PortTakenException e) {
                // Another process bound the free port between our look and the server's bind: take another one.
                if (attempt == PORT_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    /** {@link #start(Path, String)} on a free port whose cluster bus port (port + 10000) is free too. */
    static LocalRedisServer startClusterNode(Path directory, String extraConfiguration) throws IOException {
        return start(directory, extraConfiguration, freePort(true));
    }

    private static LocalRedisServer start(Path directory, String extraConfiguration, int port) throws IOException {
        LocalRedisServer server = new LocalRedisServer(findBinary(), directory, port, extraConfiguration);
        server.start();
        return server;
    }

    /**
     * The binary this class would run; throws naming the places tried and the fix when there is none.
     *
     * @return the first executable {@code redis-server} among {@code -Dkvtier.redis.server}, {@code PATH},
     *     {@code /usr/bin}, {@code /usr/local/bin} and {@code /usr/sbin}; never null
     * @throws IllegalStateException if none of them is an executable file
     */
    public static Path findBinary() {
        List<Path> tried = new ArrayList<>();
        String property = System.getProperty(BINARY_PROPERTY);
        if (property != null && !property.isBlank()) {
            tried.add(Path.of(property));
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String entry : path.split(java.io.File.pathSeparator)) {
                if (!entry.isEmpty()) {
                    tried.add(Path.of(entry, "redis-server"));
                }
            }
        }
        for (String entry : List.of("/usr/bin", "/usr/local/bin", "/usr/sbin")) {
            tried.add(Path.of(entry, "redis-server"));
        }
        for (Path candidate : tried) {
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("no redis-server binary found (tried -D" + BINARY_PROPERTY + ", PATH,"
                + " /usr/bin, /usr/local/bin, /usr/sbin): install it ('apt-get install redis-server') or set -D"
                + BINARY_PROPERTY);
    }

    private static int freePort(boolean withBusPort) throws IOException {
        for (int attempt = 0; attempt < 100; attempt++) {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                int port = socket.getLocalPort();
                if (!withBusPort) {
                    return port;
                }
                if (port + 10_000 <= 65_535) {
                    try (ServerSocket bus = new ServerSocket(port + 10_000, 1, InetAddress.getLoopbackAddress())) {
                        return port;
                    } catch (IOException taken) {
                        // try another
                    }
                }
            }
        }
        throw new IOException("no free loopback port with a free cluster bus port (port + 10000) in 100 tries");
    }

    /**
     * (Re)starts the server on the same port and directory (after {@link #kill()} or {@link #stop()}), loading
     * whatever data the directory holds.
     *
     * @throws IOException if the directory or its redis.conf cannot be created or written, or the redis-server
     *     process cannot be launched
     * @throws IllegalStateException if it is already running, exits at start (its port taken, a bad configuration
     *     line; the message ends with the end of its log) or does not answer within 10 s (it is killed then)
     */
    public void start() throws IOException {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException("redis-server (pid " + process.pid() + ") is already running");
        }
        Files.createDirectories(directory);
        Path configFile = directory.resolve("redis.conf");
        Path logFile = directory.resolve("redis-server.log");
        Files.writeString(configFile, String.join("\n",
                "bind 127.0.0.1",
                "port " + port,
                "dir " + directory,
                "logfile " + logFile,
                "daemonize no",
                "save \"\"",
                "appendonly no",
                "enable-debug-command local",
                "cluster-config-file nodes.conf",
                extraConfiguration,
                ""));
        process = new ProcessBuilder(binary.toString(), configFile.toString())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(directory.resolve("redis-server.out").toFile()))
                .start();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READY_TIMEOUT_MS);
        while (true) {
            if (!process.isAlive()) {
                String tail = tail(logFile) + tail(directory.resolve("redis-server.out"));
                String message = "redis-server exited with " + process.exitValue() + " at start (port " + port
                        + "); its log, " + logFile + ", ends:\n" + tail;
                throw tail.contains("Address already in use") ? new PortTakenException(message)
                        : new IllegalStateException(message);
            }
            if ("+PONG".equals(ping())) {
                return;
            }
            if (System.nanoTime() > deadline) {
                kill();
                throw new IllegalStateException("redis-server did not answer PING on port " + port + " within "
                        + READY_TIMEOUT_MS + " ms; its log: " + logFile);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    /** The last lines of {@code file} (at most 2,000 characters), or nothing when it cannot be read. */
    private static String tail(Path file) {
        try {
            String text = Files.readString(file, java.nio.charset.StandardCharsets.UTF_8);
            return text.substring(Math.max(0, text.length() - 2_000));
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    /** The server could not bind a port it was given: another process took it (thrown by {@link #start()}). */
    static final class PortTakenException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        PortTakenException(String message) {
            super(message);
        }
    }

    /** One PING over a fresh socket: {@code +PONG}, an error line ({@code -LOADING ...}), or null if unreachable. */
    private String ping() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            socket.setSoTimeout(1000);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            StringBuilder line = new StringBuilder();
            for (int b = in.read(); b >= 0 && b != '\r'; b = in.read()) {
                line.append((char) b);
            }
            return line.toString();
        } catch (IOException notYet) {
            return null;
        }
    }

    /**
     * The port it listens on (127.0.0.1).
     *
     * @return the TCP port, chosen free at creation and kept across restarts, in {@code [1, 65535]} (below 55536 for
     *     a cluster node, whose bus port is this plus 10000)
     */
    public int port() {
        return port;
    }

    /**
     * The client URI, {@code redis://127.0.0.1:<port>}.
     *
     * @return the URI for {@link RedisRemoteBlockStore#open}, without credentials; valid across restarts
     */
    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /**
     * The directory holding its configuration, log and data.
     *
     * @return the absolute form of the directory given at start
     */
    public Path directory() {
        return directory;
    }

    /**
     * Whether the process is running.
     *
     * @return true while the process of the last start is alive; false after {@link #kill()}, {@link #stop()} or an
     *     exit of its own
     */
    public boolean isRunning() {
        return process != null && process.isAlive();
    }

    /**
     * The server's process id; throws if it is not running.
     *
     * @return the operating system's id of the running redis-server process (a new one after each restart)
     * @throws IllegalStateException if it is not running
     */
    public long pid() {
        if (!isRunning()) {
            throw new IllegalStateException("redis-server is not running");
        }
        return process.pid();
    }

    /**
     * Runs {@code redis-cli -h 127.0.0.1 -p <port> args...} (as the default user) and returns its output, trimmed.
     *
     * @param args the command and its arguments, one word each, for example {@code "CLUSTER", "INFO"}; not null
     * @return what redis-cli printed (standard output and error together), trimmed; an error reply such as
     *     {@code MOVED 1234 127.0.0.1:7001} or {@code ERR unknown command} is returned as text, not thrown
     * @throws IOException if redis-cli exits with a failure (for example when the server does not accept the
     *     connection) or does not finish within 30 s, with its output, or if the thread is interrupted while waiting
     */
    public String cli(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(binary.resolveSibling("redis-cli").toString(), "-h",
                "127.0.0.1", "-p", Integer.toString(port)));
        command.addAll(List.of(args));
        return run(command);
    }

    static String run(List<String> command) throws IOException {
        Process cli = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            boolean finished = cli.waitFor(30, TimeUnit.SECONDS);
            String output = new String(cli.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!finished) {
                cli.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish within 30 s: " + output);
            }
            if (cli.exitValue() != 0) {
                throw new IOException(String.join(" ", command) + " exited with " + cli.exitValue() + ": " + output);
            }
            return output;
        } catch (InterruptedException e) {
            cli.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted running " + command.get(0), e);
        }
    }

    /**
     * Deletes its data files (RDB, AOF directory, cluster state) while it is stopped, so the next start is empty.
     * Its redis.conf and logs stay.
     *
     * @throws IOException if {@code dump.rdb}, {@code nodes.conf}, the {@code appendonlydir} directory or a file in it
     *     exists but cannot be listed or deleted; files deleted before the failure stay deleted
     * @throws IllegalStateException if the server is running
     */
    public void deleteData() throws IOException {
        if (isRunning()) {
            throw new IllegalStateException("redis-server (pid " + process.pid() + ") is running; stop it first");
        }
        for (String name : List.of("dump.rdb", "nodes.conf")) {
            Files.deleteIfExists(directory.resolve(name));
        }
        Path aof = directory.resolve("appendonlydir");
        if (Files.isDirectory(aof)) {
            try (var files = Files.list(aof)) {
                for (Path file : files.toList()) {
                    Files.delete(file);
                }
            }
            Files.delete(aof);
        }
    }

    /** SIGKILL and wait for the process to be gone (at most 10 s); the data stays. No-op when not running. */
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
