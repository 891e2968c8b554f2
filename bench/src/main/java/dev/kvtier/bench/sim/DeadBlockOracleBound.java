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
 * does for partial last blocks) can add to LRU. For the {@code chat} kind a third figure: {@link #chatOnlineBound},
 * an upper bound on the hits of <em>any</em> online policy, also divided by the optimum.
 * Usage: {@code java -cp benchmarks.jar dev.kvtier.bench.sim.DeadBlockOracleBound [kinds] [requests] [seeds]}
 * (defaults chat, 3000,10000, 1,2,3,42). Prints per GPU budget "LRU / LRU with the oracle [/ online bound]".
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
                        row.append(String.format(Locale.ROOT, " %.2f / %.2f", lruHits(sequence, trace.uniqueBlocks(),
                                capacity, false) / optimum, lruHits(sequence, trace.uniqueBlocks(), capacity, true) / optimum));
                        if (kind.equals(TraceGenerator.Kind.CHAT.optionValue())) {
                            row.append(String.format(Locale.ROOT, " / %.2f", chatOnlineBound(trace, capacity) / optimum));
                        }
                        row.append(" |");
                    }
                    System.out.println(row);
                }
            }
        }
    }

    /**
     * An upper bound on the GPU hits of any online policy (one that does not know the future; demand
     * admission, no prefetch) with {@code capacity} blocks on a {@link TraceGenerator.Kind#CHAT} trace.
     *
     * <p>Why it holds. Call a block <em>private</em> when only one conversation references it (the
     * conversation's own turns) and <em>shared</em> otherwise (the system prompts' blocks). Each request of
     * that generator draws one of {@value TraceGenerator#CHAT_SLOTS} slots uniformly and independently of
     * everything before it, and references, besides shared blocks and blocks it creates, only private blocks of
     * the conversation in that slot, each once. Whatever an online policy holds when a request starts, it
     * chose without knowing the draw, and the request can hit only the held private blocks of the drawn
     * slot's conversation: at most {@code capacity / CHAT_SLOTS} hits in expectation. So expected hits on
     * private blocks are at most {@code requests x capacity / CHAT_SLOTS}, and hits on shared blocks at most
     * their references after the first. Which blocks are shared is not written in the trace; a block counts as
     * shared (which can only raise the bound) when it is referenced more often than a conversation has turns
     * ({@value TraceGenerator#CHAT_MAX_TURNS}), or when it lies on the path to a block where chains branch:
     * a private block's later blocks form one chain (each turn keeps its full blocks and replaces only the
     * partial last one, which is referenced once), so a block whose reused descendants branch is a prompt's.
     * It bounds the expectation over the generator's draws, evaluated on one trace; the private term is
     * taken whole for every request, also those that start a conversation (which hit nothing private), so it
     * is loose rather than tight.
     */
    static double chatOnlineBound(BlockTrace trace, int capacity) {
        int[] sequence = trace.referenceSequence(trace.references());
        int unique = trace.uniqueBlocks();
        int[] references = new int[unique];
        for (int block : sequence) {
            references[block]++;
        }
        // Each block's parent (the block before it in any request: ids name prefixes) and its reused children.
        int[] parent = new int[unique];
        java.util.Arrays.fill(parent, -1);
        int[] reusedChildren = new int[unique];
        for (int q = 0; q < trace.requests(); q++) {
            for (int i = trace.start(q) + 1; i < trace.end(q); i++) {
                int child = trace.block(i);
                if (parent[child] == -1 && trace.depth(child) > 0) {
                    parent[child] = trace.block(i - 1);
                    if (references[child] > 1) {
                        reusedChildren[parent[child]]++;
                    }
                }
            }
        }
        boolean[] shared = new boolean[unique];
        for (int block = 0; block < unique; block++) {
            if (references[block] > TraceGenerator.CHAT_MAX_TURNS || reusedChildren[block] > 1) {
                for (int b = block; b != -1 && !shared[b]; b = parent[b]) {
                    shared[b] = true;
                }
            }
        }
        long sharedReuses = 0;
        long privateReuses = 0;
        for (int block = 0; block < unique; block++) {
            if (shared[block]) {
                sharedReuses += references[block] - 1;
            } else {
                privateReuses += references[block] - 1;
            }
        }
        return sharedReuses + Math.min(privateReuses, (double) trace.requests() * capacity / TraceGenerator.CHAT_SLOTS);
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
