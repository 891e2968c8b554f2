package dev.kvtier.inference;

import dev.kvtier.Backend;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockHasher;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.prefix.PrefixLayer;
import dev.kvtier.prefix.PrefixPin;
import dev.kvtier.prefix.PrefixStream;
import dev.kvtier.store.Tier;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;

/**
 * The decoders compared on generated multi-turn chat and document QA, host backend: recompute everything (the
 * reference decoder, no cache), a GPU-only cache (CPU budget 0, a DISK tier smaller than a block: kvtier has no
 * drop-on-evict mode; a block store that finds the GPU tier full of blocks that can go nowhere is refused at once) and
 * kvtier with offload (CPU 10% of the working set, disk unbounded), at GPU budgets given as shares of
 * the working set (the bytes of every distinct full block of the workload). Every request's tokens and logits
 * are checked against the recompute run; recompute is run again beside each budget's two modes (interleaved), and
 * each budget's ratios are taken against that run. Prints a table (time to first token p50/p99/mean, tokens/s, prefill
 * tokens saved, bytes restored per tier, identical outputs), the restore's and the layer stream's cost per block
 * beside prefill's cost per block, and writes {@code ttft.svg} (mean TTFT against GPU budget, one line per mode) and {@code summary.txt}
 * into the output directory. Exits with status 1 when any output differs from the recompute run's.
 *
 * <p>Arguments, {@code name=value}: {@code out} (directory, default {@code target/decoder-comparison}),
 * {@code size} ({@code tiny} or {@code small}, default small), {@code users} (chat users, default 12),
 * {@code turns} (default 3), {@code budgets} (percent, comma-separated, default {@code 2,5,10,25,100}).
 */
public final class DecoderComparison {
    private DecoderComparison() {
    }

    /** Runs the comparison; see the class comment for the arguments. */
    public static void main(String[] args) throws IOException {
        Map<String, String> options = new LinkedHashMap<>(Map.of("out", "target/decoder-comparison", "size", "small",
                "users", "12", "turns", "3", "budgets", "2,5,10,25,100"));
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq < 1 || !options.containsKey(arg.substring(0, eq))) {
                throw new IllegalArgumentException("unknown argument '" + arg + "': expected one of " + options.keySet()
                        + " as name=value");
            }
            options.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        LlamaConfig size = switch (options.get("size")) {
            case "tiny" -> LlamaConfig.TINY;
            case "small" -> LlamaConfig.SMALL;
            default -> throw new IllegalArgumentException("size must be tiny or small, was " + options.get("size"));
        };
        int users = Integer.parseInt(options.get("users"));
        int turns = Integer.parseInt(options.get("turns"));
        int[] budgets = Arrays.stream(options.get("budgets").split(",")).mapToInt(Integer::parseInt).toArray();
        Path out = Path.of(options.get("out"));
        Files.createDirectories(out);

