package dev.kvtier.inference;

import dev.kvtier.Backend;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierException;
import dev.kvtier.SegmentNotFoundException;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockHasher;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixLayer;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.prefix.PrefixRestore;
import dev.kvtier.prefix.PrefixStream;
import dev.kvtier.prefix.ResidentBlock;
import dev.kvtier.store.Tier;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;

/**
 * The decoder whose KV cache lives in kvtier's prefix blocks: the reference integration of a runtime.
 *
 * <p>A block is {@code tokensPerBlock} tokens of every layer's keys and values, laid out
 * {@link BlockLayout.LayerOrder#LAYER_MAJOR} ({@link #layoutFor}); block hashes chain over the token ids under
 * a namespace root derived from the weights' fingerprint, so two models never share a block. Per request
 * ({@link #generate}):
 * <ol>
 *   <li>{@code lookupPrefix} of the prompt's full blocks (all but the last prompt token: that one is always
 *       computed, its logits choose the first token);</li>
 *   <li>a cached prefix that fits three quarters of the GPU tier: {@code ensurePrefixResidentByLayer} to the GPU
 *       tier; layer {@code l} of the uncached tokens is computed as soon as layer {@code l} of the cached blocks is in
 *       place. On the host backend attention reads the restored pages themselves (no copy); on the CUDA backend the
 *       compute still runs on the CPU, so once every layer is in place each pinned block is copied from device memory
 *       into the request's host memory ({@code readBlock});</li>
 *   <li>a longer one (the GPU tier cannot hold it at once): {@code streamPrefixByLayer} of as many of its blocks as
 *       a staging area of three quarters of the GPU tier serves (two layers of each: {@code layers / 2} times as many
 *       blocks as a restore; the rest is computed), the blocks staying where they are; as layer {@code l} arrives in the stream's GPU staging slot its rows are copied into the request's
 *       own memory (the runtime's KV memory, which later decode steps read) and the layer is released, so the slot
 *       takes layer {@code l + 2} while layer {@code l} is computed. On the CUDA backend the rows are read with
 *       {@code readBlock} from the pinned blocks instead (the CPU cannot read device memory); the stream still moves
 *       every layer through device memory;</li>
 *   <li>the uncached prompt tokens are computed, then one token per step is decoded; every block that fills
 *       (prompt or generated tokens) is stored with {@code storeBlocks}; the partial last block stays in the
 *       request's own memory and is never stored;</li>
 *   <li>the prefix pin is held for the whole request (the rows attention reads are in the pinned pages) and
 *       closed when the request ends, however it ends.</li>
 * </ol>
 * A restore that fails ({@code TransferFailedException}, {@code SegmentCorruptedException},
 * {@code TierFullException}, any {@link KvTierException}, or no answer within the restore timeout) is replaced by
 * computing the whole prompt: the output is the same, the failure is counted ({@link #counters}). A store that
 * fails is counted and the request goes on (its keys and values are in its own memory).
 *
 * <p>Thread-safe: requests on several threads share the cache, each with its own memory; a system prompt the
 * requests share is stored once (the cache keeps an equal block as it is).
 */
public final class KvTierDecoder {
    /** Tokens per block unless told otherwise. */
    public static final int DEFAULT_TOKENS_PER_BLOCK = 16;

    private final LlamaModel model;
    private final LlamaConfig config;
    private final PrefixBlockCache blocks;
    private final BlockLayout layout;
    private final BlockHash namespace;
    private final boolean pagesReadableOnHost;
    private final Duration restoreTimeout;
    private final int rowBytes;
    private final int maxRestoredBlocks;
    private final int maxStreamedBlocks;
    private final LongAdder requests = new LongAdder();
    private final LongAdder restoreFailures = new LongAdder();
    private final LongAdder storeFailures = new LongAdder();
    private final LongAdder blocksStored = new LongAdder();
    private final LongAdder cachedTokens = new LongAdder();
    private final LongAdder prefilledTokens = new LongAdder();
    private final LongAdder rowsCopied = new LongAdder();
    private final LongAdder streamedPrefixes = new LongAdder();
    private final Map<Tier, LongAdder> restoredBlocksFrom = new EnumMap<>(Tier.class);

