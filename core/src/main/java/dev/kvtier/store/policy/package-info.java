/**
 * The built-in tracker policies ({@code DemotionPolicy.s3Fifo()}, {@code wTinyLfu()}, {@code lru2()}, {@code arc()}
 * and the chain-aware and adaptive S3-FIFO variants) and the data structures they keep: queues linked through the
 * store's entries, ghost keys, frequency sketches and miniature simulations. Not exported: users reach these
 * policies through the factories of {@link dev.kvtier.store.DemotionPolicy}, and the store reaches this package only
 * at its seams (the entry as a tracker's node, candidates named as entries, the shared open-addressing steps).
 */
package dev.kvtier.store.policy;
