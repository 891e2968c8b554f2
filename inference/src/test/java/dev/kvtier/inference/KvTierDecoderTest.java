package dev.kvtier.inference;

import dev.kvtier.Backend;
import dev.kvtier.DiskPersistence;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.RemoteStoreConfig;
import dev.kvtier.cuda.FakeCuda;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockHasher;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.remote.InProcessRemoteBlockStore;
import dev.kvtier.remote.RemoteBlockStore;
import dev.kvtier.store.Tier;
import dev.kvtier.testing.FaultLogRouting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The kvtier-backed decoder against the reference decoder (plain arrays, no kvtier) on a multi-turn chat of the
 * tiny model: every request's greedy tokens identical and every logit bit-identical, however the KV cache is
 * placed, persisted, faulted, shared between threads or evicted; and a changed cached byte does not go unnoticed.
 */
class KvTierDecoderTest {
    private static final LlamaModel MODEL = new LlamaModel(LlamaWeights.generate(LlamaConfig.TINY, 42));
    /** 2 system prompts, 6 users, 3 turns: 18 requests, prompts up to about 200 tokens. */
    private static final ChatWorkload CHAT = ChatWorkload.chat(5, 2, 6, 3, 40, 24, 12);
    /**
     * 2 system prompts, 24 users, 2 turns: a working set about 20 times one request's prefix, so that 5% of it on
     * the GPU tier still holds a restored prefix (as in a server with many users).
     */
    private static final ChatWorkload MANY_USERS = ChatWorkload.chat(9, 2, 24, 2, 40, 16, 8);
    private static final int PAGE = 4096;
    /** Reference generations by prompt, shared by the tests (the reference is deterministic). */
    private static final Map<String, Generation> REFERENCE = new ConcurrentHashMap<>();

    @TempDir
    Path disk;

    private final List<KvTierCache> opened = new ArrayList<>();
    private FakeCuda fake;

    @AfterEach
    void closeCaches() {
        opened.forEach(KvTierCache::close);
        if (fake != null) {
            fake.reset();
            fake.assertNothingLive();
        }
    }

    // ------------------------------------------------------------------ placements

    @Test
    void aGpuBudgetHoldingEverythingGivesTheReferenceOutputReadingPagesInPlace() {
        KvTierDecoder decoder = new KvTierDecoder(MODEL, open(2 * workingSetBytes(), 2 * workingSetBytes(), b -> b));
        KvTierDecoder.Counters counters = serveAndCompare(decoder);
        assertTrue(counters.cachedTokens() > counters.prefilledTokens(), "most prompt tokens come from the cache: " + counters);
        assertEquals(0, counters.restoreFailures(), counters.toString());
        assertEquals(0, counters.rowsCopied(), "attention reads restored rows in place: " + counters);
    }

    @Test
    void gpuAtFivePercentAndCpuAtTenPercentWithTheRestOnDiskGivesTheReferenceOutput() {
        long ws = workingSetBytes(MANY_USERS);
        KvTierDecoder decoder = new KvTierDecoder(MODEL, open(ws / 20, ws / 10, b -> b));
        KvTierDecoder.Counters counters = serveAndCompare(MANY_USERS, decoder, decoder::generate);
        assertTrue(counters.cachedTokens() > 0, counters.toString());
        assertTrue(counters.restoredBlocksFrom().get(Tier.DISK) > 0, "some blocks come back from disk: " + counters);
    }

    /**
     * Prefixes longer than three quarters of the GPU tier (up to 12 blocks against a tier of 2-4) are streamed layer by
     * layer from CPU and DISK through the GPU staging slots: the same tokens and logits, no restore failed.
     */
    @ParameterizedTest(name = "GPU {0}% of the working set")
    @ValueSource(ints = {1, 2, 5})
    void prefixesLongerThanTheGpuTierAreStreamedByLayerAndGiveTheReferenceOutput(int gpuPercent) {
        long ws = workingSetBytes();
        KvTierDecoder decoder = new KvTierDecoder(MODEL, open(ws * gpuPercent / 100, ws / 10, b -> b));
        KvTierDecoder.Counters counters = serveAndCompare(decoder);
        assertTrue(counters.streamedPrefixes() > 0, "long prefixes were streamed: " + counters);
        assertTrue(counters.restoredBlocksFrom().get(Tier.DISK) > 0, "streamed from disk too: " + counters);
        assertEquals(0, counters.restoreFailures(), counters.toString());
    }

    @Test
    void streamedPrefixesOnTheCudaBackendOverTheFakeLibcudartGiveTheReferenceOutput() {
        fake = FakeCuda.open();
        fake.reset();
        long ws = workingSetBytes();
        KvTierDecoder decoder = new KvTierDecoder(MODEL,
                open(ws / 20, ws / 10, b -> b.backend(Backend.CUDA).cudaLibrary(fake.library())));
        KvTierDecoder.Counters counters = serveAndCompare(decoder);
        assertTrue(counters.streamedPrefixes() > 0, counters.toString());
        assertEquals(0, counters.restoreFailures(), counters.toString());
    }

