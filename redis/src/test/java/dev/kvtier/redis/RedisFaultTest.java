package dev.kvtier.redis;

import org.junit.jupiter.api.Tag;
import dev.kvtier.testing.FaultLogRouting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A {@link RedisRemoteBlockStore} against a real {@code redis-server} (its own process, started, killed and
 * restarted by PID) that is killed mid-write and mid-fetch, restarted empty and with its data, made slow, evicting,
 * written by two stores at once: every call ends within the command timeout (a failure is an exceptional future),
 * the store reconnects by itself, and every value it answers is byte for byte one that was written.
 */
@Tag(FaultLogRouting.TAG) // faults injected on purpose: the library's warnings go to target/test-logs
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisFaultTest {
    /** The command timeout the stores here run with; every call must end within it plus {@link #SLACK}. */
    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(500);
    /** Scheduling on a loaded 2-core machine: a timer fires late, a killed process takes a moment to go. */
    private static final Duration SLACK = Duration.ofMillis(1500);

    @TempDir
    Path directory;

    private LocalRedisServer server;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void stopEverything() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        if (server != null) {
            server.kill();
        }
    }

    private RedisRemoteBlockStore open(String uri, Map<String, String> settings) {
        Map<String, String> all = new LinkedHashMap<>(Map.of("commandTimeoutMs",
                Long.toString(COMMAND_TIMEOUT.toMillis()), "connectTimeoutMs", "1000"));
        all.putAll(settings);
        RedisRemoteBlockStore store = RedisRemoteBlockStore.open(URI.create(uri), all);
        toClose.add(store);
        return store;
    }

    private RedisRemoteBlockStore open() {
        return open(server.uri(), Map.of());
    }

    /** A store with a 10 s command timeout, to load data where the timing is not what the test checks. */
    private RedisRemoteBlockStore loader() {
        return open(server.uri(), Map.of("commandTimeoutMs", "10000"));
    }

    static byte[] randomBytes(int length, long seed) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    private static Map<String, byte[]> values(String prefix, int count, int size) {
        Map<String, byte[]> values = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            values.put(prefix + i, randomBytes(size, prefix.hashCode() * 31L + i));
        }
        return values;
    }

    /** The future's value, or its failure as an ExecutionException; fails the test if it is pending past the bound. */
    private static <T> T withinTheBound(CompletableFuture<T> future, long startNanos) throws ExecutionException {
        Duration bound = COMMAND_TIMEOUT.plus(SLACK);
        try {
            long left = bound.toNanos() - (System.nanoTime() - startNanos);
            return future.get(Math.max(left, 0), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            fail("a call was still pending " + bound.toMillis() + " ms after it was made");
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Retries getAll until it succeeds (the store reconnected) or 15 s passed. */
    private static List<byte[]> getOnceReconnected(RedisRemoteBlockStore store, List<String> keys) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (true) {
            long start = System.nanoTime();
            try {
                return withinTheBound(store.getAll(keys), start);
            } catch (ExecutionException e) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the store did not come back within 15 s: " + e.getCause(), e);
                }
                sleep(50);
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Each answer is null or exactly what was written under its key. */
    private static int assertEachIsNullOrExact(Map<String, byte[]> written, List<String> keys, List<byte[]> got) {
        assertEquals(keys.size(), got.size());
        int present = 0;
        for (int i = 0; i < keys.size(); i++) {
            if (got.get(i) != null) {
                assertArrayEquals(written.get(keys.get(i)), got.get(i), keys.get(i));
                present++;
            }
        }
        return present;
    }

    @Test
    void killedMidFetchEndsTheCallWithinTheTimeoutAndARestartedEmptyServerAnswersAbsent() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "");
        RedisRemoteBlockStore store = open();
        Map<String, byte[]> written = values("kvtier:fetch:", 16, 1 << 20);
        loader().putAll(written).get(20, TimeUnit.SECONDS);
        List<String> keys = List.copyOf(written.keySet());

        List<CompletableFuture<List<byte[]>>> fetches = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < 4; i++) {
            fetches.add(store.getAll(keys));
        }
        server.kill();
        int failed = 0;
        for (CompletableFuture<List<byte[]>> fetch : fetches) {
            try {
                assertEachIsNullOrExact(written, keys, withinTheBound(fetch, start));
            } catch (ExecutionException e) {
                failed++;
            }
        }
        // While it is down every call fails at once, with a message naming the store.
        long downStart = System.nanoTime();
        ExecutionException down = assertThrows(ExecutionException.class,
                () -> withinTheBound(store.getAll(keys), downStart));
        assertTrue(down.getCause().getMessage().contains(server.uri()), down.getCause().getMessage());
        assertTrue(failed + 1 >= 1);

        server.deleteData();
        server.start();
        List<byte[]> after = getOnceReconnected(store, keys);
        assertEquals(0, assertEachIsNullOrExact(written, keys, after), "a server restarted empty answered values");
    }

    @Test
    void killedMidWriteEndsTheCallWithinTheTimeoutAndWhatARestartedServerKeptIsExact() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "appendonly yes\nappendfsync everysec");
        RedisRemoteBlockStore store = open();
        Map<String, byte[]> written = values("kvtier:write:", 32, 128 << 10);
        long start = System.nanoTime();
        CompletableFuture<Void> write = store.putAll(written);
        sleep(5);
        server.kill();
        try {
            withinTheBound(write, start);
        } catch (ExecutionException expected) {
            // killed before every SET was acknowledged
        }
        server.start(); // with its append-only file: whatever it acknowledged or logged before the kill
        List<String> keys = List.copyOf(written.keySet());
        assertEachIsNullOrExact(written, keys, getOnceReconnected(store, keys));

        // and writes work again
        RedisRemoteBlockStore loader = loader();
        loader.putAll(written).get(20, TimeUnit.SECONDS);
        assertEquals(keys.size(), assertEachIsNullOrExact(written, keys, loader.getAll(keys).get(20,
                TimeUnit.SECONDS)));
    }

    @Test
    void aServerRestartedWithItsDataServesTheSameBytes() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "appendonly yes\nappendfsync always");
        RedisRemoteBlockStore store = open();
        Map<String, byte[]> written = values("kvtier:kept:", 8, 100_000);
        store.putAll(written).get(10, TimeUnit.SECONDS);
        server.kill();
        server.start();
        List<String> keys = List.copyOf(written.keySet());
        assertEquals(keys.size(), assertEachIsNullOrExact(written, keys, getOnceReconnected(store, keys)));
    }

    @Test
    void aServerDownWhenTheStoreOpensIsConnectedToOnceItIsUp() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "");
        server.kill();
        open().close(); // a first store loads Lettuce's and Netty's classes, which is not what is timed here
        long opening = System.nanoTime();
        RedisRemoteBlockStore store = open();
        long openMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - opening);
        assertTrue(openMs < 1000 + SLACK.toMillis(), "open took " + openMs + " ms with connectTimeoutMs 1000");
        long start = System.nanoTime();
        assertThrows(ExecutionException.class, () -> withinTheBound(store.getAll(List.of("kvtier:a")), start));
        server.start();
        assertEquals(1, getOnceReconnected(store, List.of("kvtier:a")).size());
    }

    @Test
    void aSlowServerFailsCallsAtTheTimeoutAndServesAgainAfterwards() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "");
        RedisRemoteBlockStore store = open();
        Map<String, byte[]> written = values("kvtier:slow:", 4, 10_000);
        store.putAll(written).get(10, TimeUnit.SECONDS);
        List<String> keys = List.copyOf(written.keySet());

        Thread sleeper = new Thread(() -> {
            try {
                server.cli("DEBUG", "SLEEP", "2");
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        sleeper.start();
        sleep(200); // DEBUG SLEEP holds the server's only command thread from now on
        long start = System.nanoTime();
        ExecutionException slow = assertThrows(ExecutionException.class,
                () -> withinTheBound(store.getAll(keys), start));
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(tookMs >= COMMAND_TIMEOUT.toMillis() - 50, "failed after " + tookMs + " ms, before the timeout");
        assertTrue(String.valueOf(slow.getCause().getCause()).contains("Timeout"), slow.getCause().toString());
        sleeper.join();
        assertEquals(keys.size(), assertEachIsNullOrExact(written, keys, getOnceReconnected(store, keys)));
    }

    @Test
    void anEvictingServerAnswersEvictedKeysAbsentAndTheRestExact() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "maxmemory 8mb\nmaxmemory-policy allkeys-lru");
        RedisRemoteBlockStore store = loader();
        Map<String, byte[]> written = values("kvtier:lru:", 64, 256 << 10); // 16 MiB into 8 MiB
        for (Map.Entry<String, byte[]> entry : written.entrySet()) {
            store.putAll(Map.of(entry.getKey(), entry.getValue())).get(10, TimeUnit.SECONDS);
        }
        List<String> keys = List.copyOf(written.keySet());
        int present = assertEachIsNullOrExact(written, keys, store.getAll(keys).get(10, TimeUnit.SECONDS));
        assertTrue(present > 0 && present < keys.size(), present + " of " + keys.size() + " present");
        boolean[] held = store.containsAll(keys).get(10, TimeUnit.SECONDS);
        int heldCount = 0;
        for (boolean h : held) {
            heldCount += h ? 1 : 0;
        }
        assertTrue(heldCount <= present + 1 && heldCount > 0, heldCount + " held, " + present + " fetched");
    }

    @Test
    void twoStoresWritingTheSameKeysAtOnceLeaveOneWholeValueEach() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "");
        RedisRemoteBlockStore first = loader();
        RedisRemoteBlockStore second = loader();
        List<String> keys = new ArrayList<>();
        Map<String, byte[]> fromFirst = new LinkedHashMap<>();
        Map<String, byte[]> fromSecond = new LinkedHashMap<>();
        for (int i = 0; i < 16; i++) {
            String key = "kvtier:same:" + i;
            keys.add(key);
            fromFirst.put(key, randomBytes(300_000, i));
            fromSecond.put(key, randomBytes(300_000, 1000 + i));
        }
        for (int round = 0; round < 5; round++) {
            CompletableFuture<Void> a = first.putAll(fromFirst);
            CompletableFuture<Void> b = second.putAll(fromSecond);
            a.get(10, TimeUnit.SECONDS);
            b.get(10, TimeUnit.SECONDS);
            for (RedisRemoteBlockStore reader : List.of(first, second)) {
                List<byte[]> got = reader.getAll(keys).get(10, TimeUnit.SECONDS);
                for (int i = 0; i < keys.size(); i++) {
                    byte[] value = got.get(i);
                    assertTrue(Arrays.equals(value, fromFirst.get(keys.get(i)))
                            || Arrays.equals(value, fromSecond.get(keys.get(i))), keys.get(i) + " is neither value");
                }
            }
        }
    }

    @Test
    void aValueAboveMaxValueBytesIsAnsweredAbsentCountedAndNeverFetchedWhole() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "");
        RedisRemoteBlockStore writer = loader();
        RedisRemoteBlockStore reader = open(server.uri(), Map.of("maxValueBytes", "4096", "commandTimeoutMs",
                "10000"));
        writer.putAll(Map.of("kvtier:huge", new byte[8 << 20], "kvtier:fits", randomBytes(4096, 1),
                "kvtier:empty", new byte[0])).get(10, TimeUnit.SECONDS);
        long sentBefore = netOutputBytes();
        List<byte[]> got = reader.getAll(List.of("kvtier:huge", "kvtier:fits", "kvtier:empty", "kvtier:none"))
                .get(10, TimeUnit.SECONDS);
        long sent = netOutputBytes() - sentBefore;
        assertNull(got.get(0));
        assertArrayEquals(randomBytes(4096, 1), got.get(1));
        assertArrayEquals(new byte[0], got.get(2));
        assertNull(got.get(3));
        assertEquals(1, reader.oversizedValues());
        // Redis sent at most the marker and maxValueBytes + 1 bytes of the 8 MiB value (plus the other answers and the
        // INFO reply).
        assertTrue(sent < 64 << 10, "Redis sent " + sent + " bytes for the fetch of an 8 MiB value");
        IllegalArgumentException tooBig = assertThrows(IllegalArgumentException.class,
                () -> reader.putAll(Map.of("kvtier:x", new byte[4097])));
        assertTrue(tooBig.getMessage().contains("4097") && tooBig.getMessage().contains("4096"),
                tooBig.getMessage());
    }

    @Test
    void eachValueIsHeldAfterAMarkerByteAndAValueWithoutItIsAnsweredAbsent() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "");
        RedisRemoteBlockStore store = open(server.uri(), Map.of("maxValueBytes", "4096"));
        store.putAll(Map.of("kvtier:full", randomBytes(1000, 2), "kvtier:empty", new byte[0]))
                .get(10, TimeUnit.SECONDS);
        assertEquals("1001", server.cli("STRLEN", "kvtier:full").trim());
        assertEquals("1", server.cli("STRLEN", "kvtier:empty").trim());
        // Written by something else: no marker, or an empty string; and marked values at and above the bound.
        assertEquals("OK", server.cli("SET", "kvtier:foreign", "abc").trim());
        assertEquals("OK", server.cli("SET", "kvtier:blank", "").trim());
        assertEquals("OK", server.cli("SET", "kvtier:at-bound", "k" + "x".repeat(4096)).trim());
        assertEquals("OK", server.cli("SET", "kvtier:above-bound", "k" + "x".repeat(4097)).trim());
        List<byte[]> got = store.getAll(List.of("kvtier:full", "kvtier:empty", "kvtier:foreign", "kvtier:blank",
                "kvtier:at-bound", "kvtier:above-bound", "kvtier:none")).get(10, TimeUnit.SECONDS);
        assertArrayEquals(randomBytes(1000, 2), got.get(0));
        assertArrayEquals(new byte[0], got.get(1));
        assertNull(got.get(2));
        assertNull(got.get(3));
        assertArrayEquals("x".repeat(4096).getBytes(java.nio.charset.StandardCharsets.US_ASCII), got.get(4));
        assertNull(got.get(5));
        assertNull(got.get(6));
        assertEquals(1, store.oversizedValues());
    }

    /** Redis's count of bytes it sent to clients ({@code INFO stats}). */
    private long netOutputBytes() throws IOException {
        for (String line : server.cli("INFO", "stats").split("\\R")) {
            if (line.startsWith("total_net_output_bytes:")) {
                return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        throw new AssertionError("no total_net_output_bytes in INFO stats");
    }

    @Test
    void aWrongPasswordIsRefusedAtOpenNamingTheUserNotThePassword() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "");
        assertEquals("OK", server.cli("ACL", "SETUSER", "kvtier", "on", ">right-password", "~kvtier:*", "+@all"));
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> open(server.uri(),
                Map.of("user", "kvtier", "password", "wrong-password")));
        assertTrue(refused.getMessage().contains("kvtier") && refused.getMessage().contains("WRONGPASS"),
                refused.getMessage());
        assertFalse(refused.getMessage().contains("wrong-password"), refused.getMessage());
        assertNoStoreThreadLeft();
    }

    @Test
    void theLeastPrivilegeAclOfTheReadmeIsEnough() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "");
        // Exactly the ACL the README's "Sharing KV across hosts" shows.
        assertEquals("OK", server.cli("ACL", "SETUSER", "kvtier", "reset", "on", ">s3cret", "~kvtier:*",
                "resetchannels", "-@all", "+exists", "+getrange", "+set"));
        RedisRemoteBlockStore store = open("redis://kvtier:s3cret@127.0.0.1:" + server.port(), Map.of());
        Map<String, byte[]> written = values("kvtier:acl:", 4, 1000);
        store.putAll(written).get(10, TimeUnit.SECONDS);
        List<String> keys = List.copyOf(written.keySet());
        assertEquals(4, assertEachIsNullOrExact(written, keys, store.getAll(keys).get(10, TimeUnit.SECONDS)));
        assertArrayEquals(new boolean[] {true, true, true, true}, store.containsAll(keys).get(10, TimeUnit.SECONDS));
        // outside its key pattern it is refused (a failed future, never a wrong value)
        ExecutionException outside = assertThrows(ExecutionException.class,
                () -> store.getAll(List.of("other:key")).get(10, TimeUnit.SECONDS));
        assertTrue(outside.getCause().getMessage().contains("NOPERM"), outside.getCause().getMessage());
    }

    @Test
    void closeEndsEveryThreadOfTheStore() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "");
        RedisRemoteBlockStore store = open();
        store.putAll(values("kvtier:close:", 4, 1000)).get(10, TimeUnit.SECONDS);
        assertTrue(storeThreads() > 0);
        store.close();
        assertNoStoreThreadLeft();
    }

    private static long storeThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.isAlive() && thread.getName().startsWith("kvtier-redis-")).count();
    }

    private static void assertNoStoreThreadLeft() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (storeThreads() > 0 && System.nanoTime() < deadline) {
            sleep(20);
        }
        assertEquals(0, storeThreads(), "threads named kvtier-redis-* still alive after close");
    }
}
