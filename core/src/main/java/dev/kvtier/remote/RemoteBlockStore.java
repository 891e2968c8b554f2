package dev.kvtier.remote;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A key-value store outside the cache (another process, another host) that holds prefix blocks' bytes, so that a
 * cache that misses a block locally can fetch it instead of recomputing it. The SPI between kvtier and an engine:
 * kvtier ships an in-process implementation and a Redis one (module {@code dev.kvtier.redis}); nothing else in
 * kvtier knows which engine it talks to.
 *
 * <h2>Promises an implementation keeps</h2>
 * <ul>
 *   <li><b>Opaque keys and values.</b> The cache builds the keys (namespaced by model and deployment) and the
 *       values (framed, checksummed and signed) and checks every value it gets back; an implementation stores and
 *       returns bytes unchanged and need not check them. A key is at most 512 UTF-8 bytes.</li>
 *   <li><b>Never blocks the caller.</b> Every method returns at once (it may queue, never wait on the network) and
 *       completes its future later, on the store's own threads. The cache bounds every wait with its own timeout,
 *       so a future may be completed late or never without harm, but it must not hold a caller's thread.</li>
 *   <li><b>One round trip per call.</b> The keys of one call are sent together (pipelined), not one after the
 *       other; a store spread over several nodes sends one batch per node, in parallel.</li>
 *   <li><b>Failure is an exceptional future, not a throw.</b> A store that cannot answer (down, failing over, slow
 *       past its own timeout) completes the future exceptionally; the cache counts that and treats it as a miss.
 *       The calls themselves throw only {@link IllegalArgumentException} for a null or invalid argument and
 *       {@link IllegalStateException} after {@link #close()}.</li>
 *   <li><b>Thread-safe.</b> Any method may be called from any thread at once.</li>
 * </ul>
 */
public interface RemoteBlockStore extends AutoCloseable {

    /**
     * Which of {@code keys} the store holds now, in one round trip.
     *
     * @param keys the keys to ask about, in the order of the answer; may be empty
     * @return a future of one flag per key ({@code answer[i]} for {@code keys.get(i)})
     */
    CompletableFuture<boolean[]> containsAll(List<String> keys);

    /**
     * The values stored under {@code keys}, in one round trip, each in an array of its own: {@link #getAllInto} with a
     * sink that copies every value into a new array. The cache fetches through {@link #getAllInto}, which hands the
     * values over without an array each.
     *
     * @param keys the keys to fetch, in the order of the answer; may be empty
     * @return a future of one value per key, {@code null} where the store has none (a list that allows nulls, of
     *     {@code keys.size()} elements)
     */
    default CompletableFuture<List<byte[]>> getAll(List<String> keys) {
        byte[][] values = new byte[keys == null ? 0 : keys.size()][];
        return getAllInto(keys, (index, value) -> {
            if (value != null) {
                byte[] copy = new byte[value.remaining()];
                value.get(copy);
                values[index] = copy;
            }
        }).thenApply(ignored -> Arrays.asList(values));
    }

    /**
     * Fetches the values stored under {@code keys} in one round trip and hands each to {@code sink} as it arrives,
     * without an array of its own: a store reads a value straight from its receive buffer, so a fetch costs no
     * allocation per value and no collection afterwards (the cache checks each value and copies its payload where
     * the block goes).
     *
     * <p>The sink is called once per key, on the store's threads, in no promised order, possibly concurrently for
     * different keys (a store spread over several nodes receives from them in parallel). The future completes once
     * every call returned. A sink that throws fails the future (exceptionally, with what it threw as the cause).
     * After the future completed exceptionally (a timeout, a lost connection, {@link #close()}), calls for values
     * still arriving may come late: a sink must tolerate them (write into heap memory it then drops, or into a
     * segment whose arena's close makes a late write throw instead of landing).
     *
     * @param keys the keys to fetch; {@code sink} gets each key's position in this list; may be empty; not null
     * @param sink receives {@code (index, value)}: the bytes of {@code keys.get(index)}'s value between the buffer's
     *     position and limit, read-only and valid only during the call (copy what you keep), or {@code null} where
     *     the store has none; not null
     * @return a future completed (with null) once the sink was called for every key
     */
    CompletableFuture<Void> getAllInto(List<String> keys, ValueSink sink);

    /**
     * Stores each value under its key, replacing what was there, in one round trip. The arrays are the caller's
     * until the future completes: the store must not change them and may read them until then.
     *
     * @param values the values by key; may be empty
     * @return a future completed when every value was acknowledged by the store
     */
    CompletableFuture<Void> putAll(Map<String, byte[]> values);

    /**
     * Where the store is, for logs and stats (for example {@code redis://10.0.0.5:6379}), never a secret.
     *
     * @return a short description of the store's address, without credentials
     */
    String describe();

    /**
     * Receives the values of a {@link #getAllInto} call, one call per key, on the store's threads.
     */
    @FunctionalInterface
    interface ValueSink {
        /**
         * Takes the value of the key at {@code index}.
         *
         * @param index the key's position in the call's keys, {@code 0 <= index < keys.size()}
         * @param value the value's bytes between position and limit (read-only, valid only during this call), or
         *     {@code null} where the store holds no value under the key
         */
        void accept(int index, ByteBuffer value);
    }

    /**
     * Releases the store's connections and threads; futures not yet completed complete exceptionally. Idempotent.
     */
    @Override
    void close();
}
