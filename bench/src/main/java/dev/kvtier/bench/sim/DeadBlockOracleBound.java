package dev.kvtier.bench.sim;

import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Locale;

import dev.kvtier.bench.trace.Belady;
import dev.kvtier.bench.trace.TraceGenerator;

/**
 * How far a future-blind policy can get on a generated trace: LRU, and LRU told by an oracle which blocks
 * are never used again (those are evicted first, oldest first), each divided by the offline optimum
 * ({@link Belady}), for one GPU cache of 2, 5 and 10% of the unique blocks. No online policy knows which
 * blocks are dead; the second column bounds what predicting it (as the chain-tail rule of the default policy
 * does for partial last blocks) can add to LRU. Usage: {@code java -cp benchmarks.jar
 * dev.kvtier.bench.sim.DeadBlockOracleBound [kinds] [requests] [seeds]} (defaults chat, 3000,10000, 1,2,3,42).
 */
public final class DeadBlockOracleBound {
    private DeadBlockOracleBound() {
    }

    public static void main(String[] args) {
        String kinds = args.length > 0 ? args[0] : "chat";
        String sizes = args.length > 1 ? args[1] : "3000,10000";
        String seeds = args.length > 2 ? args[2] : "1,2,3,42";
        for (String kind : kinds.split(",")) {
            for (String size : sizes.split(",")) {
                for (String seed : seeds.split(",")) {
                    BlockTrace trace = BlockTrace.of(TraceGenerator.generate(TraceGenerator.Kind.of(kind).orElseThrow(),
                            Integer.parseInt(size), Long.parseLong(seed)), kind);
                    int[] sequence = trace.referenceSequence(trace.references());
                    StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "| %s | %s | %s |", kind, size, seed));
                    for (double share : new double[] {0.02, 0.05, 0.10}) {
                        int capacity = (int) (share * trace.uniqueBlocks());
                        double optimum = Belady.hits(sequence, capacity);
                        row.append(String.format(Locale.ROOT, " %.2f / %.2f |", lruHits(sequence, trace.uniqueBlocks(),
                                capacity, false) / optimum, lruHits(sequence, trace.uniqueBlocks(), capacity, true) / optimum));
                    }
                    System.out.println(row);
                }
            }
        }
    }

    /** Hits of an LRU cache of {@code capacity} blocks; with {@code deadFirst}, blocks never used again go first. */
    static long lruHits(int[] sequence, int uniqueBlocks, int capacity, boolean deadFirst) {
        int[] usesLeft = new int[uniqueBlocks];
        for (int block : sequence) {
            usesLeft[block]++;
        }
        LinkedHashSet<Integer> live = new LinkedHashSet<>();
        LinkedHashSet<Integer> dead = new LinkedHashSet<>();
        long hits = 0;
        for (int block : sequence) {
            usesLeft[block]--;
            if (live.remove(block) || dead.remove(block)) {
                hits++;
            } else if (live.size() + dead.size() >= capacity) {
                Iterator<Integer> oldest = (dead.isEmpty() ? live : dead).iterator();
                oldest.next();
                oldest.remove();
            }
            if (deadFirst && usesLeft[block] == 0) {
                dead.add(block);
            } else {
                live.add(block);
            }
        }
        return hits;
    }
}
