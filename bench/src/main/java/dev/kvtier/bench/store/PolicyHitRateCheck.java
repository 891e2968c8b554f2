package dev.kvtier.bench.store;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A quick sanity check of the demotion policies through the store alone (no bytes, no simulator):
 * a synthetic request stream, each request makes room on GPU by demoting candidates (GPU to CPU,
 * CPU to disk) and then promotes or registers the requested segment; prints the share of requests
 * already on GPU per policy and GPU budget. Not the policy comparison of issue 12 (that is the
 * simulator's trace mode, with the offline optimum); a smoke test that each policy behaves like a
 * cache. Usage: {@code java -cp benchmarks.jar dev.kvtier.bench.store.PolicyHitRateCheck}.
 */
public final class PolicyHitRateCheck {
    private static final long SIZE = 1_000;

    private PolicyHitRateCheck() {
    }

    public static void main(String[] args) {
        int keys = 20_000;
        int requests = 400_000;
        System.out.println("workload,gpu share,policy,gpu hit %,ns per request");
        for (String workload : List.of("zipf-0.9", "zipf-0.9+scans", "loop+zipf")) {
            int[] stream = stream(workload, keys, requests);
            for (double share : new double[] {0.02, 0.05, 0.10}) {
                for (String name : List.of("least-recently-used", "least-accessed-first", "s3-fifo", "w-tinylfu")) {
                    long start = System.nanoTime();
                    double hitRate = play(DemotionPolicy.named(name), stream, (long) (share * keys) * SIZE,
                            (long) (2 * share * keys) * SIZE);
                    long ns = (System.nanoTime() - start) / stream.length;
                    System.out.printf("%s,%.0f%%,%s,%.1f,%d%n", workload, share * 100, name, hitRate * 100, ns);
                }
            }
        }
    }

    static int[] stream(String workload, int keys, int requests) {
        SplittableRandom random = new SplittableRandom(7);
        double[] cdf = new double[keys];
        double sum = 0;
        for (int i = 0; i < keys; i++) {
            sum += 1 / Math.pow(i + 1, 0.9);
            cdf[i] = sum;
        }
        int[] out = new int[requests];
        int scanNext = keys;
        for (int r = 0; r < requests; r++) {
            boolean special = switch (workload) {
                case "zipf-0.9+scans" -> (r / 2_000) % 5 == 4; // every fifth block of 2,000 is a scan of new keys
                case "loop+zipf" -> r % 2 == 0;                // half the requests loop over 3% of the keys
                default -> false;
            };
            if (special && workload.startsWith("zipf")) {
                out[r] = scanNext++;
            } else if (special) {
                out[r] = keys + (r / 2) % (keys * 3 / 100);
            } else {
                double u = random.nextDouble() * sum;
                int lo = 0;
                int hi = keys - 1;
                while (lo < hi) {
                    int mid = (lo + hi) >>> 1;
                    if (cdf[mid] < u) {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                out[r] = lo;
            }
        }
        return out;
    }

    static double play(DemotionPolicy policy, int[] stream, long gpuBudget, long cpuBudget) {
        TieredStore store = new TieredStore(gpuBudget, cpuBudget, policy);
        PositionRange positions = PositionRange.of(0, 512);
        long hits = 0;
        for (int key : stream) {
            String k = "b" + key;
            var meta = store.get(k);
            if (meta.isPresent() && meta.get().tier() == Tier.GPU) {
                store.touch(k);
                hits++;
                continue;
            }
            makeRoom(store, Tier.GPU, Tier.CPU, gpuBudget);
            if (meta.isPresent()) {
                store.promote(k, Tier.GPU).orElseThrow();
            } else {
                store.register(SegmentMeta.of(k, positions, SIZE), Tier.GPU);
            }
        }
        return (double) hits / stream.length;
    }

    private static void makeRoom(TieredStore store, Tier tier, Tier below, long budget) {
        long used = tier == Tier.GPU ? store.gpuUsed() : store.cpuUsed();
        if (budget - used >= SIZE) {
            return;
        }
        List<String> victims = new ArrayList<>(store.candidatesForDemotion(tier, SIZE - (budget - used)));
        for (String victim : victims) {
            if (below == Tier.CPU) {
                makeRoom(store, Tier.CPU, Tier.DISK, store.cpuBudget());
            }
            store.demote(victim, below).orElseThrow();
        }
    }
}
