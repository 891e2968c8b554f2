/**
 * Block-level request traces in the public Mooncake format: reading and writing them
 * ({@link dev.kvtier.bench.trace.MooncakeTrace}), generating them from a seed
 * ({@link dev.kvtier.bench.trace.TraceGenerator}), and the offline optimum a caching policy is judged against
 * ({@link dev.kvtier.bench.trace.Belady}). No third-party trace ships with kvtier: tests and CI generate theirs.
 */
package dev.kvtier.bench.trace;
