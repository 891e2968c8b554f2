package dev.kvtier.bench.cluster;

import dev.kvtier.bench.trace.TraceGenerator;
import dev.kvtier.bench.trace.TraceRequest;
import dev.kvtier.cluster.ClusterPublisher;
import dev.kvtier.cluster.ClusterRouter;
import dev.kvtier.cluster.ClusterTopology;
import dev.kvtier.cluster.InProcessSyncBus;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;
import dev.kvtier.sync.CacheRoutingHint;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A first cut of issue 13's main job, in one process: a generated block trace played across {@code ranks} ranks, each
 * with an LRU of {@code capacity} blocks that publishes what it stores and evicts through a {@link ClusterPublisher}
 * on an in-process bus, and one {@link ClusterRouter} that picks, for each request, the rank holding its longest
 * prefix (ties and misses: the rank with the fewest requests so far). Baseline in the same run: the same ranks and
 * trace with round-robin routing and no router. Reports the cluster hit rate (prefix blocks found on the chosen
 * rank / all blocks) and, of the requests whose prefix some rank held, how many were sent to a rank holding the
 * longest held prefix.
 * No rank processes, no bytes, no KvTierCache: {@code Simulate --workload trace --ranks N} is the real thing
 * (rank JVMs with their own caches over JetStream), and shares {@link #leastLoaded(long[], List)} with this.
 *
 * <p>Usage: {@code ClusterTraceCheck [kind=chat] [requests=3000] [ranks=4] [capacity=2000] [seed=1]}.
 */
public final class ClusterTraceCheck {
    private ClusterTraceCheck() {
    }

    /** One rank's cache: blocks in LRU order, reporting every change to its publisher after making it. */
    private static final class Rank implements ClusterPublisher.Holdings {
        final LinkedHashMap<BlockHash, Boolean> lru = new LinkedHashMap<>(16, 0.75f, true);
        final int capacity;
        ClusterPublisher publisher;
        long requests;

        Rank(int capacity) {
            this.capacity = capacity;
        }

        /** Prefix blocks already held, then holds all of {@code chain}. */
        synchronized int serve(List<BlockHash> chain) {
            int hits = prefixHeld(chain);
            for (BlockHash block : chain) {
                if (lru.put(block, Boolean.TRUE) == null && publisher != null) {
                    publisher.blockStored(block, Tier.GPU, 512);
                }
            }
            while (lru.size() > capacity) {
                BlockHash eldest = lru.keySet().iterator().next();
                lru.remove(eldest);
                if (publisher != null) {
                    publisher.blockGone(eldest);
                }
            }
            if (publisher != null) {
                publisher.endStep();
            }
            requests++;
            return hits;
        }

        /** How many leading blocks of {@code chain} this rank holds (without touching the LRU order). */
        synchronized int prefixHeld(List<BlockHash> chain) {
            int held = 0;
            while (held < chain.size() && lru.containsKey(chain.get(held))) {
                held++;
            }
            return held;
        }

        @Override
        public synchronized void announce(ClusterPublisher.Announcer announcer) {
            for (BlockHash block : lru.keySet()) {
                announcer.block(block, Tier.GPU, 512);
            }
        }
    }

    record Outcome(long hitBlocks, long blocks, long prefixHeldSomewhere, long routedToHolder) {
    }

    public static void main(String[] args) throws Exception {
        TraceGenerator.Kind kind = TraceGenerator.Kind.of(args.length > 0 ? args[0] : "chat").orElseThrow();
        int requests = args.length > 1 ? Integer.parseInt(args[1]) : 3000;
        int ranks = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        int capacity = args.length > 3 ? Integer.parseInt(args[3]) : 2000;
        long seed = args.length > 4 ? Long.parseLong(args[4]) : 1;
        List<TraceRequest> trace = TraceGenerator.generate(kind, requests, seed);
        Outcome routed = play(trace, ranks, capacity, true);
        Outcome roundRobin = play(trace, ranks, capacity, false);
        System.out.printf("%s trace, %d requests, %d ranks x %d blocks: router hit rate %.4f, sent to a longest-prefix holder %d of"
                + " %d (%.1f%%); round-robin hit rate %.4f (to a longest-prefix holder %d of %d); hit-rate ratio %.2f%n", kind,
                requests, ranks, capacity, routed.hitBlocks() / (double) routed.blocks(), routed.routedToHolder(),
                routed.prefixHeldSomewhere(), 100.0 * routed.routedToHolder() / Math.max(1, routed.prefixHeldSomewhere()),
                roundRobin.hitBlocks() / (double) roundRobin.blocks(), roundRobin.routedToHolder(),
                roundRobin.prefixHeldSomewhere(), (routed.hitBlocks() / (double) routed.blocks())
                        / (roundRobin.hitBlocks() / (double) roundRobin.blocks()));
    }

    private static Outcome play(List<TraceRequest> trace, int rankCount, int capacity, boolean useRouter)
            throws Exception {
        ClusterTopology topology = new ClusterTopology(rankCount, 1, 1);
        List<Rank> ranks = new ArrayList<>();
        List<ClusterPublisher> publishers = new ArrayList<>();
        long hitBlocks = 0;
        long blocks = 0;
        long heldSomewhere = 0;
        long toHolder = 0;
        try (InProcessSyncBus bus = new InProcessSyncBus(1 << 22);
                ClusterRouter router = useRouter ? ClusterRouter.start(bus, topology, ClusterRouter.Options.inMemory(),
                        null) : null) {
            for (int r = 0; r < rankCount; r++) {
                Rank rank = new Rank(capacity);
                ranks.add(rank);
                if (useRouter) {
                    rank.publisher = new ClusterPublisher(bus, topology, r, "host" + r, 1, rank, null, 1 << 20);
                    publishers.add(rank.publisher);
                }
            }
            int next = 0;
            for (TraceRequest request : trace) {
                List<BlockHash> chain = new ArrayList<>(request.blocks());
                for (int i = 0; i < request.blocks(); i++) {
                    chain.add(new BlockHash(0x7ace, request.hashId(i)));
                }
                int chosen;
                if (useRouter) {
                    for (ClusterPublisher publisher : publishers) {
                        publisher.flush(Duration.ofSeconds(30));
                    }
                    router.awaitStreamSequence(bus.lastSequence(), Duration.ofSeconds(30));
                    CacheRoutingHint hint = router.route(chain);
                    chosen = hint.hasTargets() ? leastLoaded(ranks, hint.relevantRanks()) : leastLoaded(ranks, null);
                } else {
                    chosen = next;
                    next = (next + 1) % rankCount;
                }
                int longest = 0;
                for (Rank rank : ranks) {
                    longest = Math.max(longest, rank.prefixHeld(chain));
                }
                if (longest > 0) {
                    heldSomewhere++;
                    if (ranks.get(chosen).prefixHeld(chain) == longest) {
                        toHolder++;
                    }
                }
                hitBlocks += ranks.get(chosen).serve(chain);
                blocks += chain.size();
            }
        } finally {
            for (ClusterPublisher publisher : publishers) {
                publisher.close();
            }
        }
        return new Outcome(hitBlocks, blocks, heldSomewhere, toHolder);
    }

    private static int leastLoaded(List<Rank> ranks, List<Integer> among) {
        long[] requests = new long[ranks.size()];
        for (int r = 0; r < requests.length; r++) {
            requests[r] = ranks.get(r).requests;
        }
        return leastLoaded(requests, among);
    }

    /**
     * The routing rule without a better one: of the ranks {@code among} (all when null), the one that has served the
     * fewest requests ({@code requests[rank]}), the lowest rank on a tie. Also {@code Simulate --ranks}'s rule.
     */
    public static int leastLoaded(long[] requests, List<Integer> among) {
        int best = -1;
        for (int r = 0; r < requests.length; r++) {
            if (among != null && !among.contains(r)) {
                continue;
            }
            if (best < 0 || requests[r] < requests[best]) {
                best = r;
            }
        }
        return best;
    }
}