    /**
     * A decoder of {@code model} over {@code cache}, blocks of {@code tokensPerBlock} tokens, waiting at most
     * {@code restoreTimeout} for a restore before computing instead.
     *
     * @throws IllegalArgumentException naming the value when {@code tokensPerBlock < 1}
     */
    public KvTierDecoder(LlamaModel model, KvTierCache cache, int tokensPerBlock, Duration restoreTimeout) {
        this.model = model;
        this.config = model.config();
        this.layout = layoutFor(config, tokensPerBlock);
        this.blocks = cache.prefixBlocks(layout);
        this.namespace = BlockHasher.namespaceRoot("llama/" + model.weights().fingerprint());
        // Only the host backend's GPU pages are native memory the CPU may read; AUTO may have chosen CUDA.
        this.pagesReadableOnHost = cache.config().backend() == Backend.HOST;
        this.restoreTimeout = restoreTimeout;
        this.rowBytes = config.kvDim() * Float.BYTES;
        // A restore holds the whole prefix on the GPU tier at once; a prefix larger than three quarters of it would
        // mostly fail with TierFullException (the request's new blocks and other requests need room too), so such a
        // prefix is streamed layer by layer instead.
        this.maxRestoredBlocks = (int) Math.max(1, Math.min(Integer.MAX_VALUE,
                cache.config().gpuBudgetBytes() / layout.bytesPerBlock() * 3 / 4));
        // A stream's staging area is two layers of the blocks it streams (2 / layers of their bytes), taken from the
        // GPU budget: held to the same three quarters, a stream reaches layers / 2 times further than a restore.
        this.maxStreamedBlocks = (int) Math.max(1, Math.min(Integer.MAX_VALUE,
                cache.config().gpuBudgetBytes() * 3 / 4 * config.layers() / (2 * layout.bytesPerBlock())));
        for (Tier tier : Tier.values()) {
            restoredBlocksFrom.put(tier, new LongAdder());
        }
    }

    /** A decoder with {@link #DEFAULT_TOKENS_PER_BLOCK} and a restore timeout of 30 s. */
    public KvTierDecoder(LlamaModel model, KvTierCache cache) {
        this(model, cache, DEFAULT_TOKENS_PER_BLOCK, Duration.ofSeconds(30));
    }

    /**
     * The block layout of {@code config}: {@code tokensPerBlock} positions of every layer, layer after layer,
     * each layer's key rows ({@code tokensPerBlock x kvDim} float32, native order) followed by its value rows.
     */
    public static BlockLayout layoutFor(LlamaConfig config, int tokensPerBlock) {
        if (tokensPerBlock < 1) {
            throw new IllegalArgumentException("tokensPerBlock must be >= 1, was " + tokensPerBlock);
        }
        return BlockLayout.layered(tokensPerBlock, config.layers(), (long) tokensPerBlock * config.kvDim() * Float.BYTES,
                BlockLayout.LayerOrder.LAYER_MAJOR);
    }

    /** The layout of this decoder's blocks. */
    public BlockLayout layout() {
        return layout;
    }

    /** The prefix-block view this decoder stores into. */
    public PrefixBlockCache blocks() {
        return blocks;
    }

    /** The chained hashes of the full blocks of {@code tokens} under this model's namespace. */
    public List<BlockHash> blockHashes(int[] tokens) {
        return new BlockHasher().chain(namespace, tokens, layout.tokensPerBlock());
    }

    /** {@link #generate(int[], int, IntConsumer)} with nothing between steps. */
    public Generation generate(int[] prompt, int newTokens) {
        return generate(prompt, newTokens, position -> { });
    }

