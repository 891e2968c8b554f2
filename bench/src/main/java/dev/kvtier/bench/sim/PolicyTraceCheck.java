package dev.kvtier.bench.sim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.kvtier.bench.trace.Belady;
import dev.kvtier.bench.trace.TraceGenerator;
import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;

/**
 * The policy comparison of issue 12 through the store alone: generated traces played block by block against
 * a {@link TieredStore} with the cache's eviction logic (a block on GPU is touched; any other is promoted or
 * registered on GPU after making room there, GPU victims go to CPU, CPU victims to disk, the requested block
 * is never its own victim), and each policy's GPU hits divided by the offline optimum's ({@link Belady}).
 * No bytes move, so a whole grid of traces, budgets and policies takes seconds; the simulator's trace mode
 * ({@code --workload trace --sweep}) plays the same references through the real cache and gives the same
 * hit counts (single thread, no failures), which is how this harness was checked.
 *
 * <p>Usage: {@code java -cp benchmarks.jar dev.kvtier.bench.sim.PolicyTraceCheck [requests] [seeds] [policies]
 * [interleave]} with {@code seeds} and {@code policies} comma-separated (defaults 3000, 42, every built-in
 * policy, 1). With {@code interleave} R above 1, R requests are in flight at once and their references are
 * played round-robin, one from each in turn (a new request takes the place of a finished one), as concurrent
 * requests would interleave in a cache; the optimum is computed for that played order.
 * Policies are the library's built-in names or {@code retain-F} ({@link RetainingPolicy}, an experiment).
 * Prints one row per (trace, seed, GPU budget) with the optimum, for {@code chat} (played one request at a
 * time) the bound on any online policy's expected hits over the chat generator's draws, evaluated on this trace
 * ({@link DeadBlockOracleBound#chatPosteriorBound}; not a bound on this trace's hits) and its ratio to
 * the optimum, and each policy's share of references on GPU, its ratio to the optimum and its ratio to LRU;
 * then per policy the worst ratio to the optimum and to LRU, and how many cells reach 2/3 of the optimum.
 */
public final class PolicyTraceCheck {
    /** The simulator's default block size; every block is one such segment. */
    private static final long BLOCK_BYTES = 4096;
    private static final double[] GPU_SHARES = {0.02, 0.05, 0.10};
    private static final double CPU_SHARE = 0.10;

    private PolicyTraceCheck() {
    }

