/**
 * Micrometer metrics for a {@code KvTierCache} ({@link dev.kvtier.observe.micrometer.KvTierMetrics}).
 * The only package that uses Micrometer, an optional dependency: nothing else in kvtier refers to
 * it (ArchitectureTest checks), so a cache opens and runs with no Micrometer on the class path.
 */
package dev.kvtier.observe.micrometer;
