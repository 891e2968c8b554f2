/**
 * Issue 9's soak: {@link dev.kvtier.bench.soak.Soak} runs random operations from several threads on a
 * {@code KvTierCache}, checks every byte read against a model of what was last put, injects every fault kind the
 * backend allows (on the fake libcudart: sync and async call failures, host functions that never run, copies slower
 * than the transfer timeout, sticky errors; on the host backend: a full disk, truncated extents; on both: interrupts
 * and tiny budgets), watches for hangs, checks for leaks after every close, and prints the reliability table
 * {@code bench/RESULTS.md} carries. One cache per epoch, one fault kind per epoch, cycling (see {@code SoakRun}).
 */
package dev.kvtier.bench.soak;
