/**
 * What kvtier tells the people who run it: JFR events and the listener-fed Micrometer metrics
 * ({@link dev.kvtier.observe.micrometer}).
 *
 * <h2>JFR events</h2>
 * <ul>
 *   <li>{@code dev.kvtier.Transfer} ({@link dev.kvtier.observe.TransferEvent}): one segment copy,
 *       from, to, bytes, backend, outcome, duration. Disabled by default (many).</li>
 *   <li>{@code dev.kvtier.RoomMaking} ({@link dev.kvtier.observe.RoomMakingEvent}): a round of
 *       demotions on a full tier: tier, bytes needed and freed, victims, duration. Disabled by default.</li>
 *   <li>{@code dev.kvtier.ChecksumFailure} ({@link dev.kvtier.observe.ChecksumFailureEvent}): key,
 *       tier, expected and actual CRC32C. Enabled by default (rare).</li>
 *   <li>{@code dev.kvtier.Recovery} ({@link dev.kvtier.observe.RecoveryEvent}): segments found and
 *       discarded when a persisted DISK tier is reopened, and how long it took. Enabled by default.</li>
 *   <li>{@code dev.kvtier.RemoteFetch} ({@link dev.kvtier.observe.RemoteFetchEvent}): the remote store's cost
 *       gate on a prefix's remote blocks (estimated fetch and recompute times) and the fetch it let through.
 *       Disabled by default.</li>
 * </ul>
 * The settings file {@code dev/kvtier/observe/kvtier.jfc} in the jar enables all five; see
 * {@link dev.kvtier.observe.KvTierFlightRecording} for the command line and the API. A disabled
 * event costs a branch and allocates nothing; {@code -Dkvtier.jfr.events=false} removes the events
 * from the compiled code altogether (the benchmark's baseline). The engine fires them; this package
 * depends on nothing of the engine but {@code Tier}.
 */
package dev.kvtier.observe;
