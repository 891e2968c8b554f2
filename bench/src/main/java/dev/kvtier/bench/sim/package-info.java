/**
 * The serving-workload simulator, the project's main job: a workload played against the tiered KV cache,
 * every byte it hands back verified, with a summary table and a budget sweep written as CSV and SVG.
 * Entry point: {@link dev.kvtier.bench.sim.Simulate}; its command line is declared with picocli in
 * {@code SimCommand} and read into {@link dev.kvtier.bench.sim.SimOptions}.
 *
 * <p>Two workloads. The generated multi-turn chat ({@code SimulationRun}): sessions with Zipf popularity,
 * each request making its conversation's earlier turns resident on the GPU. And block-level traces in the
 * Mooncake format ({@code TraceRun}), read from a file or generated ({@link dev.kvtier.bench.trace}), played in
 * order, with the GPU hit rate set against the offline optimum (Belady) for the same GPU capacity. A trace
 * request is played by one small class behind {@code BlockRequestPlayer}: today over the segment API, one
 * segment per block; a player over the prefix-block API takes its place later.
 *
 * <p>The simulator talks to the cache through one small adapter, {@link dev.kvtier.bench.sim.CacheUnderTest},
 * so that everything above it (workload, verification, statistics, output) is tested against an
 * in-memory fake as well as the real cache.
 */
package dev.kvtier.bench.sim;
