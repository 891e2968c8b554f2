package dev.kvtier.remote;

import dev.kvtier.concurrent.KvTierThreads;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * A {@link RemoteBlockStore} inside this JVM: the embedded default for tests and for a single host, where several
 * caches in one process share blocks without a server. It behaves like a Redis node configured with
 * {@code maxmemory} and an oldest-first eviction: with a byte budget, storing a value evicts the values stored
 * longest ago until the new one fits (a replaced value counts as newly stored); a value larger than the whole
 * budget is not kept (a later fetch misses it, as with any evicted value).
 *
 * <h2>Sharing</h2>
 * A store made with {@link #InProcessRemoteBlockStore(long)} is private to whoever holds it. A store opened with
 * {@link #named(String, long)} (or the URI {@code inprocess:<name>} through {@link RemoteBlockStores#open}) shares
 * its contents with every other open store of that name in the JVM, so two caches in one process act as two ranks
 * with one shared store. The contents of a name live while at least one store of that name is open; closing the
 * last one drops them.
 *
 * <h2>Threads and blocking</h2>
 * Thread-safe. Every method returns at once: the work (copying the values in or out, evicting) runs on the store's
 * own daemon thread, which completes the futures, so a dependent never runs on the caller's thread. Values are
 * copied in and out, so neither the caller's arrays nor the returned ones alias the stored bytes.
 * {@link #close()} completes every future not yet completed exceptionally with an {@link IllegalStateException}
 * and stops the thread; later calls throw {@link IllegalStateException}.
 */
public final class InProcessRemoteBlockStore implements RemoteBlockStore {

    /** The URI scheme of in-process stores: {@code inprocess:<name>}, optionally {@code ?maxBytes=<n>}. */
    public static final String SCHEME = "inprocess";

    /** The longest key a store accepts, in UTF-8 bytes (the SPI's limit). */
    public static final int MAX_KEY_BYTES = 512;

    /** Budget value meaning "no byte budget". */
    public static final long UNBOUNDED = Long.MAX_VALUE;

    private static final Map<String, Shelf> SHELVES_BY_NAME = new ConcurrentHashMap<>();
    private static final Object SHELVES_LOCK = new Object();

    private final Shelf shelf;
    private final String name;
    private final ExecutorService worker;
    private final Set<CompletableFuture<?>> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /**
     * A private store (shared with no one) holding at most {@code maxBytes} bytes of values.
     *
     * @param maxBytes the byte budget of the values, or {@link #UNBOUNDED}
     * @throws IllegalArgumentException if {@code maxBytes} is not positive
     */
    public InProcessRemoteBlockStore(long maxBytes) {
        this(null, new Shelf(checkBudget(maxBytes)));
    }

    /** A private, unbounded store. */
    public InProcessRemoteBlockStore() {
        this(UNBOUNDED);
    }

    private InProcessRemoteBlockStore(String name, Shelf shelf) {
        this.name = name;
        this.shelf = shelf;
        this.worker = Executors.newSingleThreadExecutor(KvTierThreads.factory("inprocess-store"));
    }

    /**
     * Opens the store named {@code name}, sharing its contents with every open store of that name in this JVM.
     *
     * @param name the store's name: letters, digits, {@code . _ -}, 1 to 128 characters
     * @param maxBytes the byte budget, or {@link #UNBOUNDED}; must equal the budget of the stores of that name
     *     already open
     * @return a new open store; the caller closes it
     * @throws IllegalArgumentException if the name is invalid, the budget is not positive, or the name is open with
     *     another budget
     */
    public static InProcessRemoteBlockStore named(String name, long maxBytes) {
        if (name == null || !name.matches("[A-Za-z0-9._-]{1,128}")) {
            throw new IllegalArgumentException(
                    "in-process store name must be 1 to 128 of [A-Za-z0-9._-], was " + name);
        }
        checkBudget(maxBytes);
        synchronized (SHELVES_LOCK) {
            Shelf shelf = SHELVES_BY_NAME.get(name);
            if (shelf == null) {
                shelf = new Shelf(maxBytes);
                SHELVES_BY_NAME.put(name, shelf);
            } else if (shelf.maxBytes != maxBytes) {
                throw new IllegalArgumentException("in-process store '" + name + "' is open with maxBytes="
                        + budgetText(shelf.maxBytes) + ", asked " + budgetText(maxBytes));
            }
            shelf.openStores++;
            return new InProcessRemoteBlockStore(name, shelf);
        }
    }

    private static long checkBudget(long maxBytes) {
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("maxBytes must be positive, was " + maxBytes);
        }
        return maxBytes;
    }

    private static String budgetText(long maxBytes) {
        return maxBytes == UNBOUNDED ? "unbounded" : Long.toString(maxBytes);
    }

    @Override
    public CompletableFuture<boolean[]> containsAll(List<String> keys) {
        List<String> checked = checkKeys(keys);
        return submit(() -> shelf.contains(checked));
    }

    @Override
    public CompletableFuture<Void> getAllInto(List<String> keys, ValueSink sink) {
        List<String> checked = checkKeys(keys);
        if (sink == null) {
            throw new IllegalArgumentException("sink must not be null");
        }
        return submit(() -> {
            byte[][] held = shelf.get(checked);
            for (int i = 0; i < held.length; i++) {
                // A view of the stored array, no copy: stored arrays are never changed (a put replaces the array).
                sink.accept(i, held[i] == null ? null : ByteBuffer.wrap(held[i]).asReadOnlyBuffer());
            }
            return null;
        });
    }

    @Override
    public CompletableFuture<Void> putAll(Map<String, byte[]> values) {
        if (values == null) {
            throw new IllegalArgumentException("values must not be null");
        }
        List<String> keys = checkKeys(new ArrayList<>(values.keySet()));
        List<byte[]> arrays = new ArrayList<>(keys.size());
        for (String key : keys) {
            byte[] value = values.get(key);
            if (value == null) {
                throw new IllegalArgumentException("value of key '" + key + "' must not be null");
            }
            arrays.add(value);
        }
        return submit(() -> {
            shelf.put(keys, arrays);
            return null;
        });
    }

    /**
     * Bytes of values held now (shared by every store of this name).
     *
     * @return the summed lengths of the values held (keys not counted), {@code >= 0} and at most the byte budget;
     *     a snapshot that writes still queued may change at once
     */
    public long storedBytes() {
        return shelf.storedBytes();
    }

    /**
     * Values evicted so far to keep within the budget (shared by every store of this name).
     *
     * @return how many values were removed, oldest first, to make room for newer ones, {@code >= 0}; always 0
     *     without a budget. A value replaced under its own key, or one larger than the whole budget and so never
     *     kept, is not counted
     */
    public long evictions() {
        return shelf.evictions();
    }

    @Override
    public String describe() {
        return SCHEME + ":" + (name == null ? "(private)" : name)
                + (shelf.maxBytes == UNBOUNDED ? "" : "?maxBytes=" + shelf.maxBytes);
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        worker.shutdownNow();
        for (CompletableFuture<?> future : pending) {
            future.completeExceptionally(closedException());
        }
        pending.clear();
        if (name != null) {
            synchronized (SHELVES_LOCK) {
                if (--shelf.openStores == 0) {
                    SHELVES_BY_NAME.remove(name, shelf);
                }
            }
        }
    }

    @Override
    public String toString() {
        return describe();
    }

    private <T> CompletableFuture<T> submit(Supplier<T> work) {
        checkOpen();
        CompletableFuture<T> future = new CompletableFuture<>();
        pending.add(future);
        try {
            worker.execute(() -> {
                try {
                    if (!future.isDone()) {
                        future.complete(work.get());
                    }
                } catch (RuntimeException | Error e) {
                    future.completeExceptionally(e);
                } finally {
                    pending.remove(future);
                }
            });
        } catch (RejectedExecutionException e) {
            // close() ran between checkOpen and execute.
            pending.remove(future);
            future.completeExceptionally(closedException());
            return future;
        }
        if (closed) {
            // close() may have swept the pending set before this future joined it.
            future.completeExceptionally(closedException());
        }
        return future;
    }

    private void checkOpen() {
        if (closed) {
            throw closedException();
        }
    }

    private IllegalStateException closedException() {
        return new IllegalStateException("remote block store " + describe() + " is closed");
    }

    private List<String> checkKeys(List<String> keys) {
        checkOpen();
        if (keys == null) {
            throw new IllegalArgumentException("keys must not be null");
        }
        List<String> copy = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            if (key == null) {
                throw new IllegalArgumentException("key " + i + " must not be null");
            }
            int length = key.getBytes(StandardCharsets.UTF_8).length;
            if (length > MAX_KEY_BYTES) {
                throw new IllegalArgumentException("key " + i + " is " + length + " UTF-8 bytes, more than "
                        + MAX_KEY_BYTES + ": " + key.substring(0, 64) + "...");
            }
            copy.add(key);
        }
        return copy;
    }

    /** The contents: values by key in the order stored (oldest first), under one lock. */
    private static final class Shelf {
        final long maxBytes;
        int openStores; // guarded by SHELVES_LOCK
        private final LinkedHashMap<String, byte[]> values = new LinkedHashMap<>();
        private long storedBytes;
        private long evictions;

        Shelf(long maxBytes) {
            this.maxBytes = maxBytes;
        }

        synchronized boolean[] contains(List<String> keys) {
            boolean[] answer = new boolean[keys.size()];
            for (int i = 0; i < answer.length; i++) {
                answer[i] = values.containsKey(keys.get(i));
            }
            return answer;
        }

        /** The arrays held under {@code keys} (null where none); never changed afterwards, so safe to read. */
        synchronized byte[][] get(List<String> keys) {
            byte[][] held = new byte[keys.size()][];
            for (int i = 0; i < held.length; i++) {
                held[i] = values.get(keys.get(i));
            }
            return held;
        }

        void put(List<String> keys, List<byte[]> arrays) {
            List<byte[]> copies = new ArrayList<>(arrays.size());
            for (byte[] array : arrays) {
                copies.add(Arrays.copyOf(array, array.length));
            }
            synchronized (this) {
                for (int i = 0; i < keys.size(); i++) {
                    String key = keys.get(i);
                    byte[] copy = copies.get(i);
                    byte[] old = values.remove(key);
                    if (old != null) {
                        storedBytes -= old.length;
                    }
                    if (copy.length > maxBytes) {
                        continue;
                    }
                    var oldest = values.entrySet().iterator();
                    while (storedBytes + copy.length > maxBytes && oldest.hasNext()) {
                        storedBytes -= oldest.next().getValue().length;
                        oldest.remove();
                        evictions++;
                    }
                    values.put(key, copy);
                    storedBytes += copy.length;
                }
            }
        }

        synchronized long storedBytes() {
            return storedBytes;
        }

        synchronized long evictions() {
            return evictions;
        }
    }
}
