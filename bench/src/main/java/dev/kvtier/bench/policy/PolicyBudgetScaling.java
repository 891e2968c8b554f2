package dev.kvtier.bench.policy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import dev.kvtier.bench.sim.BlockTrace;
import dev.kvtier.bench.trace.Belady;
import dev.kvtier.bench.trace.TraceGenerator;
import dev.kvtier.store.DemotionPolicy;

/**
 * Why a policy's ratio to the optimum depends on the trace's length: one generated trace kind at 3,000,
 * 10,000 and 20,000 requests, with GPU budgets both as shares of the trace's unique blocks (2, 5, 10%: what
 * {@link PolicyTraceCheck} uses, so a longer trace gets more blocks) and as fixed block counts, and for each
 * the policy's and LRU's ratio to the optimum over the whole trace and over its second half alone (a cold
 * start would show as a lower whole-trace ratio). The second-half ratio is (hits of the whole trace minus hits
 * of its first half, each player's own) over the same difference for the optimum; the policy's first-half
 * hits are exact (it is online), the optimum's are those of the optimum for the first half alone, which is
 * at least what the whole trace's optimum has there, so the figure is, if anything, generous to the policy.
 * Usage: {@code java -cp benchmarks.jar dev.kvtier.bench.policy.PolicyBudgetScaling [kind] [seed] [policy]}
 * (defaults chat, 42, the default policy).
 */
public final class PolicyBudgetScaling {
    private PolicyBudgetScaling() {
    }

    public static void main(String[] args) {
        String kind = args.length > 0 ? args[0] : "chat";
        long seed = args.length > 1 ? Long.parseLong(args[1]) : 42;
        String policy = args.length > 2 ? args[2] : DemotionPolicy.defaultPolicy().name();
        System.out.println("| requests | unique blocks | GPU blocks | share of unique | optimum | " + policy
                + " / optimum | LRU / optimum | second half: optimum | second half: " + policy + " / optimum |");
        for (int requests : new int[] {3000, 10000, 20000}) {
            BlockTrace trace = BlockTrace.of(TraceGenerator.generate(TraceGenerator.Kind.of(kind).orElseThrow(
                    () -> new IllegalArgumentException("no trace kind " + kind)), requests, seed), kind);
            int[] sequence = trace.referenceSequence(trace.references());
            int half = trace.referencesOfFirst(requests / 2);
            int[] firstHalf = Arrays.copyOf(sequence, half);
            int[] order = PolicyTraceCheck.playOrder(trace, 1);
            int[] orderOfFirstHalf = Arrays.copyOf(order, half);
            List<Integer> budgets = new ArrayList<>();
            for (double share : new double[] {0.02, 0.05, 0.10}) {
                budgets.add((int) (share * trace.uniqueBlocks()));
            }
            budgets.addAll(List.of(200, 500, 1000, 2000, 4000));
            int cpu = (int) (0.10 * trace.uniqueBlocks());
            for (int gpu : budgets) {
                double optimum = Belady.hits(sequence, gpu);
                double optimumFirst = Belady.hits(firstHalf, gpu);
                double hits = PolicyTraceCheck.play(PolicyTraceCheck.policy(policy), trace, order, gpu, cpu) * trace.references();
                double hitsFirst = PolicyTraceCheck.play(PolicyTraceCheck.policy(policy), trace, orderOfFirstHalf, gpu, cpu)
                        * trace.references();
                double lru = PolicyTraceCheck.play(DemotionPolicy.leastRecentlyUsed(), trace, order, gpu, cpu) * trace.references();
                System.out.printf(Locale.ROOT, "| %d | %d | %d | %.1f%% | %.1f%% | %.3f | %.3f | %.1f%% | %.3f |%n",
                        requests, trace.uniqueBlocks(), gpu, 100.0 * gpu / trace.uniqueBlocks(), 100 * optimum / sequence.length,
                        hits / optimum, lru / optimum, 100 * (optimum - optimumFirst) / (sequence.length - half),
                        (hits - hitsFirst) / (optimum - optimumFirst));
            }
        }
    }
}
