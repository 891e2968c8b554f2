package dev.kvtier.bench.policy;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
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
 * <p>Usage: {@code java -Xmx4g -cp benchmarks.jar dev.kvtier.bench.policy.PolicyOpCost [policies] [sizes]
 * [references per round] [rounds]} (defaults adaptive-s3-fifo,chain-s3-fifo,least-recently-used, 1000,100000,1000000,
 * 2000000, 3).
 *
 * <p>{@code PolicyOpCost touch [policies] [sizes] [touches per round] [rounds]} instead measures the store's
 * {@code touch} alone (the JMH benchmark's operation) on a GPU tier of N segments, all resident, touched uniformly
 * at random, in <em>CPU time of the measuring thread</em> per touch (median of the rounds after 3 warm-up rounds;
 * one policy per JVM is steadier, so run it once per policy and jar): on a machine shared with other work, wall
 * time (JMH's) varies by 2-5x between runs while a thread's CPU time varies by about 10%.
 */
public final class PolicyOpCost {
    private static final long BLOCK = 4096;

    private PolicyOpCost() {
    }

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("touch")) {
            touchCost(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
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

    private static void touchCost(String[] args) {
        String[] policies = (args.length > 0 ? args[0] : "adaptive-s3-fifo").split(",");
        String[] sizes = (args.length > 1 ? args[1] : "1000").split(",");
        int touches = args.length > 2 ? Integer.parseInt(args[2]) : 5_000_000;
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 7;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        System.out.println("| policy | GPU segments | CPU ns per touch (median of " + rounds + " rounds) | min | max |");
        for (String policy : policies) {
            for (String size : sizes) {
                int n = Integer.parseInt(size.strip());
                TieredStore store = new TieredStore(n * BLOCK, n * BLOCK, PolicyTraceCheck.policy(policy.strip()));
                String[] keys = new String[n];
                for (int k = 0; k < n; k++) {
                    keys[k] = "b" + k;
                    store.register(SegmentMeta.of(keys[k], PositionRange.of(512L * k, 512L * k + 512), BLOCK), Tier.GPU);
                }
                int[] order = new int[1 << 20];
                SplittableRandom random = new SplittableRandom(7);
                for (int i = 0; i < order.length; i++) {
                    order[i] = random.nextInt(n);
                }
                double[] nanos = new double[rounds];
                long touched = 0;
                for (int round = -3; round < rounds; round++) {
                    long start = threads.getCurrentThreadCpuTime();
                    for (int i = 0; i < touches; i++) {
                        touched += store.touch(keys[order[i & (order.length - 1)]]) ? 1 : 0;
                    }
                    if (round >= 0) {
                        nanos[round] = (double) (threads.getCurrentThreadCpuTime() - start) / touches;
                    }
                }
                if (touched != (long) (rounds + 3) * touches) {
                    throw new IllegalStateException("a touch found no segment: " + touched + " of " + (rounds + 3) * touches);
                }
                double[] sorted = nanos.clone();
                Arrays.sort(sorted);
                System.out.printf(Locale.ROOT, "| %s | %d | %.1f | %.1f | %.1f |%n", policy.strip(), n, sorted[rounds / 2],
                        sorted[0], sorted[rounds - 1]);
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
