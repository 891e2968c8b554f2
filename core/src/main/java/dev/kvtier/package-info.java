/**
 * kvtier's door: {@link dev.kvtier.KvTierCache} keeps LLM-inference KV-cache segments on GPU,
 * pinned host memory or memory-mapped files, moving their bytes between tiers with their token
 * positions intact. Configure it with {@link dev.kvtier.KvTierConfig} (in code, or from a
 * {@code Map}, {@code Properties} or {@code KVTIER_*} environment variables); pick a
 * {@link dev.kvtier.Backend} (AUTO uses CUDA when a device is usable, else the host emulation).
 *
 * <h2>Errors: one convention</h2>
 * <ul>
 *   <li><b>A null argument</b> is a bad argument like any other: every public method of kvtier's API
 *       ({@code dev.kvtier}, {@code dev.kvtier.prefix}, {@code dev.kvtier.observe*}) throws
 *       {@link java.lang.IllegalArgumentException} naming it ({@code "key must not be null"}), before
 *       anything changes, never a {@link java.lang.NullPointerException}. Where null has a meaning it is
 *       documented on the parameter (e.g. {@code removeListener(null)} answers false). Why one exception
 *       for all bad arguments: a caller that validates its requests catches one type.</li>
 *   <li><b>Other bad arguments</b> (a blank key, a negative size, a destination too small, an unknown
 *       configuration value) throw {@link java.lang.IllegalArgumentException} naming the argument, or
 *       the configuration key, and the value.</li>
 *   <li><b>kvtier's own failures</b> (not cached, no room, a copy or check that failed, a pinned
 *       segment, an open that failed) are {@link dev.kvtier.KvTierException}s:
 *       {@code catch (KvTierException e)} catches them all.</li>
 *   <li><b>A call the state forbids</b> (after {@code close()}, a prefix block moved or removed against
 *       the chain rule) throws {@link java.lang.IllegalStateException}.</li>
 * </ul>
 */
package dev.kvtier;
