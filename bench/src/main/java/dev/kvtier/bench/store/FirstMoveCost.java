package dev.kvtier.bench.store;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The cost of a segment's <em>first</em> demote+promote against a repeated one: {@code n} segments registered on the
 * GPU tier, then every segment demoted to the CPU tier and promoted back once (pass 1: each a first move, so a
 * bucket-order policy files a new record on the CPU tier), then all again (pass 2: repeats, whose records already
 * exist). Keys are visited in registration order (each arrival's last use is the newest yet: it joins its bucket's
 * list at the tail) or in a random permutation (an arrival's last use is older than its bucket's tail: it joins the
 * bucket's tree). {@code StoreAbCheck} and JMH cannot show this split: their cycling key sequences mix first and
 * repeated moves in proportions that depend on the slice and iteration lengths (bench/RESULTS.md, Store).
 *
 * <p>Usage: {@code java -Xmx4g -cp benchmarks.jar dev.kvtier.bench.store.FirstMoveCost POLICY SEGMENTS ORDER}, ORDER
 * {@code registration} or {@code random}. Prints this thread's CPU time per pair for each pass. One store per JVM.
 * Not thread-safe (a command-line tool).
 */
public final class FirstMoveCost {
    private FirstMoveCost() {
    }

    public static void main(String[] args) {
        if (args.length != 3 || !(args[2].equals("registration") || args[2].equals("random"))) {
            System.err.println("usage: FirstMoveCost POLICY SEGMENTS registration|random");
            System.exit(2);
        }
        String policy = args[0];
        int segments = Integer.parseInt(args[1]);
        boolean randomOrder = args[2].equals("random");
        StoreWorkload workload = new StoreWorkload(segments, "random");
        TieredStore store = new TieredStore(workload.budget(), workload.budget(), DemotionPolicy.named(policy));
        for (String key : workload.keys) {
            store.register(SegmentMeta.of(key, PositionRange.of(0, 16), StoreWorkload.SEGMENT_BYTES), Tier.GPU);
        }
        int[] order = new int[segments];
        for (int i = 0; i < segments; i++) {
            order[i] = i;
        }
        if (randomOrder) {
            SplittableRandom random = new SplittableRandom(42);
            for (int i = segments - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                int swapped = order[i];
                order[i] = order[j];
                order[j] = swapped;
            }
        }
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        System.gc();
        for (int pass = 1; pass <= 2; pass++) {
            long moved = 0;
            long start = threads.getCurrentThreadCpuTime();
            for (int index : order) {
                String key = workload.keys[index];
                moved += store.demote(key, Tier.CPU).isPresent() ? 1 : 0;
                moved += store.promote(key, Tier.GPU).isPresent() ? 1 : 0;
            }
            long cpu = threads.getCurrentThreadCpuTime() - start;
            if (moved != 2L * segments) {
                throw new IllegalStateException("pass " + pass + " moved " + moved + " of " + 2L * segments);
            }
            System.out.printf(Locale.ROOT, "%s %d %s pass %d (%s): %.1f ns per demote+promote, thread CPU%n", policy,
                    segments, args[2], pass, pass == 1 ? "first moves" : "repeats", (double) cpu / segments);
        }
    }
}
