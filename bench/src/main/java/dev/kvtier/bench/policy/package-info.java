/**
 * Policy research, apart from the simulator users run ({@link dev.kvtier.bench.sim}): the library's demotion
 * policies played block by block through the store against generated traces and set against the offline optimum
 * ({@link dev.kvtier.bench.policy.PolicyTraceCheck}, the held-out table {@link dev.kvtier.bench.policy.PolicyHeldOut},
 * the trace-length study {@link dev.kvtier.bench.policy.PolicyBudgetScaling}), what one reference costs as the GPU
 * tier grows ({@link dev.kvtier.bench.policy.PolicyOpCost}), bounds on what a future-blind policy can reach
 * ({@link dev.kvtier.bench.policy.DeadBlockOracleBound}), and experimental policies the library does not offer
 * ({@link dev.kvtier.bench.policy.RetainingPolicy}). Each tool is a {@code main} run from {@code benchmarks.jar};
 * no bytes move, so a grid of traces, budgets and policies takes seconds.
 */
package dev.kvtier.bench.policy;
