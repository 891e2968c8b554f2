package dev.kvtier.bench.cluster;

import dev.kvtier.cluster.ClusterState;
import dev.kvtier.cluster.ClusterTopology;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.sync.CacheRoutingHint;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Issue 13's router lookup: the hint for a 64-block prompt with 10^6 blocks indexed across 8 ranks (4 tensor-parallel
 * groups of 2), against the plain mechanism underneath: 64 lookups in a {@code HashMap<BlockHash, Long>} of the same
 * 10^6 blocks (holders as bits), with no group logic and no hint built. Goal: lookup < 10 us.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx3g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class RouterLookupBenchmark {
    private static final int CHAIN_LENGTH = 64;
    private static final int CHAINS = 1_000_000 / CHAIN_LENGTH;

    private ClusterState state;
    private HashMap<BlockHash, Long> baseline;
    private List<List<BlockHash>> queries;
    private int next;

    @Setup(Level.Trial)
    public void build() {
        ClusterIndexFixture fixture = new ClusterIndexFixture(new ClusterTopology(8, 2, 32), CHAINS, CHAIN_LENGTH, 13);
        state = fixture.build();
        if (state.blockCount() != CHAINS * CHAIN_LENGTH) {
            throw new IllegalStateException("index holds " + state.blockCount() + " blocks, expected "
                    + CHAINS * CHAIN_LENGTH);
        }
        baseline = new HashMap<>(CHAINS * CHAIN_LENGTH * 2);
        for (int c = 0; c < CHAINS; c++) {
            long holders = fixture.topology.groupMask(fixture.groupOf[c]);
            for (BlockHash block : fixture.chains[c]) {
                baseline.put(block, holders);
            }
        }
        queries = Arrays.stream(fixture.chains).limit(4096).map(List::of).toList();
        CacheRoutingHint check = state.route(queries.get(0));
        if (check.reusableTokens() != (long) CHAIN_LENGTH * ClusterIndexFixture.TOKENS_PER_BLOCK) {
            throw new IllegalStateException("a fully held chain routed to " + check);
        }
    }

    private List<BlockHash> nextQuery() {
        next = (next + 1) & 4095;
        return queries.get(next);
    }

    @Benchmark
    public CacheRoutingHint route() {
        return state.route(nextQuery());
    }

    @Benchmark
    public long baselineHashMapLookups() {
        long all = -1;
        for (BlockHash block : nextQuery()) {
            Long holders = baseline.get(block);
            all &= holders == null ? 0 : holders;
        }
        return all;
    }
}