    @Test
    void aCacheClosedAndReopenedFromDiskGivesTheReferenceOutput() {
        long ws = workingSetBytes(MANY_USERS);
        UnaryOperator<KvTierConfig.Builder> persisted = b -> b.persistence(DiskPersistence.of("decoder-test"));
        KvTierCache first = open(ws / 20, ws / 10, persisted);
        KvTierDecoder cold = new KvTierDecoder(MODEL, first);
        Map<BlockHash, Integer> depths = new ConcurrentHashMap<>();
        MANY_USERS.run(cold::generate, (user, turn, prompt, generation) -> {
            assertLikeTheReference(user, turn, prompt, generation);
            List<BlockHash> chain = cold.blockHashes(ChatWorkload.concat(prompt, generation.tokens()));
            for (int i = 0; i < chain.size(); i++) {
                depths.put(chain.get(i), i);
            }
        });
        // Only DISK survives a close (GPU and CPU are volatile): move every block there, chains from their tails.
        depths.entrySet().stream().sorted(Map.Entry.<BlockHash, Integer>comparingByValue().reversed()).forEach(e -> {
            String key = dev.kvtier.prefix.PrefixBlockCache.keyOf(e.getKey());
            if (first.get(key).isPresent()) {
                first.demote(key, Tier.DISK);
            }
        });
        first.close();
        KvTierDecoder warm = new KvTierDecoder(MODEL, open(ws / 20, ws / 10, persisted));
        KvTierDecoder.Counters counters = serveAndCompare(MANY_USERS, warm, warm::generate);
        assertTrue(counters.restoredBlocksFrom().get(Tier.DISK) > 0, "a disk-warm start reuses persisted blocks: " + counters);
    }

    @Test
    void theCudaBackendOverTheFakeLibcudartGivesTheReferenceOutput() {
        fake = FakeCuda.open();
        fake.reset();
        long ws = workingSetBytes();
        KvTierDecoder decoder = new KvTierDecoder(MODEL,
                open(ws / 5, ws / 5, b -> b.backend(Backend.CUDA).cudaLibrary(fake.library())));
        KvTierDecoder.Counters counters = serveAndCompare(decoder);
        assertTrue(counters.cachedTokens() > 0, counters.toString());
        assertEquals(0, counters.restoreFailures(), counters.toString());
    }

    @Test
    @Tag(FaultLogRouting.TAG)
    void failedRestoreCopiesFallBackToRecomputingAndAreCounted() {
        fake = FakeCuda.open();
        fake.reset();
        long ws = workingSetBytes();
        KvTierDecoder decoder = new KvTierDecoder(MODEL,
                open(ws / 20, ws / 10, b -> b.backend(Backend.CUDA).cudaLibrary(fake.library())));
        AtomicInteger requests = new AtomicInteger();
        KvTierDecoder.Counters counters = serveAndCompare(decoder, (prompt, n) -> {
            if (requests.incrementAndGet() > CHAT.conversations().size()) {
                // After the first round every prompt has a cached prefix; most sit below the GPU tier, so the
                // next copy is the restore's.
                fake.configure("fail=cudaMemcpyBatchAsync:1:cudaErrorInvalidValue;fail=cudaMemcpyAsync:1:cudaErrorInvalidValue");
            }
            return decoder.generate(prompt, n);
        });
        assertTrue(counters.restoreFailures() > 0, "the injected copy faults failed restores: " + counters);
    }

    @Test
    @Tag(FaultLogRouting.TAG)
    void blocksCorruptedOnDiskFailTheirChecksumAndAreRecomputed() {
        long ws = workingSetBytes(MANY_USERS);
        KvTierDecoder decoder = new KvTierDecoder(MODEL, open(ws / 20, ws / 10, b -> b));
        AtomicInteger requests = new AtomicInteger();
        KvTierDecoder.Counters counters = serveAndCompare(MANY_USERS, decoder, (prompt, n) -> {
            if (requests.incrementAndGet() == MANY_USERS.conversations().size() + 1) {
                // Second round: every byte of every extent changed, so each block restored from DISK fails its CRC32C.
                invertExtentFiles();
            }
            return decoder.generate(prompt, n);
        });
        assertTrue(counters.restoreFailures() > 0, "the corrupted blocks failed their restores: " + counters);
    }