    /**
     * Computes {@code prompt} (reusing its cached prefix) and then {@code newTokens} greedy tokens, storing each
     * block that fills. {@code betweenSteps} is called on this thread after each decode step with the position
     * just computed (the request holds its prefix pin meanwhile): a runtime's scheduler would run other
     * requests there.
     *
     * @throws IllegalArgumentException when the prompt is empty or prompt and new tokens exceed the sequence length
     * @throws IllegalStateException    if the cache was closed
     */
    public Generation generate(int[] prompt, int newTokens, IntConsumer betweenSteps) {
        long start = System.nanoTime();
        int capacity = Requests.requireFits(config, prompt, newTokens);
        requests.increment();
        try (Request request = new Request(prompt, capacity)) {
            float[] logits = request.prefill();
            int[] generated = new int[newTokens];
            List<float[]> chosenFrom = new ArrayList<>(newTokens);
            long firstToken = 0;
            for (int i = 0; i < newTokens; i++) {
                if (i > 0) {
                    int pos = prompt.length + i - 1;
                    logits = model.forward(request.tokens, pos, pos + 1, request, LlamaModel.LayerGate.OPEN);
                    request.storeFilledBlocks(pos + 1);
                    betweenSteps.accept(pos);
                }
                generated[i] = LlamaModel.argmax(logits);
                request.tokens[prompt.length + i] = generated[i];
                chosenFrom.add(logits);
                if (i == 0) {
                    firstToken = System.nanoTime() - start;
                }
            }
            cachedTokens.add(request.cachedTokens);
            prefilledTokens.add(prompt.length - request.cachedTokens);
            return new Generation(generated, chosenFrom, request.cachedTokens, prompt.length - request.cachedTokens,
                    request.failedRestores, firstToken, System.nanoTime() - start);
        }
    }

    /**
     * What this decoder has done so far, summed over requests.
     *
     * @param requests          requests served
     * @param cachedTokens      prompt tokens taken from the cache
     * @param prefilledTokens   prompt tokens computed
     * @param restoreFailures   restores replaced by recomputing
     * @param storeFailures     blocks that could not be stored
     * @param blocksStored      blocks {@code storeBlocks} added to the cache (not those it found cached)
     * @param rowsCopied        key/value rows read through a copy because they straddled two runs of pages
     *                          (0 when the pages hold whole rows, as they do when the page size is a multiple of a row)
     * @param restoredBlocksFrom blocks restored (or streamed), by the tier the restore found them on
     * @param streamedPrefixes  prefixes too long for the GPU tier, streamed layer by layer
     */
    public record Counters(long requests, long cachedTokens, long prefilledTokens, long restoreFailures,
            long storeFailures, long blocksStored, long rowsCopied, Map<Tier, Long> restoredBlocksFrom,
            long streamedPrefixes) {
    }

    /** A snapshot of the counters. */
    public Counters counters() {
        Map<Tier, Long> from = new EnumMap<>(Tier.class);
        restoredBlocksFrom.forEach((tier, n) -> from.put(tier, n.sum()));
        return new Counters(requests.sum(), cachedTokens.sum(), prefilledTokens.sum(), restoreFailures.sum(),
                storeFailures.sum(), blocksStored.sum(), rowsCopied.sum(), Map.copyOf(from), streamedPrefixes.sum());
    }

    /** Thrown inside a request when the restore failed: the prompt is then computed from scratch. */
    private static final class RestoreFailed extends RuntimeException {
        RestoreFailed(Throwable cause) {
            super(cause);
        }
    }

    /** One request's rows: restored pages for the cached prefix, the request's own native memory for the rest. */
    private final class Request implements KeyValueRows, AutoCloseable {
        final int[] tokens;
        final int promptLength;
        final MemorySegment[][] keys;
        final MemorySegment[][] values;
        // Shared: storeBlocks may copy from it on a kvtier thread.
        final Arena arena = Arena.ofShared();
        final MemorySegment[] ownBlocks;
        final List<BlockHash> hashes = new ArrayList<>();
        final BlockHasher hasher = new BlockHasher();
        PrefixRestore restore;
        PrefixPin pin;
        int cachedBlocks;
        int cachedTokens;
        int failedRestores;
        int storedUpTo;