    public static void main(String[] args) {
        int requests = args.length > 0 ? Integer.parseInt(args[0]) : 3000;
        List<Long> seeds = new ArrayList<>();
        for (String s : (args.length > 1 ? args[1] : "42").split(",")) {
            seeds.add(Long.parseLong(s.strip()));
        }
        List<String> policies = List.of((args.length > 2 ? args[2]
                : "least-recently-used,least-accessed-first,lru-2,arc,s3-fifo,w-tinylfu,chain-s3-fifo,adaptive-s3-fifo,"
                + "adaptive-continuation-s3-fifo").split(","));
        int interleave = args.length > 3 ? Integer.parseInt(args[3]) : 1;
        Map<String, double[]> worst = new LinkedHashMap<>(); // policy -> {min / optimum, min / LRU, cells >= 2/3, cells}
        StringBuilder header = new StringBuilder("| trace | seed | GPU | optimum | online bound |");
        for (String p : policies) {
            header.append(' ').append(p).append(" |");
            worst.put(p, new double[] {Double.MAX_VALUE, Double.MAX_VALUE, 0, 0});
        }
        System.out.println(header);
        for (TraceGenerator.Kind kind : TraceGenerator.Kind.values()) {
            for (long seed : seeds) {
                BlockTrace trace = BlockTrace.of(TraceGenerator.generate(kind, requests, seed), kind.optionValue());
                int[] order = playOrder(trace, interleave);
                int[] sequence = new int[order.length];
                for (int i = 0; i < order.length; i++) {
                    sequence[i] = trace.block(order[i]);
                }
                for (double share : GPU_SHARES) {
                    int gpuBlocks = (int) (share * trace.uniqueBlocks());
                    int cpuBlocks = (int) (CPU_SHARE * trace.uniqueBlocks());
                    double optimum = (double) Belady.hits(sequence, gpuBlocks) / sequence.length;
                    // Any online policy's expected ceiling over the generator's draws, where one is known (chat:
                    // DeadBlockOracleBound#chatPosteriorBound); a policy can exceed it on one trace.
                    String bound = "-";
                    if (kind == TraceGenerator.Kind.CHAT && interleave == 1) {
                        double ceiling = DeadBlockOracleBound.chatPosteriorBound(trace,
                                TraceGenerator.chatDraws(requests, seed), gpuBlocks) / sequence.length;
                        bound = String.format(Locale.ROOT, "%.1f (%.3f)", 100 * ceiling, ceiling / optimum);
                    }
                    StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "| %s | %d | %.0f%% | %.1f | %s |",
                            kind.optionValue(), seed, share * 100, optimum * 100, bound));
                    double lru = Double.NaN;
                    for (String p : policies) {
                        double hits = play(policy(p.strip()), trace, order, gpuBlocks, cpuBlocks);
                        if (Double.isNaN(lru)) {
                            lru = play(DemotionPolicy.leastRecentlyUsed(), trace, order, gpuBlocks, cpuBlocks);
                        }
                        double[] w = worst.get(p);
                        w[0] = Math.min(w[0], hits / optimum);
                        w[1] = Math.min(w[1], hits / lru);
                        w[2] += hits / optimum >= 2.0 / 3 ? 1 : 0;
                        w[3]++;
                        row.append(String.format(Locale.ROOT, " %.1f (%.3f, %.3f) |", hits * 100, hits / optimum, hits / lru));
                    }
                    System.out.println(row);
                }
            }
        }
        worst.forEach((p, w) -> System.out.printf(Locale.ROOT, "%s: worst / optimum %.3f, worst / LRU %.3f, %d of %d cells >= 2/3%n",
                p, w[0], w[1], (int) w[2], (int) w[3]));
    }

    /** The built-in policy called {@code name}, or the bench's experimental {@link RetainingPolicy} ({@code retain-F}). */
    static DemotionPolicy policy(String name) {
        return RetainingPolicy.named(name).orElseGet(() -> DemotionPolicy.named(name));
    }

    /**
     * The reference indices of {@code trace} in play order: request by request, or with {@code interleave}
     * requests in flight, one reference of each in turn.
     */
    static int[] playOrder(BlockTrace trace, int interleave) {
        int[] order = new int[trace.references()];
        int[] next = new int[interleave];
        int[] end = new int[interleave];
        int started = 0;
        int played = 0;
        for (int slot = 0; slot < interleave; slot++) {
            next[slot] = end[slot] = 0;
        }
        while (played < order.length) {
            for (int slot = 0; slot < interleave; slot++) {
                while (next[slot] == end[slot] && started < trace.requests()) {
                    next[slot] = trace.start(started);
                    end[slot] = trace.end(started);
                    started++;
                }
                if (next[slot] < end[slot]) {
                    order[played++] = next[slot]++;
                }
            }
        }
        return order;
    }

    /** Plays {@code trace} in {@code order} through a store with {@code policy}; returns the share of references found on GPU. */
    static double play(DemotionPolicy policy, BlockTrace trace, int[] order, int gpuBlocks, int cpuBlocks) {
        TieredStore store = new TieredStore(gpuBlocks * BLOCK_BYTES, cpuBlocks * BLOCK_BYTES, policy);
        String[] keys = new String[trace.uniqueBlocks()];
        long hits = 0;
        for (int i : order) {
            int block = trace.block(i);
            String key = keys[block];
            if (key == null) {
                key = keys[block] = "b" + block;
                makeRoom(store, Tier.GPU, key);
                long start = (long) trace.depth(block) * BlockTrace.tokensPerBlock();
                if (!store.register(SegmentMeta.of(key, PositionRange.of(start, start + BlockTrace.tokensPerBlock()),
                        BLOCK_BYTES), Tier.GPU)) {
                    store.register(SegmentMeta.of(key, PositionRange.of(start, start + BlockTrace.tokensPerBlock()),
                            BLOCK_BYTES), Tier.DISK); // a GPU of zero blocks
                }
                continue;
            }
            Tier tier = store.get(key).orElseThrow().tier();
            if (tier == Tier.GPU) {
                hits++;
                store.touch(key);
                continue;
            }
            makeRoom(store, Tier.GPU, key);
            if (store.promote(key, Tier.GPU).isEmpty()) {
                store.touch(key);
            }
        }
        return (double) hits / trace.references();
    }

    /** Frees one block on {@code tier} as the cache's room maker would: GPU victims go to CPU, CPU victims to disk. */
    static void makeRoom(TieredStore store, Tier tier, String exclude) {
        for (String victim : store.candidatesForDemotion(tier, BLOCK_BYTES - free(store, tier))) {
            if (victim.equals(exclude)) {
                continue;
            }
            if (tier == Tier.GPU) {
                if (store.cpuBudget() >= BLOCK_BYTES) {
                    makeRoom(store, Tier.CPU, victim);
                }
                if (store.demote(victim, Tier.CPU).isEmpty()) {
                    store.demote(victim, Tier.DISK).orElseThrow();
                }
            } else {
                store.demote(victim, Tier.DISK).orElseThrow();
            }
            if (free(store, tier) >= BLOCK_BYTES) {
                return;
            }
        }
    }

    private static long free(TieredStore store, Tier tier) {
        return tier == Tier.GPU ? store.gpuFree() : store.cpuFree();
    }
}
