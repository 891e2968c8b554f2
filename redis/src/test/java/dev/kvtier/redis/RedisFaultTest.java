package dev.kvtier.redis;

import org.junit.jupiter.api.Tag;
import dev.kvtier.testing.FaultLogRouting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.kvtier.Backend;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.RemoteStoreConfig;
import dev.kvtier.RemoteStoreStats;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.store.Tier;
import dev.kvtier.tiering.RemoteBlockFormat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
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
 * written by two stores at once and by two JVMs' caches at once: every call ends within the command timeout (a
 * failure is an exceptional future), the store reconnects by itself, and every value it answers is byte for byte one
 * that was written.
 */
@Tag(FaultLogRouting.TAG) // faults injected on purpose: the library's warnings go to target/test-logs
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisFaultTest {
    private static final System.Logger LOG = System.getLogger(RedisFaultTest.class.getName());
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

    /**
     * Two JVMs writing the same block at once: both values valid, either may be served. This JVM and a
     * {@link BlockWriterProcess} store the same chain (namespace, key, hashes) with different bytes through their
     * caches' write-through, starting at the same wall-clock instant, round after round. After each round every value
     * Redis holds passes the format's checks and is one writer's whole value, and a third cache restores the chain and
     * serves, block by block, exactly the bytes Redis holds: never a mix, never a wrong byte, no rejection, nothing
     * dropped.
     */
    @Test
    void twoJvmsWritingTheSameBlocksAtOnceLeaveOneValidValueEachAndAReaderServesExactlyIt() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "");
        int rounds = 24;
        List<String> command = new ArrayList<>(List.of(javaCommand(), "--enable-native-access=ALL-UNNAMED",
                "-Xmx256m", "-cp", System.getProperty("java.class.path")));
        if (System.getProperty("kvtier.native.dir") != null) {
            command.add("-Dkvtier.native.dir=" + System.getProperty("kvtier.native.dir"));
        }
        command.addAll(List.of(BlockWriterProcess.class.getName(), server.uri(),
                directory.resolve("writer-1").toString(), "1"));
        Process child = new ProcessBuilder(command).start();
        Thread errors = pumpToLog(child);
        try {
            BlockingQueue<String> fromChild = lines(child);
            java.io.PrintStream toChild = new java.io.PrintStream(child.getOutputStream(), true,
                    java.nio.charset.StandardCharsets.UTF_8);
            KvTierCache writer = BlockWriterProcess.openWriter(server.uri(), directory.resolve("writer-0"));
            toClose.add(writer);
            KvTierCache reader = openReader();
            RedisRemoteBlockStore raw = loader();
            RemoteBlockFormat format = new RemoteBlockFormat(BlockWriterProcess.NAMESPACE, BlockWriterProcess.KEY,
                    new RemoteBlockFormat.Layout(BlockWriterProcess.BLOCK_BYTES,
                            BlockWriterProcess.LAYOUT.tokensPerBlock(), 0, 0), 64L << 20);
            awaitLine(child, fromChild, "ready");

            int[] wins = new int[2];
            int mixedRounds = 0;
            int overlappingRounds = 0;
            String[] childDone = null;
            for (int round = 0; round < rounds; round++) {
                long start = BlockWriterProcess.epochNanos() + TimeUnit.MILLISECONDS.toNanos(50);
                toChild.println("go " + round + " " + start);
                long[] ours = BlockWriterProcess.writeRound(writer, round, 0, start);
                childDone = awaitLine(child, fromChild, "done " + round + " ").split(" ");
                long theirStart = Long.parseLong(childDone[5]);
                long theirEnd = Long.parseLong(childDone[6]);
                overlappingRounds += Math.max(ours[0], theirStart) < Math.min(ours[1], theirEnd) ? 1 : 0;

                List<BlockHash> hashes = BlockWriterProcess.chain(round);
                int[] winner = heldValues(raw, format, hashes);
                PrefixBlockCache blocks = reader.prefixBlocks(BlockWriterProcess.LAYOUT);
                assertEquals(hashes.size(), blocks.lookupPrefix(hashes).remoteBlocks(), "round " + round);
                try (PrefixPin pin = blocks.ensurePrefixResident(hashes, Tier.GPU)) {
                    assertEquals(hashes.size(), pin.size(), "round " + round);
                    for (int i = 0; i < hashes.size(); i++) {
                        byte[] served = new byte[BlockWriterProcess.BLOCK_BYTES];
                        blocks.readBlock(hashes.get(i), MemorySegment.ofArray(served));
                        assertArrayEquals(BlockWriterProcess.content(hashes.get(i), winner[i]), served,
                                "round " + round + ", block " + i + ": not the bytes Redis holds");
                    }
                }
                int fromFirst = 0;
                for (int w : winner) {
                    wins[w]++;
                    fromFirst += w == 0 ? 1 : 0;
                }
                mixedRounds += fromFirst > 0 && fromFirst < winner.length ? 1 : 0;
            }
            toChild.println("quit");
            assertTrue(child.waitFor(20, TimeUnit.SECONDS), "the writer process did not exit after quit");
            assertEquals(0, child.exitValue(), "the writer process failed; its log is in this test's log");

            long blocks = (long) rounds * BlockWriterProcess.BLOCKS;
            String tally = wins[0] + " blocks served from this JVM's value, " + wins[1] + " from the other's; "
                    + mixedRounds + " of " + rounds + " rounds mixed; write windows overlapped in "
                    + overlappingRounds + " rounds";
            LOG.log(System.Logger.Level.INFO, "two writers: " + tally);
            RemoteStoreStats ourWrites = writer.stats().remote();
            assertEquals(blocks, ourWrites.blocksWritten(), ourWrites.toString());
            assertEquals(0, ourWrites.writesDropped() + ourWrites.failures(), ourWrites.toString());
            assertEquals(List.of(Long.toString(blocks), "0", "0"), List.of(childDone).subList(2, 5),
                    "the other writer's written, dropped, failures");
            RemoteStoreStats reads = reader.stats().remote();
            assertEquals(blocks, reads.blocksFetched(), reads.toString());
            assertEquals(0, reads.rejections() + reads.failures(), reads.toString());
            // Either may be served: both writers' values were, or the writes did not really race.
            assertTrue(wins[0] > 0 && wins[1] > 0, tally);
            assertTrue(overlappingRounds >= rounds / 2, tally);
        } finally {
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
            errors.join(TimeUnit.SECONDS.toMillis(5));
        }
    }

    private KvTierCache openReader() {
        RemoteStoreConfig remote = RemoteStoreConfig.builder().store(URI.create(server.uri()))
                .storeSetting("commandTimeoutMs", "5000").key(BlockWriterProcess.KEY)
                .namespace(BlockWriterProcess.NAMESPACE).writeThrough(RemoteStoreConfig.WriteThrough.NEVER).build();
        KvTierCache cache = KvTierCache.open(KvTierConfig.builder().backend(Backend.HOST)
                .gpuBudgetBytes(4L * BlockWriterProcess.BLOCKS * BlockWriterProcess.BLOCK_BYTES)
                .cpuBudgetBytes(64L * BlockWriterProcess.BLOCKS * BlockWriterProcess.BLOCK_BYTES)
                .pageSizeBytes(BlockWriterProcess.BLOCK_BYTES).diskExtentBytes(16L * BlockWriterProcess.BLOCK_BYTES)
                .diskDirectory(directory.resolve("reader")).transferTimeout(Duration.ofSeconds(5)).remote(remote)
                .build());
        toClose.add(cache);
        return cache;
    }

    /**
     * Checks the value Redis holds for each block of the chain as the cache would ({@link RemoteBlockFormat#open}:
     * header, namespace, block and parent, layout, CRC32C, HMAC) and says whose bytes it carries.
     *
     * @return per block, the writer (0: this JVM, 1: the other) whose whole value Redis holds
     */
    private static int[] heldValues(RedisRemoteBlockStore raw, RemoteBlockFormat format, List<BlockHash> hashes)
            throws Exception {
        List<String> keys = new ArrayList<>();
        for (BlockHash hash : hashes) {
            keys.add(format.keyOf(hash.high(), hash.low()));
        }
        List<byte[]> values = raw.getAll(keys).get(10, TimeUnit.SECONDS);
        int[] writer = new int[hashes.size()];
        BlockHash parent = BlockHash.ROOT;
        for (int i = 0; i < hashes.size(); i++) {
            BlockHash hash = hashes.get(i);
            assertTrue(values.get(i) != null, "block " + i + " is not in Redis");
            byte[] payload = new byte[BlockWriterProcess.BLOCK_BYTES];
            assertNull(format.open(java.nio.ByteBuffer.wrap(values.get(i)), hash.high(), hash.low(), parent.high(),
                    parent.low(), payload, 0), "block " + i + "'s value fails its checks");
            if (Arrays.equals(payload, BlockWriterProcess.content(hash, 0))) {
                writer[i] = 0;
            } else if (Arrays.equals(payload, BlockWriterProcess.content(hash, 1))) {
                writer[i] = 1;
            } else {
                fail("block " + i + "'s value passes its checks but is neither writer's bytes");
            }
            parent = hash;
        }
        return writer;
    }

    /** The java launcher running this test. */
    private static String javaCommand() {
        return ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    /** The process's standard output, line by line, as it comes. */
    private static BlockingQueue<String> lines(Process process) {
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    java.nio.charset.StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    lines.add(line);
                }
            } catch (IOException ended) {
                // the process is gone
            }
        }, "writer-process-stdout");
        reader.setDaemon(true);
        reader.start();
        return lines;
    }

    /** Copies the process's standard error into this test's log, line by line, until it ends. */
    private static Thread pumpToLog(Process process) {
        Thread pump = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getErrorStream(),
                    java.nio.charset.StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    LOG.log(System.Logger.Level.INFO, "writer process (pid " + process.pid() + "): " + line);
                }
            } catch (IOException ended) {
                // the process is gone
            }
        }, "writer-process-stderr");
        pump.setDaemon(true);
        pump.start();
        return pump;
    }

    /** The next line starting with {@code prefix} (others are skipped), within 20 s and while the process lives. */
    private static String awaitLine(Process process, BlockingQueue<String> lines, String prefix)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            String line = lines.poll(50, TimeUnit.MILLISECONDS);
            if (line != null && line.startsWith(prefix)) {
                return line;
            }
            if (line == null && !process.isAlive()) {
                fail("the writer process exited with " + process.exitValue() + " before printing '" + prefix
                        + "'; its log is in this test's log");
            }
        }
        fail("the writer process printed no '" + prefix + "' within 20 s");
        throw new AssertionError();
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