        Request(int[] prompt, int capacity) {
            this.promptLength = prompt.length;
            this.tokens = Arrays.copyOf(prompt, capacity + 1);
            this.keys = new MemorySegment[config.layers()][capacity];
            this.values = new MemorySegment[config.layers()][capacity];
            this.ownBlocks = new MemorySegment[(capacity + layout.tokensPerBlock() - 1) / layout.tokensPerBlock()];
        }

        @Override
        public MemorySegment key(int layer, int position) {
            return keys[layer][position];
        }

        @Override
        public MemorySegment value(int layer, int position) {
            return values[layer][position];
        }

        float[] prefill() {
            int perBlock = layout.tokensPerBlock();
            int lookupBlocks = (promptLength - 1) / perBlock;
            List<BlockHash> promptHashes = hasher.chain(namespace, Arrays.copyOf(tokens, lookupBlocks * perBlock), perBlock);
            int cached = promptHashes.isEmpty() ? 0 : blocks.lookupPrefix(promptHashes).cachedBlocks();
            if (cached > 0) {
                try {
                    return cached <= maxRestoredBlocks ? prefillOverRestore(promptHashes.subList(0, cached))
                            : prefillOverStream(promptHashes.subList(0, Math.min(cached, maxStreamedBlocks)));
                } catch (RestoreFailed failed) {
                    failedRestores++;
                    restoreFailures.increment();
                    releasePin();
                    cachedBlocks = 0;
                    cachedTokens = 0;
                }
            }
            useOwnBlocks(0);
            hashes.clear();
            storedUpTo = 0;
            float[] logits = model.forward(tokens, 0, promptLength, this, LlamaModel.LayerGate.OPEN);
            storeFilledBlocks(promptLength);
            return logits;
        }

        private float[] prefillOverRestore(List<BlockHash> promptHashes) {
            restore = blocks.ensurePrefixResidentByLayer(promptHashes, Tier.GPU);
            List<ResidentBlock> first = await(restore.layer(0));
            if (first.isEmpty()) {
                releasePin();
                throw new RestoreFailed(new SegmentNotFoundException("the prefix was evicted between lookup and restore"));
            }
            cachedBlocks = first.size();
            cachedTokens = cachedBlocks * layout.tokensPerBlock();
            useOwnBlocks(cachedBlocks);
            if (pagesReadableOnHost) {
                mapLayer(0, first);
            } else {
                pin = await(restore.pinned());
                copyPinnedBlocks();
            }
            float[] logits = model.forward(tokens, cachedTokens, promptLength, this, layer -> {
                if (pagesReadableOnHost && layer > 0) {
                    List<ResidentBlock> resident = await(restore.layer(layer));
                    if (resident.size() != cachedBlocks) {
                        throw new RestoreFailed(new IllegalStateException("layer " + layer + " restored " + resident.size()
                                + " blocks, layer 0 " + cachedBlocks));
                    }
                    mapLayer(layer, resident);
                }
            });
            if (pin == null) {
                // The rows read above stay valid only under the pin: a restore that never pins is a failed one.
                pin = await(restore.pinned());
            }
            for (ResidentBlock block : pin.blocks().subList(0, cachedBlocks)) {
                restoredBlocksFrom.get(block.foundOn()).increment();
            }
            hashes.addAll(promptHashes.subList(0, cachedBlocks));
            storedUpTo = cachedBlocks;
            storeFilledBlocks(promptLength);
            return logits;
        }

