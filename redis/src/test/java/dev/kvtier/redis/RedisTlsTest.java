package dev.kvtier.redis;

import org.junit.jupiter.api.Tag;
import dev.kvtier.testing.FaultLogRouting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@code rediss://} against a {@code redis-server} with a TLS port and a certificate for 127.0.0.1 signed by a CA the
 * test makes with {@code openssl}: with {@code tlsCaFile} naming that CA the store round-trips values (full
 * verification: chain and host); without it the JDK's trust store refuses the server and every call fails.
 */
@Tag(FaultLogRouting.TAG) // faults injected on purpose: the library's warnings go to target/test-logs
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisTlsTest {
    @TempDir
    Path directory;

    private LocalRedisServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.kill();
        }
    }

    private static void openssl(Path directory, String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (process.waitFor() != 0) {
            throw new IOException("openssl " + String.join(" ", args) + " failed: " + output);
        }
    }

    @Test
    void aStoreTrustingTheServersCaRoundTripsAndOneThatDoesNotFails() throws Exception {
        Path tls = Files.createDirectories(directory.resolve("tls"));
        openssl(tls, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days",
                "2", "-subj", "/CN=kvtier test CA");
        openssl(tls, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj",
                "/CN=127.0.0.1");
        Files.writeString(tls.resolve("san.ext"), "subjectAltName=IP:127.0.0.1\n");
        openssl(tls, "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", "server.pem", "-days", "2", "-extfile", "san.ext");
        int tlsPort = 0;
        for (int attempt = 1; server == null; attempt++) {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                tlsPort = socket.getLocalPort();
            }
            try {
                server = LocalRedisServer.start(directory.resolve("redis"), String.join("\n",
                        "tls-port " + tlsPort,
                        "tls-cert-file " + tls.resolve("server.pem"),
                        "tls-key-file " + tls.resolve("server.key"),
                        "tls-ca-cert-file " + tls.resolve("ca.pem"),
                        "tls-auth-clients no"));
            } catch (LocalRedisServer.PortTakenException e) {
                // The TLS port picked here was taken before the server bound it (the server retries its own port).
                if (attempt == 3) {
                    throw e;
                }
            }
        }
        URI uri = URI.create("rediss://127.0.0.1:" + tlsPort);

        try (RedisRemoteBlockStore store = RedisRemoteBlockStore.open(uri, Map.of("tlsCaFile",
                tls.resolve("ca.pem").toString(), "commandTimeoutMs", "5000"))) {
            byte[] value = RedisFaultTest.randomBytes(100_000, 3);
            store.putAll(Map.of("kvtier:tls", value)).get(10, TimeUnit.SECONDS);
            assertArrayEquals(value, store.getAll(List.of("kvtier:tls")).get(10, TimeUnit.SECONDS).get(0));
        }
        try (RedisRemoteBlockStore untrusting = RedisRemoteBlockStore.open(uri, Map.of("connectTimeoutMs", "1000"))) {
            assertThrows(ExecutionException.class,
                    () -> untrusting.getAll(List.of("kvtier:tls")).get(10, TimeUnit.SECONDS));
        }
    }
}
