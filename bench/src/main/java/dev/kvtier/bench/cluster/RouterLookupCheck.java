package dev.kvtier.bench.cluster;

import dev.kvtier.cluster.ClusterState;
import dev.kvtier.cluster.ClusterTopology;
import dev.kvtier.prefix.BlockHash;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;

/**
 * {@link RouterLookupBenchmark}'s two measurements interleaved in one JVM (route, baseline, route, baseline, ...,
 * {@code rounds} times {@code callsPerRound} calls each), reporting the median per call of each and their ratio. On a
 * machine shared with other builds JMH's sequential iterations of one benchmark, then the other, see different load;
 * interleaving gives both the same.
 *
 * <p>Usage: {@code RouterLookupCheck [rounds=31] [callsPerRound=20000] [promptBlocks=64]}: 10^6 blocks indexed in
 * chains of {@code promptBlocks}, each prompt one whole chain.
 */
public final class RouterLookupCheck {
    private RouterLookupCheck() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 31;
        int calls = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        int chainLength = args.length > 2 ? Integer.parseInt(args[2]) : 64;
        int chains = 1_000_000 / chainLength;
        ClusterIndexFixture fixture = new ClusterIndexFixture(new ClusterTopology(8, 2, 32), chains, chainLength, 13);
        ClusterState state = fixture.build();
        HashMap<BlockHash, Long> baseline = new HashMap<>(chains * chainLength * 2);
        for (int c = 0; c < chains; c++) {
            long holders = fixture.topology.groupMask(fixture.groupOf[c]);
            for (BlockHash block : fixture.chains[c]) {
                baseline.put(block, holders);
            }
        }
        List<List<BlockHash>> queries = Arrays.stream(fixture.chains).limit(4096).map(List::of).toList();
        double[] route = new double[rounds];
        double[] map = new double[rounds];
        long sink = 0;
        for (int round = -5; round < rounds; round++) { // 5 warm-up rounds
            long start = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                sink += state.route(queries.get(i & 4095)).reusableTokens();
            }
            long middle = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                long all = -1;
                for (BlockHash block : queries.get(i & 4095)) {
                    Long holders = baseline.get(block);
                    all &= holders == null ? 0 : holders;
                }
                sink += all;
            }
            long end = System.nanoTime();
            if (round >= 0) {
                route[round] = (middle - start) / 1e3 / calls;
                map[round] = (end - middle) / 1e3 / calls;
            }
        }
        Arrays.sort(route);
        Arrays.sort(map);
        System.out.printf("blocks %d over 8 ranks (4 groups of 2), %d-block prompts: route median %.2f us/op"
                + " (p10 %.2f, p90 %.2f); baseline %d HashMap lookups median %.2f us/op; ratio %.2f (sink %d)%n",
                state.blockCount(), chainLength, route[rounds / 2], route[rounds / 10], route[rounds * 9 / 10], chainLength, map[rounds / 2],
                route[rounds / 2] / map[rounds / 2], sink & 1);
    }
}
