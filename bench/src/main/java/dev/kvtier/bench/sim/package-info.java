/**
 * The serving-workload simulator, the project's main job: a multi-turn chat workload played against
 * the tiered KV cache, every segment's bytes verified each time it becomes resident, with a summary
 * table, and a budget sweep written as CSV and SVG. Entry point: {@link dev.kvtier.bench.sim.Simulate}.
 *
 * <p>The simulator talks to the cache through one small adapter, {@link dev.kvtier.bench.sim.CacheUnderTest},
 * so that everything above it (workload, verification, statistics, output) is tested against an
 * in-memory fake as well as the real cache.
 */
package dev.kvtier.bench.sim;
