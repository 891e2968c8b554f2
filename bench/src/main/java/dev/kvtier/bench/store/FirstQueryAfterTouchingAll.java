package dev.kvtier.bench.store;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;
import java.util.List;
import java.util.Locale;

/**
 * The worst case of a candidates query under the lazy and amortised schemes: {@code n} segments on GPU,
 * every one touched once, then one query for a few candidates (the query pays for the repairs or queue moves
 * the touches left behind), then a second query. Prints milliseconds per query for each policy named, three
 * repetitions, fresh store each. Not JMH: it times one call, the point being its size, not nanoseconds.
 * Usage: {@code java -cp benchmarks.jar dev.kvtier.bench.store.FirstQueryAfterTouchingAll [n] [policies]}.
 */
public final class FirstQueryAfterTouchingAll {
    private FirstQueryAfterTouchingAll() {
    }

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        List<String> policies = List.of((args.length > 1 ? args[1] : "chain-s3-fifo,least-accessed-first").split(","));
        String[] keys = new String[n];
        for (int i = 0; i < n; i++) {
            keys[i] = "seg-" + i;
        }
        PositionRange positions = PositionRange.of(0, 16);
        for (int repetition = 0; repetition < 3; repetition++) {
            for (String policy : policies) {
                TieredStore store = new TieredStore(n * 4_096L, n * 4_096L, DemotionPolicy.named(policy));
                for (String key : keys) {
                    store.register(SegmentMeta.of(key, positions, 4_096), Tier.GPU);
                }
                for (String key : keys) {
                    store.touch(key);
                }
                long t0 = System.nanoTime();
                int first = store.candidatesForDemotion(Tier.GPU, 4 * 4_096).size();
                long t1 = System.nanoTime();
                int second = store.candidatesForDemotion(Tier.GPU, 4 * 4_096).size();
                long t2 = System.nanoTime();
                System.out.printf(Locale.ROOT, "%s n=%d: first query %.1f ms (%d keys), second %.3f ms (%d keys)%n",
                        policy, n, (t1 - t0) / 1e6, first, (t2 - t1) / 1e6, second);
            }
        }
    }
}
