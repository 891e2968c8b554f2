package dev.kvtier.redis;

import org.junit.jupiter.api.Tag;
import dev.kvtier.testing.FaultLogRouting;
import dev.kvtier.Backend;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.RemoteRejection;
import dev.kvtier.RemoteStoreConfig;
import dev.kvtier.RemoteStoreStats;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockHasher;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixLookup;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.prefix.PrefixRestore;
import dev.kvtier.remote.RemoteBlockStores;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Prefix caches sharing blocks through a real {@code redis-server} (started by the test), each opening its store by
 * URI: a second cache fetches what the first stored, byte for byte; Redis killed, restarted empty or evicting
 * (maxmemory, allkeys-lru) never makes a caller wait past {@code transferTimeout}, local tiers keep working, a chain
 * cut in the middle (evicted, or a value tampered with after the look-up) is the shorter prefix before the cut, and the
 * counters say what happened.
 */
@Tag(FaultLogRouting.TAG) // faults injected on purpose: the library's warnings go to target/test-logs
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisPrefixCacheTest {
    static final int PAGE = 4096;
    static final BlockLayout LAYOUT = BlockLayout.of(16, PAGE);
    static final byte[] KEY = "a deployment key of 32 bytes....".getBytes(StandardCharsets.UTF_8);
    private static final Duration TRANSFER_TIMEOUT = Duration.ofMillis(500);
    /** A loaded 2-core machine schedules late; the bound checked is the timeout plus this. */
    private static final long SLACK_MS = 700;

    @TempDir
    Path directory;

    private LocalRedisServer server;
    private final List<AutoCloseable> opened = new ArrayList<>();
    private int caches;

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
        if (server != null) {
            server.kill();
        }
    }

    private KvTierCache open() {
        RemoteStoreConfig remote = RemoteStoreConfig.builder().store(URI.create(server.uri()))
                .storeSetting("commandTimeoutMs", "400").key(KEY).namespace("redis-test").build();
        KvTierConfig config = KvTierConfig.builder().backend(Backend.HOST).gpuBudgetBytes(64L * PAGE)
                .cpuBudgetBytes(64L * PAGE).pageSizeBytes(PAGE).diskExtentBytes(16L * PAGE)
                .diskDirectory(directory.resolve("cache-" + caches++)).transferTimeout(TRANSFER_TIMEOUT)
                .remote(remote).build();
        KvTierCache cache = KvTierCache.open(config);
        opened.add(cache);
        return cache;
    }

    static List<BlockHash> chain(int seed, int blocks) {
        int[] tokens = new int[blocks * LAYOUT.tokensPerBlock()];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = seed * 100_003 + i;
        }
        return new BlockHasher().chain(BlockHasher.namespaceRoot("redis-test"), tokens, LAYOUT.tokensPerBlock());
    }

    static byte[] content(BlockHash hash) {
        byte[] bytes = new byte[PAGE];
        new Random(hash.high() ^ hash.low()).nextBytes(bytes);
        return bytes;
    }

    static MemorySegment contents(List<BlockHash> hashes) {
        byte[] all = new byte[hashes.size() * PAGE];
        for (int i = 0; i < hashes.size(); i++) {
            System.arraycopy(content(hashes.get(i)), 0, all, i * PAGE, PAGE);
        }
        return MemorySegment.ofArray(all);
    }

    static void assertBytes(PrefixBlockCache blocks, List<BlockHash> hashes) {
        for (BlockHash hash : hashes) {
            byte[] out = new byte[PAGE];
            blocks.readBlock(hash, MemorySegment.ofArray(out));
            assertArrayEquals(content(hash), out, "block " + hash);
        }
    }

    static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "not within 20 s: " + what);
            Thread.sleep(10);
        }
    }

    private static long millisSince(long start) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    @Test
    void aSecondCacheFetchesEveryBlockTheFirstStoredByteForByte() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "");
        KvTierCache rankA = open();
        KvTierCache rankB = open();
        List<BlockHash> hashes = chain(1, 32);
        rankA.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, hashes, contents(hashes));
        await(() -> rankA.stats().remote().blocksWritten() >= 32, "32 blocks written through");

        PrefixBlockCache b = rankB.prefixBlocks(LAYOUT);
        PrefixLookup lookup = b.lookupPrefix(hashes);
        assertEquals(32, lookup.cachedBlocks());
        assertEquals(32, lookup.remoteBlocks());
        try (PrefixPin pin = b.ensurePrefixResident(hashes, Tier.GPU)) {
            assertEquals(32, pin.size());
        }
        assertBytes(b, hashes);
        RemoteStoreStats stats = rankB.stats().remote();
        assertEquals(32, stats.blocksFetched());
        assertEquals(0, stats.rejections());
        assertEquals(0, stats.failures());
    }

    @Test
    void redisKilledAndRestartedEmptyNeverHoldsACallerPastTheTimeoutAndLocalTiersKeepWorking() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "");
        KvTierCache rankA = open();
        KvTierCache rankB = open();
        List<BlockHash> hashes = chain(2, 16);
        PrefixBlockCache a = rankA.prefixBlocks(LAYOUT);
        a.storeBlocks(BlockHash.ROOT, hashes.subList(0, 8), contents(hashes.subList(0, 8)));
        await(() -> rankA.stats().remote().blocksWritten() >= 8, "8 blocks written through");
        PrefixBlockCache b = rankB.prefixBlocks(LAYOUT);
        b.storeBlocks(BlockHash.ROOT, hashes.subList(0, 2), contents(hashes.subList(0, 2)), Tier.CPU);

        server.kill();
        for (int round = 0; round < 3; round++) {
            long start = System.nanoTime();
            PrefixLookup lookup = b.lookupPrefix(hashes);
            assertTrue(millisSince(start) < TRANSFER_TIMEOUT.toMillis() + SLACK_MS, "a look-up took "
                    + millisSince(start) + " ms with Redis down");
            assertEquals(2, lookup.localBlocks());
            start = System.nanoTime();
            try (PrefixPin pin = b.ensurePrefixResident(hashes, Tier.GPU)) {
                assertTrue(pin.size() >= 2);
            }
            assertTrue(millisSince(start) < TRANSFER_TIMEOUT.toMillis() + SLACK_MS, "a restore took "
                    + millisSince(start) + " ms with Redis down");
        }
        // Local tiers keep working: a store and a read while the remote store is down.
        a.storeBlocks(hashes.get(7), hashes.subList(8, 10), contents(hashes.subList(8, 10)));
        assertBytes(a, hashes.subList(0, 10));
        assertBytes(b, hashes.subList(0, 2));
        RemoteStoreStats down = rankB.stats().remote();
        assertTrue(down.failures() > 0 && down.down(), down.toString());

        server.deleteData();
        server.start();
        await(() -> {
            b.lookupPrefix(hashes);
            return !rankB.stats().remote().down();
        }, "Redis marked up again after its restart");
        PrefixLookup afterRestart = b.lookupPrefix(hashes);
        assertEquals(0, afterRestart.remoteBlocks(), "Redis restarted empty");
        assertTrue(afterRestart.localBlocks() >= 2);
        assertEquals(0, rankB.stats().remote().rejections());
    }

    @Test
    void anEvictingRedisCutsAChainAndTheSecondCacheGetsThePrefixBeforeTheCut() throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "maxmemory 3mb\nmaxmemory-policy allkeys-lru"
                + "\nmaxmemory-samples 3");
        KvTierCache rankA = open();
        List<BlockHash> hashes = chain(3, 24);
        rankA.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, hashes, contents(hashes));
        await(() -> rankA.stats().remote().blocksWritten() >= 24, "24 blocks written through");
        // Other values fill Redis past maxmemory: it evicts, approximately least recently used, some of the blocks.
        try (RedisRemoteBlockStore filler = RedisRemoteBlockStore.open(URI.create(server.uri()), Map.of())) {
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                keys.add(RemoteBlockStores.blockKey(RemoteBlockStores.blockKeyPrefix("redis-test"),
                        hashes.get(i).high(), hashes.get(i).low()));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            int round = 0;
            while (allHeld(filler.containsAll(keys).get(5, TimeUnit.SECONDS))) {
                assertTrue(System.nanoTime() < deadline, "Redis evicted none of the blocks");
                filler.putAll(Map.of("kvtier:filler:" + round++, new byte[64 << 10])).get(5, TimeUnit.SECONDS);
            }
            boolean[] held = filler.containsAll(keys).get(5, TimeUnit.SECONDS);
            int firstMissing = 0;
            while (firstMissing < held.length && held[firstMissing]) {
                firstMissing++;
            }

            KvTierCache rankB = open();
            PrefixBlockCache b = rankB.prefixBlocks(LAYOUT);
            PrefixLookup lookup = b.lookupPrefix(hashes);
            // Eviction continues while filler writes land; the prefix is at most what was held a moment ago.
            assertTrue(lookup.cachedBlocks() <= firstMissing, lookup.cachedBlocks() + " cached, first missing "
                    + firstMissing);
            try (PrefixPin pin = b.ensurePrefixResident(hashes, Tier.GPU)) {
                assertTrue(pin.size() <= firstMissing);
                assertBytes(b, hashes.subList(0, pin.size()));
            }
            assertEquals(0, rankB.stats().remote().rejections());
        }
    }

    /** Starts Redis and has a first cache write a 6-block chain of {@code layout} through to it. */
    private List<BlockHash> sixBlocksInRedis(BlockLayout layout, int seed) throws Exception {
        server = LocalRedisServer.start(directory.resolve("redis"), "");
        KvTierCache rankA = open();
        List<BlockHash> hashes = chain(seed, 6);
        rankA.prefixBlocks(layout).storeBlocks(BlockHash.ROOT, hashes, contents(hashes));
        await(() -> rankA.stats().remote().blocksWritten() >= 6, "6 blocks written through");
        return hashes;
    }

    /** Flips one byte of block {@code hash}'s value in Redis, {@code fromEnd} bytes before its end. */
    private void tamper(BlockHash hash, int fromEnd) throws Exception {
        String key = RemoteBlockStores.blockKey(RemoteBlockStores.blockKeyPrefix("redis-test"), hash.high(),
                hash.low());
        try (RedisRemoteBlockStore raw = RedisRemoteBlockStore.open(URI.create(server.uri()), Map.of())) {
            byte[] value = raw.getAll(List.of(key)).get(5, TimeUnit.SECONDS).get(0);
            value[value.length - fromEnd] ^= 0x10;
            raw.putAll(Map.of(key, value)).get(5, TimeUnit.SECONDS);
        }
    }

    /**
     * A look-up trusts {@code EXISTS}: a value tampered with after it said the chain was there fails its checks when
     * the restore fetches it, and the restore is the shorter prefix before it (what {@code PrefixLookup} and
     * {@code ensurePrefixResident} promise): the two intact blocks, byte for byte, no block of the chain after them,
     * the rejection counted by its cause; and the same again at the next restore, the value still there.
     */
    @Test
    void aValueTamperedBetweenLookupAndRestoreEndsTheRestoredPrefixBeforeIt() throws Exception {
        List<BlockHash> hashes = sixBlocksInRedis(LAYOUT, 4);
        KvTierCache rankB = open();
        PrefixBlockCache b = rankB.prefixBlocks(LAYOUT);
        PrefixLookup lookup = b.lookupPrefix(hashes);
        assertEquals(0, lookup.localBlocks());
        assertEquals(6, lookup.remoteBlocks());
        tamper(hashes.get(2), 40); // a payload byte: the CRC32C no longer matches
        try (PrefixPin pin = b.ensurePrefixResident(hashes, Tier.GPU)) {
            assertEquals(2, pin.size());
        }
        assertBytes(b, hashes.subList(0, 2));
        assertEquals(2, b.lookupPrefix(hashes).localBlocks(), "no block after the tampered one is held");
        RemoteStoreStats stats = rankB.stats().remote();
        assertEquals(2, stats.blocksFetched());
        assertEquals(1, stats.rejections(RemoteRejection.CHECKSUM), stats.toString());
        assertEquals(1, stats.rejections(), stats.toString());
        assertEquals(0, stats.failures(), stats.toString());

        // Still in Redis, the value is asked for again (EXISTS says it is there) and refused again.
        assertEquals(6, b.lookupPrefix(hashes).cachedBlocks());
        try (PrefixPin pin = b.ensurePrefixResident(hashes, Tier.GPU)) {
            assertEquals(2, pin.size());
        }
        assertEquals(2, rankB.stats().remote().rejections(RemoteRejection.CHECKSUM));
    }

    /**
     * The same through the restore a runtime uses ({@code lookupPrefix}, then {@code ensurePrefixResidentByLayer}):
     * a value whose signature was tampered with between the two makes every layer and the pin hold the two blocks
     * before it, with their bytes, and is counted as a signature rejection.
     */
    @Test
    void aValueTamperedBetweenLookupAndALayeredRestoreEndsEveryLayerBeforeIt() throws Exception {
        BlockLayout layered = BlockLayout.layered(LAYOUT.tokensPerBlock(), 2, PAGE / 4,
                BlockLayout.LayerOrder.LAYER_MAJOR);
        List<BlockHash> hashes = sixBlocksInRedis(layered, 5);
        KvTierCache rankB = open();
        PrefixBlockCache b = rankB.prefixBlocks(layered);
        assertEquals(6, b.lookupPrefix(hashes).remoteBlocks());
        tamper(hashes.get(2), 1); // the last byte of the HMAC-SHA256
        PrefixRestore restore = b.ensurePrefixResidentByLayer(hashes, Tier.GPU);
        for (int l = 0; l < restore.layers(); l++) {
            assertEquals(2, restore.layer(l).get(10, TimeUnit.SECONDS).size(), "layer " + l);
        }
        try (PrefixPin pin = restore.pinned().get(10, TimeUnit.SECONDS)) {
            assertEquals(2, pin.size());
            assertBytes(b, hashes.subList(0, 2));
        }
        RemoteStoreStats stats = rankB.stats().remote();
        assertEquals(1, stats.rejections(RemoteRejection.SIGNATURE), stats.toString());
        assertEquals(1, stats.rejections(), stats.toString());
        assertEquals(2, b.lookupPrefix(hashes).localBlocks());
    }

    private static boolean allHeld(boolean[] held) {
        for (boolean h : held) {
            if (!h) {
                return false;
            }
        }
        return true;
    }
}
