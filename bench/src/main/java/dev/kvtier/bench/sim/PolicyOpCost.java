package dev.kvtier.bench.sim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;

/**
 * What one block reference costs with a given policy as the GPU tier grows: the O(1) check of issue 12. A
 * {@link TieredStore} with room for N blocks on GPU and N on CPU plays a reference stream over 2N keys
 * (half of the references to a hot quarter of the keys, the rest uniform, drawn from a fixed seed) exactly as
 * {@link PolicyTraceCheck} plays a trace: a block on GPU is touched; any other is promoted or registered
 * after making room (one candidates query, the victim demoted to CPU after making room there, CPU victims to
 * disk). So each reference costs the store's lookups and, on a miss, the policy's candidates query and two or
 * three moves, each an event for the policy. The time per reference is printed for N = 10^3, 10^5 and 10^6
 * per policy, with the GPU hit rate (the share of references that cost no query); policies are interleaved
 * round by round (A B A B ...) so they see the same machine load, and the median round is printed. If the
 * policy is O(1) per operation, the time per reference grows with N only by what memory (cache misses over
 * a larger table) adds, as it does for LRU's bucket index, measured beside it.
 *
 * <p>Usage: {@code java -Xmx4g -cp benchmarks.jar dev.kvtier.bench.sim.PolicyOpCost [policies] [sizes]
 * [references per round] [rounds]} (defaults adaptive-s3-fifo,chain-s3-fifo,least-recently-used, 1000,100000,1000000,
 * 2000000, 3).
 */
public final class PolicyOpCost {
    private static final long BLOCK = 4096;

    private PolicyOpCost() {
    }

    public static void main(String[] args) {
        String[] policies = (args.length > 0 ? args[0] : "adaptive-s3-fifo,chain-s3-fifo,least-recently-used").split(",");
        String[] sizes = (args.length > 1 ? args[1] : "1000,100000,1000000").split(",");
        int references = args.length > 2 ? Integer.parseInt(args[2]) : 2_000_000;
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        System.out.println("| policy | GPU blocks | ns per reference (median of " + rounds + " rounds) | GPU hits | rounds, ns |");
        for (String size : sizes) {
            int n = Integer.parseInt(size.strip());
            int[] stream = stream(n, references);
            String[] keys = new String[2 * n];
            for (int k = 0; k < keys.length; k++) {
                keys[k] = "b" + k;
            }
            double[][] nanos = new double[policies.length][rounds];
            double[] hits = new double[policies.length];
            for (int round = 0; round < rounds; round++) {
                for (int p = 0; p < policies.length; p++) {
                    TieredStore store = new TieredStore(n * BLOCK, n * BLOCK, PolicyTraceCheck.policy(policies[p].strip()));
                    play(store, keys, stream, 0, stream.length / 4); // warm: fill the tiers, let the JIT compile
                    long start = System.nanoTime();
                    long h = play(store, keys, stream, stream.length / 4, stream.length);
                    nanos[p][round] = (double) (System.nanoTime() - start) / (stream.length - stream.length / 4);
                    hits[p] = (double) h / (stream.length - stream.length / 4);
                }
            }
            for (int p = 0; p < policies.length; p++) {
                double[] sorted = nanos[p].clone();
                Arrays.sort(sorted);
                List<String> each = new ArrayList<>();
                for (double x : nanos[p]) {
                    each.add(String.format(Locale.ROOT, "%.0f", x));
                }
                System.out.printf(Locale.ROOT, "| %s | %d | %.0f | %.1f%% | %s |%n", policies[p].strip(), n,
                        sorted[rounds / 2], 100 * hits[p], String.join(", ", each));
            }
        }
    }

    /** Half of the references to the hot quarter of the 2n keys, the rest uniform over all of them. */
    private static int[] stream(int n, int references) {
        SplittableRandom random = new SplittableRandom(12);
        int[] out = new int[references];
        for (int i = 0; i < references; i++) {
            out[i] = random.nextBoolean() ? random.nextInt(Math.max(1, n / 2)) : random.nextInt(2 * n);
        }
        return out;
    }

    private static long play(TieredStore store, String[] keys, int[] stream, int from, int to) {
        long hits = 0;
        for (int i = from; i < to; i++) {
            String key = keys[stream[i]];
            Tier tier = store.tierOf(key);
            if (tier == Tier.GPU) {
                hits++;
                store.touch(key);
            } else if (tier == null) {
                PolicyTraceCheck.makeRoom(store, Tier.GPU, key);
                store.register(SegmentMeta.of(key, PositionRange.of(0, 512), BLOCK), Tier.GPU);
            } else {
                PolicyTraceCheck.makeRoom(store, Tier.GPU, key);
                store.promote(key, Tier.GPU).orElseThrow();
            }
        }
        return hits;
    }
}
