/**
 * The logical tier map: which KV segment lives on which tier, per-tier byte budgets, and the
 * demotion policy. Knows nothing of bytes or CUDA.
 */
package dev.kvtier.store;