        LlamaModel model = new LlamaModel(LlamaWeights.generate(size, 42));
        Map<String, ChatWorkload> workloads = new LinkedHashMap<>();
        workloads.put("multi-turn chat", ChatWorkload.chat(1, 4, users, turns, 160, 32, 12));
        workloads.put("document QA", ChatWorkload.documentQa(2, 2, Math.max(2, users / 2), 2, 400, 20, 8));
        StringBuilder summary = new StringBuilder();
        summary.append(String.format(Locale.ROOT, "decoder comparison: model %s (%,d parameters), host backend, %d tokens per block, "
                + "GPU budgets %s%% of each workload's working set; %d available processors%n", options.get("size"),
                size.parameterCount(), KvTierDecoder.DEFAULT_TOKENS_PER_BLOCK, options.get("budgets"),
                Runtime.getRuntime().availableProcessors()));
        Map<String, Map<String, double[]>> chartByWorkload = new LinkedHashMap<>();
        System.out.print(summary);
        for (Map.Entry<String, ChatWorkload> entry : workloads.entrySet()) {
            int printed = summary.length();
            chartByWorkload.put(entry.getKey(), compare(entry.getKey(), entry.getValue(), model, budgets, summary));
            System.out.print(summary.substring(printed));
        }
        int printed = summary.length();
        summary.append(restoreBesidePrefill(model));
        System.out.print(summary.substring(printed));
        Files.writeString(out.resolve("summary.txt"), summary);
        Files.writeString(out.resolve("ttft.svg"), chart(chartByWorkload.get("multi-turn chat"), budgets,
                "Mean time to first token, multi-turn chat (" + options.get("size") + ", host backend)"));
        System.out.println("wrote " + out.resolve("summary.txt") + " and " + out.resolve("ttft.svg"));
        if (differingOutputs > 0) {
            System.err.println("[decoder comparison] FAILED: " + differingOutputs + " requests differ from the recompute run");
            System.exit(1);
        }
    }

    /** Requests whose tokens or logits differ from the recompute run's (the goal is none). */
    private static int differingOutputs;

    /** One line of the table: a mode at a budget. */
    private record Row(String mode, int budgetPercent, double[] ttftMillis, double tokensPerSecond, long cachedTokens,
            long promptTokens, Map<Tier, Long> restoredBytes, int identical, int requests, long restoreFailures) {
    }

    private static Map<String, double[]> compare(String name, ChatWorkload workload, LlamaModel model, int[] budgets,
            StringBuilder summary) {
        ReferenceDecoder reference = new ReferenceDecoder(model);
        Map<String, Generation> expected = new LinkedHashMap<>();
        List<Double> recomputeTtft = new ArrayList<>();
        long[] recomputeTokens = new long[2];
        Set<BlockHash> distinct = new HashSet<>();
        BlockHasher hasher = new BlockHasher();
        progress(name + ": warm-up (recompute everything, not measured)");
        workload.run(reference::generate, (user, turn, prompt, generation) -> { });
        progress(name + ": recompute everything");
        long[] decode = new long[2];
        workload.run(reference::generate, (user, turn, prompt, generation) -> {
            decode[0] += generation.tokens().length - 1;
            decode[1] += generation.totalNanos() - generation.timeToFirstTokenNanos();
            expected.put(Arrays.toString(prompt), generation);
            recomputeTtft.add(generation.timeToFirstTokenNanos() / 1e6);
            recomputeTokens[0] += generation.tokens().length;
            recomputeTokens[1] += generation.totalNanos();
            distinct.addAll(hasher.chain(ChatWorkload.concat(prompt, generation.tokens()), KvTierDecoder.DEFAULT_TOKENS_PER_BLOCK));
        });
        long blockBytes = KvTierDecoder.layoutFor(model.config(), KvTierDecoder.DEFAULT_TOKENS_PER_BLOCK).bytesPerBlock();
        long workingSet = distinct.size() * blockBytes;
        List<Row> rows = new ArrayList<>();
        double[] recompute = toArray(recomputeTtft);
        rows.add(new Row("recompute", 100, recompute, recomputeTokens[0] / (recomputeTokens[1] / 1e9), 0,
                0, Map.of(), workload.requestCount(), workload.requestCount(), 0));
        Map<String, double[]> chart = new LinkedHashMap<>();
        chart.put("recompute everything", new double[budgets.length]);
        chart.put("GPU-only cache", new double[budgets.length]);
        chart.put("kvtier with offload", new double[budgets.length]);
        StringBuilder ratios = new StringBuilder();
        for (int i = 0; i < budgets.length; i++) {
            // The baseline again beside each budget's modes (interleaved), so that a change in the machine's load
            // during the run moves the baseline with them.
            progress(name + ": GPU " + budgets[i] + "%, recompute everything (baseline beside this budget)");
            List<Double> againTtft = new ArrayList<>();
            long[] againTokens = new long[2];
            workload.run(reference::generate, (user, turn, prompt, generation) -> {
                againTtft.add(generation.timeToFirstTokenNanos() / 1e6);
                againTokens[0] += generation.tokens().length;
                againTokens[1] += generation.totalNanos();
            });
            Row baseline = new Row("recompute", budgets[i], toArray(againTtft), againTokens[0] / (againTokens[1] / 1e9), 0,
                    0, Map.of(), workload.requestCount(), workload.requestCount(), 0);
            rows.add(baseline);
            chart.get("recompute everything")[i] = mean(baseline.ttftMillis());
            long gpu = pages(workingSet * budgets[i] / 100, blockBytes);
            progress(name + ": GPU " + budgets[i] + "% (" + gpu / 1024 + " KiB), GPU-only cache");
            // kvtier has no drop-on-evict mode: no CPU tier and a DISK tier smaller than a block. Stores that find
            // no room cost time there (see the summary's note), so read this mode beside recompute too.
            Row gpuOnly = serve("GPU-only", budgets[i], workload, model, expected, b -> b.gpuBudgetBytes(gpu).cpuBudgetBytes(0)
                    .diskBudgetBytes(4096), blockBytes);
            progress(name + ": GPU " + budgets[i] + "%, kvtier with offload");
            Row offload = serve("kvtier", budgets[i], workload, model, expected, b -> b.gpuBudgetBytes(gpu)
                    .cpuBudgetBytes(pages(workingSet / 10, blockBytes)), blockBytes);
            rows.add(gpuOnly);
            rows.add(offload);
            differingOutputs += gpuOnly.requests() - gpuOnly.identical() + offload.requests() - offload.identical();
            chart.get("GPU-only cache")[i] = mean(gpuOnly.ttftMillis());
            chart.get("kvtier with offload")[i] = mean(offload.ttftMillis());
            ratios.append(String.format(Locale.ROOT, "GPU %d%%: mean TTFT kvtier / recompute beside it = %.2f, GPU-only / "
                    + "kvtier = %.2f, GPU-only / recompute = %.2f%n", budgets[i], mean(offload.ttftMillis())
                    / mean(baseline.ttftMillis()), mean(gpuOnly.ttftMillis()) / mean(offload.ttftMillis()),
                    mean(gpuOnly.ttftMillis()) / mean(baseline.ttftMillis())));
        }
        summary.append(String.format(Locale.ROOT, "%n%s: %d conversations, %d requests, working set %d blocks (%,d bytes); "
                + "decode alone (reference): %.0f tokens/s%n", name, workload.conversations().size(), workload.requestCount(),
                distinct.size(), workingSet, decode[0] / (decode[1] / 1e9)));
        summary.append(String.format(Locale.ROOT, "%-10s %5s %9s %9s %9s %9s %12s %10s %12s %12s %9s %8s%n", "mode", "GPU%",
                "TTFT p50", "p99", "mean", "tok/s", "cached tok", "of prompt", "from CPU B", "from DISK B", "identical",
                "failed"));
        long totalPrompt = 0;
        for (Generation g : expected.values()) {
            totalPrompt += g.prefilledTokens();
        }
        for (Row row : rows) {
            summary.append(String.format(Locale.ROOT, "%-10s %5d %9.1f %9.1f %9.1f %9.1f %12d %9.1f%% %12d %12d %5d/%-3d %8d%n",
                    row.mode(), row.budgetPercent(), percentile(row.ttftMillis(), 50), percentile(row.ttftMillis(), 99),
                    mean(row.ttftMillis()), row.tokensPerSecond(), row.cachedTokens(),
                    100.0 * row.cachedTokens() / totalPrompt, row.restoredBytes().getOrDefault(Tier.CPU, 0L),
                    row.restoredBytes().getOrDefault(Tier.DISK, 0L), row.identical(), row.requests(), row.restoreFailures()));
        }
        summary.append("(TTFT in ms; recompute has no budget: its first row is the run that defines the expected outputs, the"
                + " others are run again beside each budget's modes; 'of prompt' = prompt tokens taken from the cache)\n");
        summary.append(ratios);
        return chart;
    }

    private static Row serve(String mode, int budget, ChatWorkload workload, LlamaModel model,
            Map<String, Generation> expected, java.util.function.UnaryOperator<KvTierConfig.Builder> budgets, long blockBytes) {
        KvTierConfig config = budgets.apply(KvTierConfig.builder().backend(Backend.HOST).pageSizeBytes(4096)).build();
        try (KvTierCache cache = KvTierCache.open(config)) {
            KvTierDecoder decoder = new KvTierDecoder(model, cache);
            List<Double> ttft = new ArrayList<>();
            long[] totals = new long[2];
            int[] identical = new int[1];
            BiFunction<int[], Integer, Generation> serve = decoder::generate;
            workload.run(serve, (user, turn, prompt, generation) -> {
                ttft.add(generation.timeToFirstTokenNanos() / 1e6);
                totals[0] += generation.tokens().length;
                totals[1] += generation.totalNanos();
                Generation want = expected.get(Arrays.toString(prompt));
                if (want != null && want.sameOutputAs(generation)) {
                    identical[0]++;
                }
            });
            KvTierDecoder.Counters counters = decoder.counters();
            Map<Tier, Long> restored = new LinkedHashMap<>();
            counters.restoredBlocksFrom().forEach((tier, n) -> restored.put(tier, n * blockBytes));
            return new Row(mode, budget, toArray(ttft), totals[0] / (totals[1] / 1e9), counters.cachedTokens(),
                    counters.cachedTokens() + counters.prefilledTokens(), restored, identical[0], workload.requestCount(),
                    counters.restoreFailures());
        }
    }

    /**
     * The CPU cost of restoring a block (CPU tier to the GPU tier of the host backend, a batched restore of 32
     * blocks, pinned and released) beside the cost of computing the same block (prefill of its 16 tokens at
     * positions 256..271), both measured here.
     */
    private static String restoreBesidePrefill(LlamaModel model) {
        int perBlock = KvTierDecoder.DEFAULT_TOKENS_PER_BLOCK;
        int chainBlocks = 32;
        long blockBytes = KvTierDecoder.layoutFor(model.config(), perBlock).bytesPerBlock();
        KvTierConfig config = KvTierConfig.builder().backend(Backend.HOST).pageSizeBytes(4096)
                .gpuBudgetBytes(2 * chainBlocks * blockBytes).cpuBudgetBytes(2 * chainBlocks * blockBytes).build();
        double restoreNanos;
        double streamNanos;
        try (KvTierCache cache = KvTierCache.open(config); Arena arena = Arena.ofConfined()) {
            KvTierDecoder decoder = new KvTierDecoder(model, cache);
            PrefixBlockCache blocks = decoder.blocks();
            int[] tokens = new int[chainBlocks * perBlock];
            Arrays.setAll(tokens, i -> 'a' + i % 26);
            List<BlockHash> chain = decoder.blockHashes(tokens);
            MemorySegment bytes = arena.allocate(chainBlocks * blockBytes);
            long best = Long.MAX_VALUE;
            for (int round = 0; round < 20; round++) {
                for (int i = chain.size() - 1; i >= 0; i--) {
                    blocks.removeBlock(chain.get(i));
                }
                blocks.storeBlocks(BlockHash.ROOT, chain, bytes, Tier.CPU);
                long start = System.nanoTime();
                try (PrefixPin pin = blocks.ensurePrefixResident(chain, Tier.GPU)) {
                    if (pin.size() != chainBlocks || pin.blocks().stream().anyMatch(b -> b.foundOn() != Tier.CPU)) {
                        throw new IllegalStateException("expected " + chainBlocks + " blocks restored from CPU, got " + pin);
                    }
                }
                best = Math.min(best, System.nanoTime() - start);
            }
            restoreNanos = (double) best / chainBlocks;
            // The stream a prefix larger than the GPU tier takes: every layer gathered into the staging slots, copied
            // into the request's own memory as the decoder does, and released.
            MemorySegment own = arena.allocate(chainBlocks * blockBytes);
            best = Long.MAX_VALUE;
            for (int round = 0; round < 20; round++) {
                for (int i = chain.size() - 1; i >= 0; i--) {
                    blocks.removeBlock(chain.get(i));
                }
                blocks.storeBlocks(BlockHash.ROOT, chain, bytes, Tier.CPU);
                long start = System.nanoTime();
                try (PrefixStream stream = blocks.streamPrefixByLayer(chain)) {
                    if (stream.size() != chainBlocks || stream.foundOn().stream().anyMatch(t -> t != Tier.CPU)) {
                        throw new IllegalStateException("expected " + chainBlocks + " blocks streamed from CPU, got " + stream);
                    }
                    for (int l = 0; l < stream.layers(); l++) {
                        PrefixLayer layer = stream.layer(l).get(30, TimeUnit.SECONDS);
                        long at = decoder.layout().layerOffsets(l)[0];
                        for (int b = 0; b < chainBlocks; b++) {
                            long to = b * blockBytes + at;
                            for (MemorySegment run : layer.pages(b)) {
                                MemorySegment.copy(run, 0, own, to, run.byteSize());
                                to += run.byteSize();
                            }
                        }
                        layer.release();
                    }
                } catch (InterruptedException | ExecutionException | TimeoutException e) {
                    throw new IllegalStateException("streaming the chain failed", e);
                }
                best = Math.min(best, System.nanoTime() - start);
            }
            streamNanos = (double) best / chainBlocks;
        }
        int from = 256;
        int[] tokens = new int[from + perBlock];
        Arrays.setAll(tokens, i -> 'a' + i % 26);
        ReferenceDecoderRows rows = new ReferenceDecoderRows(model.config(), tokens.length);
        model.forward(tokens, 0, from, rows, LlamaModel.LayerGate.OPEN);
        long best = Long.MAX_VALUE;
        for (int round = 0; round < 10; round++) {
            long start = System.nanoTime();
            model.forward(tokens, from, from + perBlock, rows, LlamaModel.LayerGate.OPEN);
            best = Math.min(best, System.nanoTime() - start);
        }
        return String.format(Locale.ROOT, "%nper block of %d tokens (%,d bytes): restore CPU->GPU %.1f us (best of 20 batched "
                + "restores of %d blocks), streamed by layer from CPU and copied into the request's memory %.1f us (best of "
                + "20 streams of %d blocks), prefill %.1f us (best of 10, positions %d..%d): restore/prefill = %.4f, "
                + "stream/prefill = %.4f%n",
                perBlock, blockBytes, restoreNanos / 1e3, chainBlocks, streamNanos / 1e3, chainBlocks, best / 1e3, from,
                from + perBlock - 1, restoreNanos / best, streamNanos / best);
    }

    /** Rows in heap arrays for the prefill timing above. */
    private static final class ReferenceDecoderRows implements KeyValueRows {
        private final MemorySegment[][] keys;
        private final MemorySegment[][] values;

        ReferenceDecoderRows(LlamaConfig config, int positions) {
            long rowBytes = (long) config.kvDim() * Float.BYTES;
            MemorySegment k = MemorySegment.ofArray(new float[config.layers() * positions * config.kvDim()]);
            MemorySegment v = MemorySegment.ofArray(new float[config.layers() * positions * config.kvDim()]);
            keys = new MemorySegment[config.layers()][positions];
            values = new MemorySegment[config.layers()][positions];
            for (int l = 0; l < config.layers(); l++) {
                for (int p = 0; p < positions; p++) {
                    keys[l][p] = k.asSlice(((long) l * positions + p) * rowBytes, rowBytes);
                    values[l][p] = v.asSlice(((long) l * positions + p) * rowBytes, rowBytes);
                }
            }
        }

        @Override
        public MemorySegment key(int layer, int position) {
            return keys[layer][position];
        }

        @Override
        public MemorySegment value(int layer, int position) {
            return values[layer][position];
        }
    }

    private static String chart(Map<String, double[]> lines, int[] budgets, String title) {
        int width = 640;
        int height = 400;
        int left = 70;
        int right = 190;
        int top = 40;
        int bottom = 50;
        double max = lines.values().stream().flatMapToDouble(Arrays::stream).max().orElse(1) * 1.1;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"12\">%n", width, height));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"20\" font-size=\"14\">%s</text>%n", left, title));
        int plotW = width - left - right;
        int plotH = height - top - bottom;
        svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>%n",
                left, top, plotW, plotH));
        for (int i = 0; i < budgets.length; i++) {
            double x = left + (budgets.length == 1 ? plotW / 2.0 : (double) i * plotW / (budgets.length - 1));
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d%%</text>%n", x,
                    top + plotH + 18, budgets[i]));
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">GPU budget (share of the working set; "
                + "points evenly spaced)</text>%n", left + plotW / 2, height - 10));
        for (int t = 0; t <= 4; t++) {
            double value = max * t / 4;
            double y = top + plotH - plotH * t / 4.0;
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f ms</text>%n", left - 6, y + 4, value));
        }
        String[] colours = {"#d62728", "#ff7f0e", "#1f77b4"};
        int line = 0;
        for (Map.Entry<String, double[]> entry : lines.entrySet()) {
            StringBuilder points = new StringBuilder();
            double[] values = entry.getValue();
            for (int i = 0; i < values.length; i++) {
                double x = left + (values.length == 1 ? plotW / 2.0 : (double) i * plotW / (values.length - 1));
                double y = top + plotH - plotH * values[i] / max;
                points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
            }
            String colour = colours[line % colours.length];
            svg.append(String.format(Locale.ROOT, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>%n",
                    points.toString().trim(), colour));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>%n", left + plotW + 10,
                    top + 20 + 18 * line, colour, entry.getKey()));
            line++;
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static long pages(long bytes, long blockBytes) {
        return Math.max(blockBytes, (bytes + 4095) / 4096 * 4096);
    }

    private static void progress(String what) {
        System.err.println("[decoder comparison] " + what);
    }

    private static double[] toArray(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).toArray();
    }

    private static double mean(double[] values) {
        return Arrays.stream(values).average().orElse(0);
    }

    private static double percentile(double[] values, int percent) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int index = (int) Math.ceil(percent / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }
}
