package dev.kvtier;

import org.junit.jupiter.api.Tag;
import dev.kvtier.testing.FaultLogRouting;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockHasher;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixLookup;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.prefix.PrefixRestore;
import dev.kvtier.remote.InProcessRemoteBlockStore;
import dev.kvtier.remote.RemoteBlockStore;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Prefix blocks shared through a remote block store (the in-process one, or a wrapper of it that fails or hangs):
 * two caches on one store act as two ranks; a chain cut in the middle by the store's budget is a shorter prefix;
 * tampered, foreign-key, foreign-namespace, foreign-layout and truncated values are misses counted by cause; a
 * failing or hanging store never makes a caller wait past the transfer timeout nor serves a wrong byte; a full write
 * queue drops and counts; close with writes pending returns within the timeout.
 */
@Tag(FaultLogRouting.TAG) // faults injected on purpose: the library's warnings go to target/test-logs
class RemotePrefixBlocksTest {
    static final int PAGE = 4096;
    static final BlockLayout LAYOUT = BlockLayout.of(16, PAGE);
    static final byte[] KEY = "a deployment key of 32 bytes....".getBytes(StandardCharsets.UTF_8);
    static final Duration TIMEOUT = Duration.ofMillis(500);

    @TempDir
    Path diskDirectory;

    private final List<AutoCloseable> opened = new ArrayList<>();
    private final BlockHasher hasher = new BlockHasher();
    private int caches;

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    private <T extends AutoCloseable> T owned(T resource) {
        opened.add(resource);
        return resource;
    }

    private KvTierCache open(RemoteBlockStore store, Consumer<RemoteStoreConfig.Builder> tweak) {
        return open(store, tweak, 16, 16);
    }

    private KvTierCache open(RemoteBlockStore store, Consumer<RemoteStoreConfig.Builder> tweak, long gpuBlocks,
                             long cpuBlocks) {
        RemoteStoreConfig.Builder remote = RemoteStoreConfig.builder().store(store).key(KEY).namespace("test-model");
        tweak.accept(remote);
        KvTierConfig config = KvTierConfig.builder().backend(Backend.HOST).gpuBudgetBytes(gpuBlocks * PAGE)
                .cpuBudgetBytes(cpuBlocks * PAGE).pageSizeBytes(PAGE).diskExtentBytes(16L * PAGE)
                .diskDirectory(diskDirectory.resolve("cache-" + caches++)).transferTimeout(TIMEOUT)
                .remote(remote.build()).build();
        return owned(KvTierCache.open(config));
    }