        /**
         * The cached prefix streamed layer by layer: each layer's rows copied into the request's own memory as it
         * arrives, then released; the stream is closed (pins and staging given back) once the prompt is computed.
         */
        private float[] prefillOverStream(List<BlockHash> promptHashes) {
            PrefixStream stream;
            try {
                stream = blocks.streamPrefixByLayer(promptHashes);
            } catch (KvTierException e) {
                throw new RestoreFailed(e);
            }
            try (stream) {
                if (stream.size() == 0) {
                    throw new RestoreFailed(new SegmentNotFoundException("the prefix was evicted between lookup and stream"));
                }
                streamedPrefixes.increment();
                cachedBlocks = stream.size();
                cachedTokens = cachedBlocks * layout.tokensPerBlock();
                useOwnBlocks(0);
                float[] logits = model.forward(tokens, cachedTokens, promptLength, this, layer -> {
                    PrefixLayer arrived = await(stream.layer(layer));
                    if (arrived.blocks() != cachedBlocks) {
                        throw new RestoreFailed(new IllegalStateException("layer " + layer + " streamed "
                                + arrived.blocks() + " blocks, expected " + cachedBlocks));
                    }
                    if (pagesReadableOnHost) {
                        copyLayer(layer, arrived);
                    } else if (layer == 0) {
                        readStreamedBlocks(stream.hashes());
                    }
                    arrived.release();
                });
                for (Tier tier : stream.foundOn()) {
                    restoredBlocksFrom.get(tier).increment();
                }
                hashes.addAll(promptHashes.subList(0, cachedBlocks));
                storedUpTo = cachedBlocks;
                storeFilledBlocks(promptLength);
                return logits;
            }
        }

        /** Layer {@code layer} of every streamed block, copied from the staging pages into the request's own blocks. */
        private void copyLayer(int layer, PrefixLayer arrived) {
            long layerStart = layout.layerOffsets(layer)[0];
            for (int b = 0; b < cachedBlocks; b++) {
                MemorySegment own = ownBlock(b);
                long at = layerStart;
                for (MemorySegment run : arrived.pages(b)) {
                    MemorySegment.copy(run, 0, own, at, run.byteSize());
                    at += run.byteSize();
                }
            }
        }

        /** CUDA: every streamed block read into the request's own blocks from where it is pinned. */
        private void readStreamedBlocks(List<BlockHash> streamed) {
            for (int b = 0; b < cachedBlocks; b++) {
                try {
                    blocks.readBlock(streamed.get(b), ownBlock(b));
                } catch (KvTierException e) {
                    throw new RestoreFailed(e);
                }
            }
        }

