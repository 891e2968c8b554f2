/**
 * The join of logical and physical behind {@link dev.kvtier.KvTierCache}; internal (applications use
 * the cache). One job per class:
 * <ul>
 *   <li>{@code OperationGate}: enter / exit / close-and-drain;</li>
 *   <li>{@code SegmentTable} and {@code Segment}: per key, the lock, placement, DISK checksum, pins
 *       and liveness (the one per-key registry on the physical side, beside the store's logical one);</li>
 *   <li>{@code Mover}: one booked move as a value with a lifetime: prepare, copy, commit or abort;</li>
 *   <li>{@code RoomMaker}: eviction down the {@code DemotionCascade}, victims batched, bounded retry,
 *       and rollback (which may itself need room);</li>
 *   <li>{@code Residencies}: single-flight {@code ensureResident} and its threads;</li>
 *   <li>{@code TierMemories}: the only place a tier meets memory ({@code GPU -> DEVICE},
 *       {@code CPU -> PINNED_HOST}, {@code DISK -> MAPPED_FILE});</li>
 *   <li>{@code DiskRecovery}: a persisted DISK tier's journal records registered again at open, and
 *       each recovered segment's first-use check (beside {@code PersistedDisk}, where tiering writes
 *       the journal);</li>
 *   <li>{@code Failures}: the one translator from low-level failures to the domain exceptions;</li>
 *   <li>{@code TieringEngine}: each operation as a sequence of those steps;
 *       {@code BackendSelection}: which backend a configuration gets.</li>
 * </ul>
 * Rules (checked by {@code ArchitectureTest}): nothing here imports {@code KvTierCache} (the door
 * validates and enters, then delegates); the {@code Mover} never calls the {@code RoomMaker}
 * (rollback has one home); only {@code DiskRecovery} reads the journal's records back (recovery has
 * one home); {@code exec} names no tier.
 */
package dev.kvtier.tiering;