    private List<BlockHash> chain(int seed, int blocks) {
        int[] tokens = new int[blocks * LAYOUT.tokensPerBlock()];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = seed * 100_003 + i;
        }
        return hasher.chain(BlockHasher.namespaceRoot("remote-test"), tokens, LAYOUT.tokensPerBlock());
    }

    static byte[] content(BlockHash hash) {
        return KvTierCacheContract.randomBytes(hash.high() ^ hash.low(), PAGE);
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

    static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 20 s: " + what);
            }
            Thread.onSpinWait();
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    static void awaitWritten(KvTierCache cache, long blocks) {
        await(() -> cache.stats().remote().blocksWritten() >= blocks, blocks + " blocks written through");
    }

    static String storeKey(String namespace, BlockHash hash) {
        return "kvtier:" + namespace + ":" + hash;
    }

    // ---------------------------------------------------------------- two ranks

    @Test
    void aSecondCacheFetchesWhatTheFirstStoredAndFromThenOnHoldsItLocally() {
        InProcessRemoteBlockStore store = owned(new InProcessRemoteBlockStore());
        KvTierCache rankA = open(store, r -> { });
        KvTierCache rankB = open(store, r -> { });
        List<BlockHash> hashes = chain(1, 8);
        rankA.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, hashes, contents(hashes));
        awaitWritten(rankA, 8);

        PrefixBlockCache b = rankB.prefixBlocks(LAYOUT);
        PrefixLookup lookup = b.lookupPrefix(hashes);
        assertEquals(8, lookup.cachedBlocks());
        assertEquals(0, lookup.localBlocks());
        assertEquals(8, lookup.remoteBlocks());
        assertTrue(lookup.isRemote(0));
        try (PrefixPin pin = b.ensurePrefixResident(hashes, Tier.GPU)) {
            assertEquals(8, pin.size());
            pin.blocks().forEach(block -> assertEquals(Tier.GPU, block.tier()));
        }
        assertBytes(b, hashes);
        PrefixLookup after = b.lookupPrefix(hashes);
        assertEquals(8, after.localBlocks(), "fetched blocks are local blocks now");
        assertEquals(0, after.remoteBlocks());
        RemoteStoreStats stats = rankB.stats().remote();
        assertEquals(8, stats.blocksFetched());
        assertEquals(8, stats.remoteBlocksFound());
        assertEquals(0, stats.rejections());
        assertFalse(stats.down());
        assertTrue(stats.roundTripNanos() > 0, stats.toString());
        assertTrue(stats.bytesPerSecond() > 0, stats.toString());
        assertEquals(0, rankB.stats().remote().blocksWritten(), "fetched blocks are not written back");
    }

    @Test
    void aLocalPrefixIsExtendedByTheRemoteBlocksAfterIt() {
        InProcessRemoteBlockStore store = owned(new InProcessRemoteBlockStore());
        KvTierCache rankA = open(store, r -> { });
        KvTierCache rankB = open(store, r -> r.writeThrough(RemoteStoreConfig.WriteThrough.NEVER));
        List<BlockHash> hashes = chain(2, 8);
        rankA.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, hashes, contents(hashes));
        awaitWritten(rankA, 8);
        PrefixBlockCache b = rankB.prefixBlocks(LAYOUT);
        b.storeBlocks(BlockHash.ROOT, hashes.subList(0, 3), contents(hashes.subList(0, 3)), Tier.CPU);

        PrefixLookup lookup = b.lookupPrefix(hashes);
        assertEquals(3, lookup.localBlocks());
        assertEquals(5, lookup.remoteBlocks());
        assertFalse(lookup.isRemote(2));
        assertTrue(lookup.isRemote(3));
        try (PrefixPin pin = b.ensurePrefixResident(hashes, Tier.CPU)) {
            assertEquals(8, pin.size());
        }
        assertBytes(b, hashes);
        assertEquals(5, rankB.stats().remote().blocksFetched());
        assertEquals(0, rankB.stats().remote().blocksWritten());
    }

    @Test
    void aLayeredRestoreFetchesTheRemoteBlocksWithoutBlockingItsCaller() throws Exception {
        BlockLayout layered = BlockLayout.layered(16, 2, PAGE / 4, BlockLayout.LayerOrder.LAYER_MAJOR);
        InProcessRemoteBlockStore store = owned(new InProcessRemoteBlockStore());
        KvTierCache rankA = open(store, r -> { });
        KvTierCache rankB = open(store, r -> { });
        List<BlockHash> hashes = chain(3, 6);
        rankA.prefixBlocks(layered).storeBlocks(BlockHash.ROOT, hashes, contents(hashes));
        awaitWritten(rankA, 6);
        PrefixRestore restore = rankB.prefixBlocks(layered).ensurePrefixResidentByLayer(hashes, Tier.GPU);
        try (PrefixPin pin = restore.pinned().get(20, TimeUnit.SECONDS)) {
            assertEquals(6, pin.size());
        }
        assertBytes(rankB.prefixBlocks(layered), hashes);
    }

    @Test
    void aChainCutInTheMiddleByTheStoresBudgetIsAShorterPrefix() throws Exception {
        long valueBytes = PAGE + 200; // a block's value: its bytes, header, namespace and signature
        InProcessRemoteBlockStore store = owned(new InProcessRemoteBlockStore(8 * valueBytes));
        KvTierCache rankA = open(store, r -> { });
        List<BlockHash> hashes = chain(4, 8);
        rankA.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, hashes, contents(hashes));
        awaitWritten(rankA, 8);
        // Blocks 0-3 read and written again (newest now), then more values: the oldest, 4 and 5, are evicted.
        List<String> head = hashes.subList(0, 4).stream().map(h -> storeKey("test-model", h)).toList();
        List<byte[]> values = store.getAll(head).get(5, TimeUnit.SECONDS);
        Map<String, byte[]> again = new java.util.LinkedHashMap<>();
        for (int i = 0; i < head.size(); i++) {
            again.put(head.get(i), values.get(i));
        }
        store.putAll(again).get(5, TimeUnit.SECONDS);
        store.putAll(Map.of("filler", new byte[(int) (2 * valueBytes - 100)])).get(5, TimeUnit.SECONDS);
        assertArrayEquals(new boolean[] {true, true, true, true, false, false, true, true},
                store.containsAll(hashes.stream().map(h -> storeKey("test-model", h)).toList())
                        .get(5, TimeUnit.SECONDS));

        KvTierCache rankB = open(store, r -> { });
        PrefixBlockCache b = rankB.prefixBlocks(LAYOUT);
        assertEquals(4, b.lookupPrefix(hashes).cachedBlocks());
        try (PrefixPin pin = b.ensurePrefixResident(hashes, Tier.GPU)) {
            assertEquals(4, pin.size());
        }
        assertBytes(b, hashes.subList(0, 4));
    }

    // ---------------------------------------------------------------- values that are not served

    private void putRaw(RemoteBlockStore store, String key, byte[] value) throws Exception {
        store.putAll(Map.of(key, value)).get(5, TimeUnit.SECONDS);
    }

    private byte[] getRaw(RemoteBlockStore store, String key) throws Exception {
        return store.getAll(List.of(key)).get(5, TimeUnit.SECONDS).get(0);
    }

    @Test
    void tamperedTruncatedAndForeignValuesAreMissesCountedByCause() throws Exception {
        InProcessRemoteBlockStore store = owned(new InProcessRemoteBlockStore());
        KvTierCache rankA = open(store, r -> { });
        List<BlockHash> hashes = chain(5, 8);
        rankA.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, hashes, contents(hashes));
        awaitWritten(rankA, 8);

        // A flipped payload byte at block 2: blocks 0 and 1 are served, nothing after the bad one.
        String key2 = storeKey("test-model", hashes.get(2));
        byte[] good2 = getRaw(store, key2);
        byte[] tampered = good2.clone();
        tampered[tampered.length - 40] ^= 1;
        putRaw(store, key2, tampered);
        KvTierCache reader = open(store, r -> r.writeThrough(RemoteStoreConfig.WriteThrough.NEVER));
        try (PrefixPin pin = reader.prefixBlocks(LAYOUT).ensurePrefixResident(hashes, Tier.GPU)) {
            assertEquals(2, pin.size());
        }
        assertBytes(reader.prefixBlocks(LAYOUT), hashes.subList(0, 2));
        assertEquals(1, reader.stats().remote().rejections(RemoteRejection.CHECKSUM));

        // Truncated: the reader has blocks 0 and 1 now and asks from block 2 on.
        putRaw(store, key2, java.util.Arrays.copyOf(good2, 100));
        try (PrefixPin pin = reader.prefixBlocks(LAYOUT).ensurePrefixResident(hashes, Tier.GPU)) {
            assertEquals(2, pin.size());
        }
        assertEquals(1, reader.stats().remote().rejections(RemoteRejection.TRUNCATED));

        // Another block's value under block 2's key.
        putRaw(store, key2, getRaw(store, storeKey("test-model", hashes.get(3))));
        try (PrefixPin pin = reader.prefixBlocks(LAYOUT).ensurePrefixResident(hashes, Tier.GPU)) {
            assertEquals(2, pin.size());
        }
        assertEquals(1, reader.stats().remote().rejections(RemoteRejection.BLOCK));

        // Another namespace's value copied under this namespace's key.
        KvTierCache otherNamespace = open(store, r -> r.namespace("other-model"));
        List<BlockHash> other = chain(6, 1);
        otherNamespace.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, other, contents(other));
        awaitWritten(otherNamespace, 1);
        putRaw(store, storeKey("test-model", other.get(0)), getRaw(store, storeKey("other-model", other.get(0))));
        try (PrefixPin pin = reader.prefixBlocks(LAYOUT).ensurePrefixResident(other, Tier.GPU)) {
            assertEquals(0, pin.size());
        }
        assertEquals(1, reader.stats().remote().rejections(RemoteRejection.NAMESPACE));
        assertEquals(0, otherNamespace.prefixBlocks(LAYOUT).lookupPrefix(hashes).cachedBlocks(),
                "another namespace sees none of this one's blocks");

        // Written with another key: a bad signature.
        putRaw(store, key2, good2);
        byte[] otherKey = KEY.clone();
        otherKey[3] ^= 1;
        KvTierCache foreign = open(store, r -> r.key(otherKey).writeThrough(RemoteStoreConfig.WriteThrough.NEVER));
        try (PrefixPin pin = foreign.prefixBlocks(LAYOUT).ensurePrefixResident(hashes, Tier.GPU)) {
            assertEquals(0, pin.size());
        }
        assertEquals(1, foreign.stats().remote().rejections(RemoteRejection.SIGNATURE));

        // Read through a view of another layout (16 tokens per block written, 32 read).
        KvTierCache otherLayout = open(store, r -> r.writeThrough(RemoteStoreConfig.WriteThrough.NEVER));
        try (PrefixPin pin = otherLayout.prefixBlocks(BlockLayout.of(32, PAGE)).ensurePrefixResident(hashes,
                Tier.GPU)) {
            assertEquals(0, pin.size());
        }
        assertEquals(1, otherLayout.stats().remote().rejections(RemoteRejection.LAYOUT));
        assertEquals(0, otherLayout.stats().used(Tier.GPU) + otherLayout.stats().used(Tier.CPU));
    }

    // ---------------------------------------------------------------- a store that fails or hangs

    /** A store that answers, fails or never answers, as the test says; counts the calls that reach it. */
    static final class ControlledStore implements RemoteBlockStore {
        enum Mode { ANSWER, FAIL, HANG }

        final InProcessRemoteBlockStore inner = new InProcessRemoteBlockStore();
        volatile Mode mode = Mode.ANSWER;
        final AtomicInteger calls = new AtomicInteger();
        /** The keys of every {@code putAll} answered, in the order sent. */
        final List<String> putKeys = java.util.Collections.synchronizedList(new ArrayList<>());

        private <T> CompletableFuture<T> controlled(java.util.function.Supplier<CompletableFuture<T>> call) {
            calls.incrementAndGet();
            return switch (mode) {
                case ANSWER -> call.get();
                case FAIL -> CompletableFuture.failedFuture(new java.io.IOException("connection refused (test)"));
                case HANG -> new CompletableFuture<>();
            };
        }

        @Override
        public CompletableFuture<boolean[]> containsAll(List<String> keys) {
            return controlled(() -> inner.containsAll(keys));
        }

        @Override
        public CompletableFuture<Void> getAllInto(List<String> keys, ValueSink sink) {
            return controlled(() -> inner.getAllInto(keys, sink));
        }

        @Override
        public CompletableFuture<Void> putAll(Map<String, byte[]> values) {
            return controlled(() -> {
                putKeys.addAll(values.keySet());
                return inner.putAll(values);
            });
        }

        @Override
        public String describe() {
            return "controlled(" + inner.describe() + ")";
        }

        @Override
        public void close() {
            inner.close();
        }
    }

    @Test
    void aFailingStoreIsMarkedDownAndLocalTiersKeepWorking() {
        ControlledStore store = owned(new ControlledStore());
        KvTierCache rankA = open(store, r -> { });
        List<BlockHash> hashes = chain(7, 6);
        PrefixBlockCache a = rankA.prefixBlocks(LAYOUT);
        a.storeBlocks(BlockHash.ROOT, hashes.subList(0, 3), contents(hashes.subList(0, 3)));
        awaitWritten(rankA, 3);

        store.mode = ControlledStore.Mode.FAIL;
        PrefixLookup lookup = a.lookupPrefix(hashes);
        assertEquals(3, lookup.cachedBlocks());
        assertEquals(0, lookup.remoteBlocks());
        RemoteStoreStats stats = rankA.stats().remote();
        assertTrue(stats.down(), stats.toString());
        assertEquals(1, stats.failures());
        int callsWhenDown = store.calls.get();
        // Down: neither look-ups nor restores nor stores ask the store until the backoff is over.
        assertEquals(3, a.lookupPrefix(hashes).cachedBlocks());
        try (PrefixPin pin = a.ensurePrefixResident(hashes, Tier.GPU)) {
            assertEquals(3, pin.size());
        }
        a.storeBlocks(hashes.get(2), hashes.subList(3, 4), contents(hashes.subList(3, 4)));
        assertEquals(callsWhenDown, store.calls.get(), "the store was asked while marked down");
        assertTrue(rankA.stats().remote().writesDropped() >= 1);
        assertBytes(a, hashes.subList(0, 4));

        // Back up: after the backoff (100 ms for the first failure) a call tries it again and marks it up.
        store.mode = ControlledStore.Mode.ANSWER;
        await(() -> {
            a.lookupPrefix(hashes);
            return !rankA.stats().remote().down();
        }, "the store marked up again");
        assertTrue(store.calls.get() > callsWhenDown);
    }

    @Test
    void aHangingStoreNeverHoldsACallerPastTheTimeout() {
        ControlledStore store = owned(new ControlledStore());
        KvTierCache cache = open(store, r -> { });
        List<BlockHash> hashes = chain(8, 4);
        PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
        blocks.storeBlocks(BlockHash.ROOT, hashes.subList(0, 2), contents(hashes.subList(0, 2)));
        awaitWritten(cache, 2);
        store.mode = ControlledStore.Mode.HANG;

        long start = System.nanoTime();
        PrefixLookup lookup = blocks.lookupPrefix(hashes);
        long lookupNanos = System.nanoTime() - start;
        assertEquals(2, lookup.cachedBlocks());
        assertTrue(lookupNanos < TIMEOUT.toNanos() + TimeUnit.MILLISECONDS.toNanos(400),
                "a look-up took " + lookupNanos / 1_000_000 + " ms with a transfer timeout of " + TIMEOUT);
        assertTrue(cache.stats().remote().down());

        // Once the backoff is over the restore asks again, and again waits at most the timeout.
        await(() -> {
            try {
                Thread.sleep(150);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            return true;
        }, "backoff");
        start = System.nanoTime();
        try (PrefixPin pin = blocks.ensurePrefixResident(hashes, Tier.GPU)) {
            assertEquals(2, pin.size());
        }
        long restoreNanos = System.nanoTime() - start;
        assertTrue(restoreNanos < TIMEOUT.toNanos() + TimeUnit.MILLISECONDS.toNanos(400),
                "a restore took " + restoreNanos / 1_000_000 + " ms with a transfer timeout of " + TIMEOUT);
        assertBytes(blocks, hashes.subList(0, 2));
        assertEquals(0, cache.stats().remote().blocksFetched());
    }

    // ---------------------------------------------------------------- what write-through sends

    /**
     * Stores block {@code marker} (a chain of its own) and waits until the store was sent it: one writer sends the
     * writes in the order queued, so every write queued before it has been sent (or dropped) by then.
     */
    private void storeMarkerAndAwaitIt(PrefixBlockCache blocks, ControlledStore store, BlockHash marker) {
        blocks.storeBlocks(BlockHash.ROOT, List.of(marker), contents(List.of(marker)));
        String key = storeKey("test-model", marker);
        await(() -> store.putKeys.contains(key), "the marker block written through");
    }

    /**
     * A store call that adds one block to a cached chain sends that block only. Fails on commit 2bfdd36, where every
     * block of a call that stored any was sent again (9 puts for the second call here).
     */
    @Test
    void writeThroughSendsOnlyTheBlocksACallStored() {
        ControlledStore store = owned(new ControlledStore());
        KvTierCache cache = open(store, r -> { });
        PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
        List<BlockHash> hashes = chain(20, 9);
        blocks.storeBlocks(BlockHash.ROOT, hashes.subList(0, 8), contents(hashes.subList(0, 8)));
        awaitWritten(cache, 8);
        assertEquals(8, store.putKeys.size());

        // The request grew by one block: the runtime stores the whole chain again, one block of it new.
        assertEquals(1, blocks.storeBlocks(BlockHash.ROOT, hashes, contents(hashes)));
        // Cached already, every block: nothing to send.
        assertEquals(0, blocks.storeBlocks(BlockHash.ROOT, hashes, contents(hashes)));
        storeMarkerAndAwaitIt(blocks, store, chain(21, 1).get(0));

        assertEquals(List.of(storeKey("test-model", hashes.get(8)), storeKey("test-model", chain(21, 1).get(0))),
                store.putKeys.subList(8, store.putKeys.size()), "the keys sent after the first call");
        // The marker was sent; its acknowledgement is counted when the store's answer arrives, a moment later.
        awaitWritten(cache, 10);
        assertEquals(10, cache.stats().remote().blocksWritten());
        assertEquals(0, cache.stats().remote().writesDropped());

        // And the block sent is the one a second cache fetches and verifies, its parent the block before it.
        KvTierCache rankB = open(store, r -> r.writeThrough(RemoteStoreConfig.WriteThrough.NEVER));
        try (PrefixPin pin = rankB.prefixBlocks(LAYOUT).ensurePrefixResident(hashes, Tier.CPU)) {
            assertEquals(9, pin.size());
        }
        assertBytes(rankB.prefixBlocks(LAYOUT), hashes);
    }

    /**
     * A block stored again after it left the cache is not sent again while the cache remembers sending it (or
     * fetching it); after the store was marked down it is (the store may have come back empty). Fails on commit
     * 2bfdd36, where the chain stored again was sent again (4 more puts).
     */
    @Test
    void aBlockStoredAgainAfterItLeftTheCacheIsSentOnlyIfTheStoreMayHaveLostIt() {
        ControlledStore store = owned(new ControlledStore());
        KvTierCache cache = open(store, r -> { });
        PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
        List<BlockHash> hashes = chain(22, 4);
        blocks.storeBlocks(BlockHash.ROOT, hashes, contents(hashes));
        awaitWritten(cache, 4);
        // Fetched from the store by this cache: known to be there too.
        List<BlockHash> fetched = chain(23, 2);
        KvTierCache rankB = open(store, r -> { });
        rankB.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, fetched, contents(fetched));
        awaitWritten(rankB, 2);
        try (PrefixPin pin = blocks.ensurePrefixResident(fetched, Tier.CPU)) {
            assertEquals(2, pin.size());
        }
        int putsBefore = store.putKeys.size();

        removeChain(blocks, hashes);
        removeChain(blocks, fetched);
        assertEquals(4, blocks.storeBlocks(BlockHash.ROOT, hashes, contents(hashes)));
        assertEquals(2, blocks.storeBlocks(BlockHash.ROOT, fetched, contents(fetched)));
        BlockHash marker = chain(24, 1).get(0);
        storeMarkerAndAwaitIt(blocks, store, marker);
        assertEquals(List.of(storeKey("test-model", marker)), store.putKeys.subList(putsBefore, store.putKeys.size()));

        // Marked down once: what the cache remembered sending is forgotten.
        store.mode = ControlledStore.Mode.FAIL;
        blocks.lookupPrefix(chain(25, 1));
        assertTrue(cache.stats().remote().down());
        store.mode = ControlledStore.Mode.ANSWER;
        await(() -> {
            blocks.lookupPrefix(chain(25, 1));
            return !cache.stats().remote().down();
        }, "the store marked up again");
        putsBefore = store.putKeys.size();
        removeChain(blocks, hashes);
        assertEquals(4, blocks.storeBlocks(BlockHash.ROOT, hashes, contents(hashes)));
        storeMarkerAndAwaitIt(blocks, store, chain(26, 1).get(0));
        assertEquals(5, store.putKeys.size() - putsBefore, store.putKeys.subList(putsBefore, store.putKeys.size())
                .toString());
    }

    private static void removeChain(PrefixBlockCache blocks, List<BlockHash> hashes) {
        for (int i = hashes.size() - 1; i >= 0; i--) {
            assertTrue(blocks.removeBlock(hashes.get(i)), "block " + i + " removed");
        }
    }

    @Test
    void aFullWriteQueueDropsAndCountsWithoutBlockingTheStore() {
        ControlledStore store = owned(new ControlledStore());
        store.mode = ControlledStore.Mode.HANG;
        // Room for two values in flight.
        KvTierCache cache = open(store, r -> r.maxBytesInFlight(2 * (PAGE + 200)));
        List<BlockHash> hashes = chain(9, 10);
        PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
        long start = System.nanoTime();
        for (int i = 0; i < hashes.size(); i++) {
            blocks.storeBlocks(i == 0 ? BlockHash.ROOT : hashes.get(i - 1), hashes.subList(i, i + 1),
                    contents(hashes.subList(i, i + 1)));
        }
        long storeNanos = System.nanoTime() - start;
        assertTrue(storeNanos < TIMEOUT.toNanos(), "storing took " + storeNanos / 1_000_000 + " ms");
        RemoteStoreStats stats = cache.stats().remote();
        assertTrue(stats.writesDropped() >= 8, stats.toString());
        assertEquals(0, stats.blocksWritten());
        assertBytes(blocks, hashes);
    }

    @Test
    void closeWithWritesPendingReturnsWithinTheTimeoutAndLeavesNoThread() {
        ControlledStore store = owned(new ControlledStore());
        store.mode = ControlledStore.Mode.HANG;
        KvTierCache cache = open(store, r -> { });
        List<BlockHash> hashes = chain(10, 8);
        cache.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, hashes, contents(hashes));
        long start = System.nanoTime();
        cache.close();
        long closeNanos = System.nanoTime() - start;
        assertTrue(closeNanos < 2 * TIMEOUT.toNanos() + TimeUnit.MILLISECONDS.toNanos(500),
                "close took " + closeNanos / 1_000_000 + " ms with a transfer timeout of " + TIMEOUT);
        await(() -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.getName().startsWith("kvtier-remote-writer") && t.isAlive()),
                "the remote writer thread ended");
    }

    @Test
    void blocksDemotedToDiskAreWrittenThroughInThatMode() throws Exception {
        InProcessRemoteBlockStore store = owned(new InProcessRemoteBlockStore());
        KvTierCache cache = open(store, r -> r.writeThrough(RemoteStoreConfig.WriteThrough.ON_DEMOTION_TO_DISK),
                2, 2);
        List<BlockHash> hashes = chain(11, 8);
        PrefixBlockCache blocks = cache.prefixBlocks(LAYOUT);
        blocks.storeBlocks(BlockHash.ROOT, hashes, contents(hashes));
        List<Tier> tiers = blocks.lookupPrefix(hashes).tiers();
        long onDisk = tiers.stream().filter(t -> t == Tier.DISK).count();
        assertTrue(onDisk > 0, tiers.toString());
        awaitWritten(cache, onDisk);
        boolean[] held = store.containsAll(hashes.stream().map(h -> storeKey("test-model", h)).toList())
                .get(5, TimeUnit.SECONDS);
        for (int i = 0; i < hashes.size(); i++) {
            assertEquals(tiers.get(i) == Tier.DISK, held[i], "block " + i + " on " + tiers.get(i));
        }
        // A second cache holding the blocks before them fetches the demoted ones, and they verify.
        KvTierCache rankB = open(store, r -> r.writeThrough(RemoteStoreConfig.WriteThrough.NEVER));
        int firstOnDisk = tiers.indexOf(Tier.DISK);
        PrefixBlockCache b = rankB.prefixBlocks(LAYOUT);
        b.storeBlocks(BlockHash.ROOT, hashes.subList(0, firstOnDisk), contents(hashes.subList(0, firstOnDisk)));
        try (PrefixPin pin = b.ensurePrefixResident(hashes, Tier.CPU)) {
            assertEquals(8, pin.size());
        }
        assertBytes(b, hashes);
    }

    // ---------------------------------------------------------------- the cost gate

    @Test
    void theCostGateReportsRemoteBlocksAsNotCachedWhenRecomputingIsFaster() {
        InProcessRemoteBlockStore store = owned(new InProcessRemoteBlockStore());
        KvTierCache rankA = open(store, r -> { });
        List<BlockHash> hashes = chain(12, 4);
        rankA.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, hashes, contents(hashes));
        awaitWritten(rankA, 4);

        // A slow prefill (1 token/s): fetching wins.
        KvTierCache slowPrefill = open(store, r -> r.prefillTokensPerSecond(1));
        PrefixBlockCache slow = slowPrefill.prefixBlocks(LAYOUT);
        assertEquals(4, slow.lookupPrefix(hashes).remoteBlocks());
        RemoteStoreStats stats = slowPrefill.stats().remote();
        assertTrue(stats.estimatedRecomputeNanos() > stats.estimatedFetchNanos(), stats.toString());

        // An absurdly fast prefill (10^15 tokens/s): once the store was measured, recomputing wins.
        KvTierCache fastPrefill = open(store, r -> r.prefillTokensPerSecond(1e15));
        PrefixBlockCache fast = fastPrefill.prefixBlocks(LAYOUT);
        fast.lookupPrefix(hashes); // the first call measures the round trip
        try (PrefixPin pin = fast.ensurePrefixResident(hashes.subList(0, 1), Tier.GPU)) {
            pin.size(); // a fetch measures the bandwidth
        }
        PrefixLookup gated = fast.lookupPrefix(hashes);
        assertEquals(0, gated.remoteBlocks(), fastPrefill.stats().remote().toString());
        stats = fastPrefill.stats().remote();
        assertTrue(stats.gatedBlocks() > 0, stats.toString());
        assertTrue(stats.estimatedFetchNanos() > stats.estimatedRecomputeNanos(), stats.toString());
    }

    /**
     * A cache that restores without looking up first (as the simulator's player does) is gated too, once a fetch was
     * timed. Fails on commit 2bfdd36, where only a look-up timed the round trip and the gate never closed without one.
     */
    @Test
    void theCostGateClosesForACallerThatRestoresWithoutLookingUp() {
        InProcessRemoteBlockStore store = owned(new InProcessRemoteBlockStore());
        KvTierCache rankA = open(store, r -> { });
        List<BlockHash> hashes = chain(27, 4);
        rankA.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, hashes, contents(hashes));
        awaitWritten(rankA, 4);

        KvTierCache fastPrefill = open(store, r -> r.prefillTokensPerSecond(1e15)
                .writeThrough(RemoteStoreConfig.WriteThrough.NEVER));
        PrefixBlockCache fast = fastPrefill.prefixBlocks(LAYOUT);
        try (PrefixPin pin = fast.ensurePrefixResident(hashes.subList(0, 1), Tier.GPU)) {
            assertEquals(1, pin.size(), "nothing measured yet: fetched");
        }
        try (PrefixPin pin = fast.ensurePrefixResident(hashes, Tier.GPU)) {
            assertEquals(1, pin.size(), "the rest left to recompute: " + fastPrefill.stats().remote());
        }
        RemoteStoreStats stats = fastPrefill.stats().remote();
        assertEquals(3, stats.gatedBlocks(), stats.toString());
        assertEquals(1, stats.blocksFetched(), stats.toString());
        assertTrue(stats.estimatedFetchNanos() > stats.estimatedRecomputeNanos(), stats.toString());
    }

    // ---------------------------------------------------------------- observability

    @Test
    void metersAndFlightEventsShowTheFetchesAndTheGatesEstimates() throws Exception {
        InProcessRemoteBlockStore store = owned(new InProcessRemoteBlockStore());
        KvTierCache rankA = open(store, r -> { });
        List<BlockHash> hashes = chain(14, 4);
        rankA.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, hashes, contents(hashes));
        awaitWritten(rankA, 4);
        KvTierCache rankB = open(store, r -> r.prefillTokensPerSecond(1));
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        Path file = diskDirectory.resolve("remote.jfr");
        try (dev.kvtier.observe.micrometer.KvTierMetrics metrics = new dev.kvtier.observe.micrometer.KvTierMetrics(rankB);
             jdk.jfr.Recording recording = dev.kvtier.observe.KvTierFlightRecording.start(file)) {
            metrics.bindTo(registry);
            PrefixBlockCache b = rankB.prefixBlocks(LAYOUT);
            b.lookupPrefix(hashes); // measures a round trip
            try (PrefixPin pin = b.ensurePrefixResident(hashes, Tier.GPU)) {
                assertEquals(4, pin.size());
            }
            recording.stop();
            assertEquals(4, registry.get("kvtier.remote.blocks.fetched").functionCounter().count());
            assertEquals(0, registry.get("kvtier.remote.rejections").tag("cause", "signature").functionCounter()
                    .count());
            assertEquals(0, registry.get("kvtier.remote.down").gauge().value());
            assertTrue(registry.get("kvtier.remote.estimate.recompute").gauge().value() > 0);
        }
        List<jdk.jfr.consumer.RecordedEvent> fetches = jdk.jfr.consumer.RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("dev.kvtier.RemoteFetch")).toList();
        assertEquals(1, fetches.size(), fetches.toString());
        jdk.jfr.consumer.RecordedEvent fetch = fetches.get(0);
        assertTrue(fetch.getBoolean("fetched"));
        assertEquals(4, fetch.getInt("served"));
        assertTrue(fetch.getLong("estimatedRecomputeNanos") > 0);
    }

    // ---------------------------------------------------------------- configuration

    @Test
    void aStoreWithoutAKeyIsRefusedAndTheKeyIsNeverPrinted() {
        IllegalArgumentException noKey = assertThrows(IllegalArgumentException.class,
                () -> KvTierConfig.from(Map.of("kvtier.gpu.budget", "1MiB", "kvtier.remote.store", "inprocess:x")));
        assertTrue(noKey.getMessage().contains("kvtier.remote.key"), noKey.getMessage());

        String secret = "s3cr3t-s3cr3t-s3cr3t";
        KvTierConfig config = KvTierConfig.from(Map.of("kvtier.gpu.budget", "1MiB",
                "kvtier.remote.store", "inprocess:x", "kvtier.remote.key", secret,
                "kvtier.remote.namespace", "llama-8b", "kvtier.remote.write.through", "on-demotion-to-disk",
                "kvtier.remote.max.bytes.in.flight", "8MiB", "kvtier.remote.max.value.bytes", "1MiB",
                "kvtier.remote.prefill.tokens.per.second", "12000",
                "kvtier.remote.setting.password", "hunter2-hunter2"));
        RemoteStoreConfig remote = config.remote().orElseThrow();
        assertEquals("inprocess:x", remote.storeUri().orElseThrow().toString());
        assertArrayEquals(secret.getBytes(StandardCharsets.UTF_8), remote.key());
        assertEquals("llama-8b", remote.namespace());
        assertEquals(RemoteStoreConfig.WriteThrough.ON_DEMOTION_TO_DISK, remote.writeThrough());
        assertEquals(8L << 20, remote.maxBytesInFlight());
        assertEquals(1L << 20, remote.maxValueBytes());
        assertEquals(12000, remote.prefillTokensPerSecond());
        assertEquals(Map.of("password", "hunter2-hunter2"), remote.storeSettings());
        assertFalse(config.toString().contains(secret), config.toString());
        assertFalse(config.toString().contains("hunter2"), config.toString());

        IllegalArgumentException shortKey = assertThrows(IllegalArgumentException.class,
                () -> KvTierConfig.from(Map.of("kvtier.gpu.budget", "1MiB", "kvtier.remote.store", "inprocess:x",
                        "kvtier.remote.key", "short-secret")));
        assertFalse(shortKey.getMessage().contains("short-secret"), shortKey.getMessage());

        KvTierConfig fromEnvironment = KvTierConfig.fromEnvironment(Map.of("KVTIER_GPU_BUDGET", "1MiB",
                "KVTIER_REMOTE_STORE", "inprocess:y", "KVTIER_REMOTE_KEY", secret,
                "KVTIER_REMOTE_SETTING_PASSWORD", "pw"));
        assertEquals("inprocess:y", fromEnvironment.remote().orElseThrow().storeUri().orElseThrow().toString());
        assertEquals(Map.of("password", "pw"), fromEnvironment.remote().orElseThrow().storeSettings());
    }

    @Test
    void aCacheOpensItsStoreByUriAndClosesIt() throws Exception {
        KvTierConfig config = KvTierConfig.builder().backend(Backend.HOST).gpuBudgetBytes(16 * PAGE)
                .cpuBudgetBytes(16 * PAGE).pageSizeBytes(PAGE).diskDirectory(diskDirectory.resolve("by-uri"))
                .transferTimeout(TIMEOUT).remote(RemoteStoreConfig.builder()
                        .store(java.net.URI.create("inprocess:by-uri-test")).key(KEY).build()).build();
        List<BlockHash> hashes = chain(13, 2);
        try (InProcessRemoteBlockStore watcher = InProcessRemoteBlockStore.named("by-uri-test",
                InProcessRemoteBlockStore.UNBOUNDED)) {
            try (KvTierCache cache = KvTierCache.open(config)) {
                cache.prefixBlocks(LAYOUT).storeBlocks(BlockHash.ROOT, hashes, contents(hashes));
                awaitWritten(cache, 2);
            }
            assertArrayEquals(new boolean[] {true, true}, watcher.containsAll(
                    hashes.stream().map(h -> storeKey("default", h)).toList()).get(5, TimeUnit.SECONDS));
        }
    }
}
