/**
 * kvtier's door: {@link dev.kvtier.KvTierCache} keeps LLM-inference KV-cache segments on GPU,
 * pinned host memory or memory-mapped files, moving their bytes between tiers with their token
 * positions intact. Configure it with {@link dev.kvtier.KvTierConfig}; pick a
 * {@link dev.kvtier.Backend} (AUTO uses CUDA when a device is usable, else the host emulation).
 */
package dev.kvtier;