        private <T> T await(CompletableFuture<T> future) {
            try {
                return future.get(restoreTimeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof KvTierException) {
                    throw new RestoreFailed(e.getCause());
                }
                throw new IllegalStateException("restoring a prefix failed unexpectedly", e.getCause());
            } catch (TimeoutException e) {
                throw new RestoreFailed(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RestoreFailed(e);
            }
        }

        /** Points layer {@code layer}'s rows of the cached blocks at their restored pages. */
        private void mapLayer(int layer, List<ResidentBlock> resident) {
            int perBlock = layout.tokensPerBlock();
            long region = layout.regionBytes();
            for (int b = 0; b < cachedBlocks; b++) {
                List<MemorySegment> runs = resident.get(b).layerPages(layout, layer);
                for (int t = 0; t < perBlock; t++) {
                    int pos = b * perBlock + t;
                    keys[layer][pos] = rowOf(runs, (long) t * rowBytes, b, layer, t, 0);
                    values[layer][pos] = rowOf(runs, region + (long) t * rowBytes, b, layer, t, region);
                }
            }
        }

        /** The row at {@code offset} of a layer's runs: a slice of a run, or a copy where it straddles two. */
        private MemorySegment rowOf(List<MemorySegment> runs, long offset, int block, int layer, int t, long regionStart) {
            long skip = offset;
            for (MemorySegment run : runs) {
                if (skip < run.byteSize()) {
                    if (skip + rowBytes <= run.byteSize()) {
                        return run.asSlice(skip, rowBytes);
                    }
                    break;
                }
                skip -= run.byteSize();
            }
            rowsCopied.increment();
            MemorySegment copy = arena.allocate(rowBytes, Float.BYTES);
            long at = 0;
            long from = offset;
            for (MemorySegment run : runs) {
                if (at == rowBytes) {
                    break;
                }
                if (from >= run.byteSize()) {
                    from -= run.byteSize();
                    continue;
                }
                long take = Math.min(run.byteSize() - from, rowBytes - at);
                MemorySegment.copy(run, from, copy, at, take);
                at += take;
                from = 0;
            }
            return copy;
        }

        /** CUDA: the pinned blocks' bytes copied from device memory into the request's memory, every layer. */
        private void copyPinnedBlocks() {
            List<ResidentBlock> pinned = pin.blocks();
            if (pinned.size() < cachedBlocks) {
                throw new RestoreFailed(new IllegalStateException("pinned " + pinned.size() + " blocks, expected " + cachedBlocks));
            }
            for (int b = 0; b < cachedBlocks; b++) {
                MemorySegment own = ownBlock(b);
                try {
                    blocks.readBlock(pinned.get(b).hash(), own);
                } catch (KvTierException e) {
                    throw new RestoreFailed(e);
                }
                mapOwnBlock(b);
            }
        }

        /** Points the rows of blocks {@code from ..} at the request's own memory. */
        private void useOwnBlocks(int from) {
            for (int b = from; b < ownBlocks.length; b++) {
                mapOwnBlock(b);
            }
        }

        private MemorySegment ownBlock(int b) {
            if (ownBlocks[b] == null) {
                ownBlocks[b] = arena.allocate(layout.bytesPerBlock(), Float.BYTES);
            }
            return ownBlocks[b];
        }

        private void mapOwnBlock(int b) {
            MemorySegment own = ownBlock(b);
            int perBlock = layout.tokensPerBlock();
            long region = layout.regionBytes();
            for (int layer = 0; layer < config.layers(); layer++) {
                long layerStart = layout.layerOffsets(layer)[0];
                for (int t = 0; t < perBlock && b * perBlock + t < keys[layer].length; t++) {
                    keys[layer][b * perBlock + t] = own.asSlice(layerStart + (long) t * rowBytes, rowBytes);
                    values[layer][b * perBlock + t] = own.asSlice(layerStart + region + (long) t * rowBytes, rowBytes);
                }
            }
        }

        /** Stores every block that is full once positions {@code [0, computed)} are computed and not stored yet. */
        void storeFilledBlocks(int computed) {
            int perBlock = layout.tokensPerBlock();
            while ((storedUpTo + 1) * perBlock <= computed) {
                int b = storedUpTo;
                BlockHash parent = b == 0 ? namespace : hashes.get(b - 1);
                BlockHash hash = hasher.hash(parent, tokens, b * perBlock, (b + 1) * perBlock);
                hashes.add(hash);
                // No look-up first: storeBlocks leaves a block cached already as it is (equal hash, equal tokens,
                // equal weights: equal bytes) and counts it as not new, and replaces one cached as a chain start
                // where this request stores it after its parent. A look-up of a block missing locally would also ask
                // a remote block store, a round trip for every block that fills.
                try {
                    // A chain's first block is stored under BlockHash.ROOT: the namespace is in its hash, and
                    // storeBlocks takes as parent only ROOT or a cached block.
                    blocksStored.add(blocks.storeBlocks(b == 0 ? BlockHash.ROOT : parent, List.of(hash), ownBlocks[b]));
                } catch (KvTierException e) {
                    storeFailures.increment();
                }
                storedUpTo++;
            }
        }

        private void releasePin() {
            if (pin != null) {
                pin.close();
                pin = null;
            }
            if (restore != null) {
                // A restore that completes after we gave up still pins: release that pin as soon as it exists.
                restore.pinned().thenAccept(PrefixPin::close);
                restore = null;
            }
        }

        @Override
        public void close() {
            try {
                releasePin();
            } finally {
                arena.close();
            }
        }
    }
}