    private void invertExtentFiles() {
        try (var files = java.nio.file.Files.list(disk)) {
            for (Path file : files.filter(f -> f.getFileName().toString().endsWith(".extent")).toList()) {
                try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(file,
                        java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
                    java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate((int) channel.size());
                    channel.read(bytes, 0);
                    for (int i = 0; i < bytes.capacity(); i++) {
                        bytes.put(i, (byte) ~bytes.get(i));
                    }
                    bytes.rewind();
                    channel.write(bytes, 0);
                }
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    // ------------------------------------------------------------------ sharing and eviction

    @Test
    void fourThreadsServingConcurrentlyGiveTheReferenceOutput() throws Exception {
        long ws = workingSetBytes();
        KvTierDecoder decoder = new KvTierDecoder(MODEL, open(ws / 4, ws / 4, b -> b));
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                done.add(threads.submit(() -> {
                    for (int u = thread; u < CHAT.conversations().size(); u += 4) {
                        CHAT.runConversation(u, decoder::generate, KvTierDecoderTest::assertLikeTheReference);
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertTrue(decoder.counters().cachedTokens() > 0, decoder.counters().toString());
    }

    @Test
    void blocksEvictedWhileARequestIsBetweenStepsDoNotChangeTheOutput() {
        long ws = workingSetBytes();
        KvTierDecoder decoder = new KvTierDecoder(MODEL, open(ws, ws, b -> b));
        AtomicInteger removed = new AtomicInteger();
        KvTierDecoder.Counters counters = serveAndCompare(decoder, (prompt, n) -> {
            List<BlockHash> chain = decoder.blockHashes(prompt);
            return decoder.generate(prompt, n, position -> {
                // Remove the request's prompt chain from the tail: its pinned blocks keep their pages until the
                // request ends, the rest is gone for the next turn.
                for (int i = chain.size() - 1; i >= 0; i--) {
                    try {
                        if (decoder.blocks().removeBlock(chain.get(i))) {
                            removed.incrementAndGet();
                        }
                    } catch (IllegalStateException hasChildren) {
                        break;
                    }
                }
            });
        });
        assertTrue(removed.get() > 0, "blocks were removed between steps");
        assertTrue(counters.prefilledTokens() > 0, counters.toString());
    }

    // ------------------------------------------------------------------ the check can fail

    @Test
    void oneChangedCachedByteChangesTheOutputOrFailsTheRestore() {
        KvTierCache cache = open(2 * workingSetBytes(), 2 * workingSetBytes(), b -> b);
        KvTierDecoder decoder = new KvTierDecoder(MODEL, cache);
        ChatWorkload.Conversation conversation = CHAT.conversations().get(0);
        int[] prompt = ChatWorkload.concat(conversation.system(), new int[] {ByteVocabulary.USER}, conversation.messages().get(0),
                new int[] {ByteVocabulary.END, ByteVocabulary.ASSISTANT});
        assertLikeTheReference(0, 0, prompt, decoder.generate(prompt, CHAT.answerTokens()));
        List<BlockHash> chain = decoder.blockHashes(prompt);
        try (PrefixPin pin = decoder.blocks().ensurePrefixResident(chain.subList(0, 1), Tier.GPU)) {
            // Host backend: the GPU pages are native memory. Flip the sign and exponent byte of layer 1's first key.
            long offset = decoder.layout().layerOffsets(1)[0] + Float.BYTES - 1;
            MemorySegment page = pin.blocks().get(0).pages().get(0);
            page.set(ValueLayout.JAVA_BYTE, offset, (byte) (page.get(ValueLayout.JAVA_BYTE, offset) ^ 0xC0));
        }
        Generation again = decoder.generate(prompt, CHAT.answerTokens());
        assertTrue(again.cachedTokens() > 0 || again.restoreFailures() > 0, "the changed block was used or refused");
        Generation expected = reference(prompt, CHAT.answerTokens());
        boolean sameOutput = again.sameOutputAs(expected);
        assertTrue(!sameOutput || again.restoreFailures() > 0, "a changed cached byte went unnoticed");
    }

    // ------------------------------------------------------------------ caches, references and comparisons

    /** The in-process store, counting the look-ups that reach it. */
    private static final class CountingStore implements RemoteBlockStore {
        final InProcessRemoteBlockStore inner = new InProcessRemoteBlockStore();
        final AtomicInteger containsAllCalls = new AtomicInteger();

        @Override
        public CompletableFuture<boolean[]> containsAll(List<String> keys) {
            containsAllCalls.incrementAndGet();
            return inner.containsAll(keys);
        }

        @Override
        public CompletableFuture<Void> getAllInto(List<String> keys, ValueSink sink) {
            return inner.getAllInto(keys, sink);
        }

        @Override
        public CompletableFuture<Void> putAll(Map<String, byte[]> values) {
            return inner.putAll(values);
        }

        @Override
        public String describe() {
            return "counting(" + inner.describe() + ")";
        }

        @Override
        public void close() {
            inner.close();
        }
    }

    /**
     * With a remote block store, the blocks that fill are stored without asking the store: one look-up per request
     * (its prompt's prefix), not one more per block. Fails on commit 2bfdd36, where each filled block was looked up
     * first, and a block missing locally is a round trip to the store.
     */
    @Test
    void aRemoteStoreIsAskedOncePerRequestNotOncePerFilledBlock() throws Exception {
        try (CountingStore store = new CountingStore()) {
            KvTierCache cache = open(2 * workingSetBytes(), 2 * workingSetBytes(), b -> b.remote(RemoteStoreConfig
                    .builder().store(store).key("a deployment key of 32 bytes....".getBytes(StandardCharsets.UTF_8))
                    .namespace("decoder-test").build()));
            KvTierDecoder decoder = new KvTierDecoder(MODEL, cache);
            KvTierDecoder.Counters counters = serveAndCompare(decoder);
            assertTrue(counters.blocksStored() > CHAT.requestCount(), counters.toString());
            assertTrue(store.containsAllCalls.get() <= CHAT.requestCount(), store.containsAllCalls.get()
                    + " look-ups reached the store for " + CHAT.requestCount() + " requests storing "
                    + counters.blocksStored() + " blocks");
            // Every block stored was written through once.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (cache.stats().remote().blocksWritten() < counters.blocksStored() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(counters.blocksStored(), cache.stats().remote().blocksWritten(), cache.stats().remote().toString());
            cache.close();
        }
    }

    private KvTierCache open(long gpuBytes, long cpuBytes, UnaryOperator<KvTierConfig.Builder> configure) {
        KvTierConfig config = configure.apply(KvTierConfig.builder().backend(Backend.HOST)
                .gpuBudgetBytes(pages(gpuBytes)).cpuBudgetBytes(pages(cpuBytes)).pageSizeBytes(PAGE)
                .diskExtentBytes(64L * PAGE).diskDirectory(disk)).build();
        KvTierCache cache = KvTierCache.open(config);
        opened.add(cache);
        return cache;
    }

    /** At least two blocks' worth, in whole pages. */
    private static long pages(long bytes) {
        long block = KvTierDecoder.layoutFor(LlamaConfig.TINY, KvTierDecoder.DEFAULT_TOKENS_PER_BLOCK).bytesPerBlock();
        return Math.max(2 * block, (bytes + PAGE - 1) / PAGE * PAGE);
    }

    /** The bytes of every distinct full block of the workload's requests (prompts and answers). */
    private static long workingSetBytes() {
        return workingSetBytes(CHAT);
    }

    private static long workingSetBytes(ChatWorkload workload) {
        Set<BlockHash> distinct = new HashSet<>();
        BlockHasher hasher = new BlockHasher();
        workload.run((prompt, n) -> reference(prompt, n), (user, turn, prompt, generation) ->
                distinct.addAll(hasher.chain(ChatWorkload.concat(prompt, generation.tokens()), KvTierDecoder.DEFAULT_TOKENS_PER_BLOCK)));
        return distinct.size() * KvTierDecoder.layoutFor(LlamaConfig.TINY, KvTierDecoder.DEFAULT_TOKENS_PER_BLOCK).bytesPerBlock();
    }

    private static Generation reference(int[] prompt, int newTokens) {
        return REFERENCE.computeIfAbsent(newTokens + ":" + Arrays.toString(prompt),
                key -> new ReferenceDecoder(MODEL).generate(prompt, newTokens));
    }

    private static KvTierDecoder.Counters serveAndCompare(KvTierDecoder decoder) {
        return serveAndCompare(CHAT, decoder, decoder::generate);
    }

    private static KvTierDecoder.Counters serveAndCompare(KvTierDecoder decoder,
            java.util.function.BiFunction<int[], Integer, Generation> serve) {
        return serveAndCompare(CHAT, decoder, serve);
    }

    private static KvTierDecoder.Counters serveAndCompare(ChatWorkload workload, KvTierDecoder decoder,
            java.util.function.BiFunction<int[], Integer, Generation> serve) {
        long before = decoder.counters().requests();
        workload.run(serve, KvTierDecoderTest::assertLikeTheReference);
        KvTierDecoder.Counters counters = decoder.counters();
        assertEquals(workload.requestCount(), counters.requests() - before);
        return counters;
    }

    private static void assertLikeTheReference(int user, int turn, int[] prompt, Generation actual) {
        Generation expected = reference(prompt, actual.tokens().length);
        String what = "user " + user + " turn " + turn + " (" + prompt.length + " prompt tokens, " + actual.cachedTokens()
                + " cached)";
        assertArrayEquals(expected.tokens(), actual.tokens(), what + ": tokens");
        if (!expected.sameOutputAs(actual)) {
            fail(what + ": logits differ in some bit");
        }
    }
}
