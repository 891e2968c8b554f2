package dev.kvtier.tiering;

import dev.kvtier.RemoteRejection;
import dev.kvtier.RemoteStoreConfig;
import dev.kvtier.RemoteStoreStats;
import dev.kvtier.concurrent.KvTierThreads;
import dev.kvtier.observe.RemoteFetchEvent;
import dev.kvtier.remote.RemoteBlockStore;
import dev.kvtier.remote.RemoteBlockStores;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * A cache's traffic with its remote block store: the look-ups and fetches of prefix blocks it misses locally, the
 * cost gate in front of them, the write-through queue, and the store's health. One per cache, owned by its engine.
 * Thread-safe.
 *
 * <p><b>Bounded, never blocking the caller past the timeout.</b> Every wait on the store is bounded by the transfer
 * timeout; a call that fails or times out marks the store down for a backoff that doubles from
 * {@link #FIRST_BACKOFF_NANOS} up to {@link #MAX_BACKOFF_NANOS}; while down, look-ups do not ask it (a miss) and
 * writes are dropped; the first call after the backoff tries it again, and a success marks it up. Writes are
 * queued, never waited for: the block's bytes are copied out when it is queued (a full queue, {@code maxBytesInFlight},
 * drops it, counted), and one writer thread seals and sends them in batches ({@code putAll}).
 *
 * <p><b>Each block sent once, where that is cheap to know.</b> Only blocks a store call added to the cache are
 * queued (not those it found cached); and a block this cache sent to the store, or fetched from it, is not sent again
 * when it is stored or demoted anew (after an eviction, say), as long as a small table of
 * {@link #KNOWN_REMOTE_SLOTS} fingerprints still remembers it. The table forgets whenever the store is marked down
 * (it may come back empty); a block it forgets is only sent again, and a block the store evicted meanwhile is one
 * the table may still remember: then it is a miss for the other caches until this one sends it again.
 *
 * <p><b>Never a wrong byte.</b> A value is served only after {@link RemoteBlockFormat#open} checked it, and then it
 * is stored as an ordinary local block by the caller.
 */
public final class RemoteBlocks implements AutoCloseable {
    /** The first backoff after a failure: 100 ms. */
    static final long FIRST_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** The longest backoff: 30 s, so a store back up is used again within half a minute. */
    static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** Values sent in one {@code putAll}, at most. */
    static final int WRITE_BATCH_VALUES = 64;
    /**
     * Slots of the table of blocks known to be in the store: 16,384 fingerprints of 8 bytes, 128 KiB per cache; a
     * block's slot is taken by the next block hashed to it.
     */
    static final int KNOWN_REMOTE_SLOTS = 1 << 14;
    /** Weight of a new sample in the moving averages. */
    private static final double SMOOTHING = 0.2;

    private static final System.Logger LOG = System.getLogger(RemoteBlocks.class.getName());

    /** How the writer reads a block demoted to DISK: its bytes into {@code value} at {@code at}, its parent's words. */
    public interface BlockReader {
        /**
         * The parent's words {high, low} (both 0 for a chain start), or null if the block is no longer cached (or not
         * of {@code sizeBytes} and {@code tokens}, or the cache is closing).
         */
        long[] read(long high, long low, long sizeBytes, long tokens, byte[] value, int at);
    }

    private final RemoteStoreConfig config;
    private final RemoteBlockStore store;
    private final boolean ownsStore;
    private final long timeoutNanos;
    private final Map<RemoteBlockFormat.Layout, RemoteBlockFormat> formats = new ConcurrentHashMap<>();
    /**
     * Values the store is done with (their {@code putAll} completed), for the next writes of their format: a value per
     * block allocated afresh costs the caller page faults on new heap pages, several times the copy itself. At most
     * {@code maxBytesInFlight} of them per format; a value whose write failed or timed out is never reused (the store
     * may still read it).
     */
    private final Map<RemoteBlockFormat, java.util.concurrent.ArrayBlockingQueue<byte[]>> spareValues =
            new ConcurrentHashMap<>();
    private volatile BlockReader reader;

    private final Object health = new Object();
    private volatile boolean down;
    private long retryAt; // guarded by health
    private long backoffNanos; // guarded by health

    private final Object estimates = new Object();
    private double roundTripNanos; // guarded by estimates
    private double bytesPerNano; // guarded by estimates
    private long lastFetchEstimate; // guarded by estimates
    private long lastRecomputeEstimate; // guarded by estimates

    private final LongAdder remoteBlocksFound = new LongAdder();
    private final LongAdder gatedBlocks = new LongAdder();
    private final LongAdder blocksFetched = new LongAdder();
    private final LongAdder bytesFetched = new LongAdder();
    private final LongAdder blocksWritten = new LongAdder();
    private final LongAdder writesDropped = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private final AtomicLongArray rejections = new AtomicLongArray(RemoteRejection.values().length);
    private final AtomicIntegerArray rejectionLogged = new AtomicIntegerArray(RemoteRejection.values().length);

    private final KnownRemote knownRemote = new KnownRemote(KNOWN_REMOTE_SLOTS);
    private final LinkedBlockingQueue<Write> writes = new LinkedBlockingQueue<>();
    private final AtomicLong bytesQueued = new AtomicLong();
    private final Thread writer;
    /** Runs the fetches of layered restores, which must not block their caller. */
    private final java.util.concurrent.ThreadPoolExecutor fetchers = new java.util.concurrent.ThreadPoolExecutor(4, 4,
            30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), KvTierThreads.factory("remote-fetch"));
    private volatile boolean closing;
    private volatile long writerDeadline = Long.MAX_VALUE;

    /** A write queued: a value whose payload is in place (or, for a demotion, to be read), and its block. */
    private record Write(RemoteBlockFormat format, byte[] value, long high, long low, long parentHigh,
                         long parentLow, boolean demoted) { }

    private RemoteBlocks(RemoteStoreConfig config, RemoteBlockStore store, boolean ownsStore, long timeoutNanos) {
        this.config = config;
        this.store = store;
        this.ownsStore = ownsStore;
        this.timeoutNanos = timeoutNanos;
        this.writer = KvTierThreads.factory("remote-writer").newThread(this::writeLoop);
        fetchers.allowCoreThreadTimeOut(true); // no thread while no layered restore fetches
    }

    /**
     * Opens the store {@code config} names (or takes the instance it holds) and starts the writer.
     *
     * @throws IllegalArgumentException if the store's URI or a setting is refused by its provider
     */
    public static RemoteBlocks open(RemoteStoreConfig config, long timeoutNanos) {
        RemoteBlockStore store = config.store().orElse(null);
        boolean owns = store == null;
        if (owns) {
            store = RemoteBlockStores.open(config.storeUri().orElseThrow(), config.storeSettings());
        }
        RemoteBlocks blocks = new RemoteBlocks(config, store, owns, timeoutNanos);
        blocks.writer.start();
        LOG.log(System.Logger.Level.INFO, "kvtier remote block store: " + store.describe() + ", namespace "
                + config.namespace() + ", write-through " + config.writeThrough());
        return blocks;
    }

    /** How blocks demoted to DISK are read for write-through ({@link RemoteStoreConfig.WriteThrough#ON_DEMOTION_TO_DISK}). */
    void readDemotedWith(BlockReader reader) {
        this.reader = reader;
    }

    /** The write-through mode. */
    public RemoteStoreConfig.WriteThrough writeThrough() {
        return config.writeThrough();
    }

    /** Whether blocks are written through when they are stored ({@link #writeStored} queues them). */
    public boolean writesThroughOnStore() {
        return config.writeThrough() == RemoteStoreConfig.WriteThrough.ON_STORE;
    }

    /** The value format of blocks of {@code layout} (one per layout, made once). */
    public RemoteBlockFormat format(RemoteBlockFormat.Layout layout) {
        return formats.computeIfAbsent(layout, l -> new RemoteBlockFormat(config.namespace(), config.key(), l,
                config.maxValueBytes()));
    }

    // ---------------------------------------------------------------- look-up and fetch

    /**
     * How many of blocks {@code [from, high.length)} the store holds as a run from {@code from}, in one
     * {@code containsAll}, and that the cost gate lets through; 0 when the store is down, fails, or the gate judges
     * recomputing faster.
     */
    public int lookup(RemoteBlockFormat format, long[] high, long[] low, int from) {
        int rest = high.length - from;
        if (rest <= 0 || closing || !usable()) {
            return 0;
        }
        List<String> keys = new ArrayList<>(rest);
        for (int i = from; i < high.length; i++) {
            keys.add(format.keyOf(high[i], low[i]));
        }
        long start = System.nanoTime();
        boolean[] held = await(() -> store.containsAll(keys));
        if (held == null) {
            return 0;
        }
        sampleRoundTrip(System.nanoTime() - start);
        int run = 0;
        while (run < held.length && held[run]) {
            run++;
        }
        if (run == 0 || !worthFetching(format, run, null)) {
            return 0;
        }
        remoteBlocksFound.add(run);
        return run;
    }

    /** Blocks fetched: {@code count} payloads one after the other in {@code bytes}. */
    public record Fetched(int count, byte[] bytes) {
        static final Fetched NONE = new Fetched(0, new byte[0]);
    }

    /**
     * Fetches blocks {@code [from, high.length)} in one {@code getAllInto} and checks them as they arrive, stopping at
     * the first missing or rejected one; nothing when the store is down, fails, or the cost gate judges recomputing
     * faster.
     * {@code parentHigh}, {@code parentLow} is the parent of block {@code from}.
     */
    public Fetched fetch(RemoteBlockFormat format, long[] high, long[] low, int from, long parentHigh,
                         long parentLow) {
        int rest = high.length - from;
        if (rest <= 0 || closing || !usable()) {
            return Fetched.NONE;
        }
        RemoteFetchEvent event = RemoteFetchEvent.beginIfRecording();
        if (!worthFetching(format, rest, event)) {
            return Fetched.NONE;
        }
        List<String> keys = new ArrayList<>(rest);
        for (int i = from; i < high.length; i++) {
            keys.add(format.keyOf(high[i], low[i]));
        }
        int bytesPerBlock = Math.toIntExact(format.bytesPerBlock());
        byte[] payloads = new byte[Math.toIntExact((long) rest * bytesPerBlock)];
        int[] valueLengths = new int[rest];
        java.util.Arrays.fill(valueLengths, -1); // absent until the store hands a value over
        RemoteRejection[] outcomes = new RemoteRejection[rest];
        long start = System.nanoTime();
        // Each value is checked as it arrives, on the store's thread, straight from its receive buffer, its payload
        // copied once to its place. After a timeout, late values land in these arrays, which nobody reads then.
        Boolean answered = await(() -> store.getAllInto(keys, (index, value) -> {
            if (index < 0 || index >= rest) {
                throw new IllegalStateException("getAllInto handed over index " + index + " of " + rest + " keys");
            }
            if (value == null) {
                return;
            }
            int i = from + index;
            outcomes[index] = format.open(value, high[i], low[i], i == from ? parentHigh : high[i - 1],
                    i == from ? parentLow : low[i - 1], payloads, index * bytesPerBlock);
            valueLengths[index] = value.remaining();
        }).thenApply(ignored -> Boolean.TRUE));
        if (answered == null) {
            RemoteFetchEvent.finish(event, rest, lastFetchEstimate(), lastRecomputeEstimate(), true, 0, 0);
            return Fetched.NONE;
        }
        long elapsed = System.nanoTime() - start;
        long fetchedBytes = 0;
        int present = 0;
        while (present < rest && valueLengths[present] >= 0) {
            fetchedBytes += valueLengths[present];
            present++;
        }
        sampleBandwidth(fetchedBytes, elapsed);
        bytesFetched.add(fetchedBytes);
        int served = 0;
        while (served < present && outcomes[served] == null) {
            knownRemote.add(high[from + served], low[from + served]);
            served++;
        }
        if (served < present) {
            reject(outcomes[served], keys.get(served));
        }
        blocksFetched.add(served);
        RemoteFetchEvent.finish(event, rest, lastFetchEstimate(), lastRecomputeEstimate(), true, served,
                fetchedBytes);
        if (served == 0) {
            return Fetched.NONE;
        }
        return new Fetched(served, served == rest ? payloads
                : java.util.Arrays.copyOf(payloads, served * bytesPerBlock));
    }

    /** Whether the store may be asked now (not closing, and up or due for a retry). */
    public boolean mayAsk() {
        return !closing && usable();
    }

    /**
     * Runs {@code fetch} on a kvtier thread of this store's (at most 4; more wait in line).
     *
     * @throws java.util.concurrent.RejectedExecutionException if the cache is closing
     */
    public void runFetch(Runnable fetch) {
        fetchers.execute(fetch);
    }

    /**
     * The cost gate: whether fetching {@code blocks} blocks is estimated faster than recomputing them (always, without
     * a prefill rate, or before anything was measured). Records both estimates.
     */
    private boolean worthFetching(RemoteBlockFormat format, int blocks, RemoteFetchEvent event) {
        double rate = config.prefillTokensPerSecond();
        long fetchNanos;
        long recomputeNanos;
        boolean measured;
        synchronized (estimates) {
            // Measured once a fetch was timed: a caller that restores without looking up first has no round trip timed
            // alone, and then its fetches' round trips are in the bandwidth (an estimate on the slow side).
            measured = bytesPerNano > 0;
            fetchNanos = measured ? (long) (roundTripNanos + blocks * format.valueBytes() / bytesPerNano)
                    : (long) roundTripNanos;
            recomputeNanos = rate > 0 ? (long) (blocks * (double) format.tokensPerBlock() / rate * 1e9) : 0;
            lastFetchEstimate = fetchNanos;
            lastRecomputeEstimate = recomputeNanos;
        }
        boolean fetch = rate <= 0 || !measured || fetchNanos < recomputeNanos;
        if (!fetch) {
            gatedBlocks.add(blocks);
            RemoteFetchEvent.finish(event != null ? event : RemoteFetchEvent.beginIfRecording(), blocks, fetchNanos,
                    recomputeNanos, false, 0, 0);
        }
        return fetch;
    }

    private void sampleRoundTrip(long nanos) {
        synchronized (estimates) {
            roundTripNanos = roundTripNanos == 0 ? nanos : roundTripNanos + SMOOTHING * (nanos - roundTripNanos);
        }
    }

    private void sampleBandwidth(long bytes, long nanos) {
        if (bytes == 0) {
            return;
        }
        synchronized (estimates) {
            // The round trip is paid once per call, whatever its size: what is left is the bytes' time.
            double transfer = Math.max(nanos - roundTripNanos, nanos / 10.0);
            double sample = bytes / Math.max(1, transfer);
            bytesPerNano = bytesPerNano == 0 ? sample : bytesPerNano + SMOOTHING * (sample - bytesPerNano);
        }
    }

    private long lastFetchEstimate() {
        synchronized (estimates) {
            return lastFetchEstimate;
        }
    }

    private long lastRecomputeEstimate() {
        synchronized (estimates) {
            return lastRecomputeEstimate;
        }
    }

    private void reject(RemoteRejection cause, String key) {
        rejections.incrementAndGet(cause.ordinal());
        if (rejectionLogged.compareAndSet(cause.ordinal(), 0, 1)) {
            LOG.log(System.Logger.Level.WARNING, "kvtier: a value from the remote block store " + store.describe()
                    + " was not served (" + cause + "), key " + key + "; such values are misses, counted in"
                    + " CacheStats.remote().rejections(" + cause + "), and this is logged once per cause");
        }
    }

    // ---------------------------------------------------------------- health

    /** Whether the store may be asked now: up, or down with its backoff over (a retry). */
    private boolean usable() {
        if (!down) {
            return true;
        }
        synchronized (health) {
            return System.nanoTime() - retryAt >= 0;
        }
    }

    private void fail(Throwable cause) {
        failures.increment();
        knownRemote.clear(); // the store may come back empty
        long backoff;
        boolean wasDown;
        synchronized (health) {
            wasDown = down;
            backoffNanos = backoffNanos == 0 ? FIRST_BACKOFF_NANOS : Math.min(MAX_BACKOFF_NANOS, backoffNanos * 2);
            backoff = backoffNanos;
            retryAt = System.nanoTime() + backoff;
            down = true;
        }
        if (!wasDown) {
            LOG.log(System.Logger.Level.WARNING, "kvtier: remote block store " + store.describe() + " marked down ("
                    + cause + "); local tiers keep working, retried after "
                    + TimeUnit.NANOSECONDS.toMillis(backoff) + " ms, backing off to at most "
                    + TimeUnit.NANOSECONDS.toSeconds(MAX_BACKOFF_NANOS) + " s");
        }
    }

    private void succeeded() {
        if (!down) {
            return;
        }
        synchronized (health) {
            if (!down) {
                return;
            }
            down = false;
            backoffNanos = 0;
        }
        LOG.log(System.Logger.Level.INFO, "kvtier: remote block store " + store.describe() + " is up again");
    }

    /** The call's answer within the timeout, or null (the store marked down) when it failed, threw or timed out. */
    private <T> T await(java.util.function.Supplier<CompletableFuture<T>> call) {
        CompletableFuture<T> future;
        try {
            future = call.get();
        } catch (RuntimeException e) {
            fail(e);
            return null;
        }
        try {
            T answer = future.get(timeoutNanos, TimeUnit.NANOSECONDS);
            succeeded();
            return answer;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (ExecutionException e) {
            fail(e.getCause());
            return null;
        } catch (TimeoutException e) {
            fail(new TimeoutException("no answer within the transfer timeout, "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms"));
            return null;
        } catch (RuntimeException e) { // a cancelled future
            fail(e);
            return null;
        }
    }

    // ---------------------------------------------------------------- write-through

    /**
     * Queues the blocks a store call added for writing ({@link RemoteStoreConfig.WriteThrough#ON_STORE}): block
     * {@code i} of the call is {@code high[i]}, {@code low[i]} with bytes
     * {@code [i * bytesPerBlock, (i + 1) * bytesPerBlock)} of {@code bytes}, its parent block {@code i - 1} (the
     * first's {@code parentHigh}, {@code parentLow}); it is queued where {@code added[i]} is set and this cache has not
     * sent it (or fetched it) already, as far as it remembers. Copies the bytes out now; drops (counts) what does not
     * fit the bound on bytes in flight. Never blocks.
     */
    public void writeStored(RemoteBlockFormat format, long parentHigh, long parentLow, long[] high, long[] low,
                            MemorySegment bytes, boolean[] added) {
        if (config.writeThrough() != RemoteStoreConfig.WriteThrough.ON_STORE) {
            return;
        }
        long bytesPerBlock = bytes.byteSize() / Math.max(1, high.length);
        for (int i = 0; i < high.length; i++) {
            if (!added[i] || knownRemote.contains(high[i], low[i])) {
                continue;
            }
            if (closing || !usable() || !reserve(format.valueBytes())) {
                int left = 0;
                for (int j = i; j < high.length; j++) {
                    left += added[j] && !knownRemote.contains(high[j], low[j]) ? 1 : 0;
                }
                writesDropped.add(left);
                return;
            }
            byte[] value = takeValue(format);
            MemorySegment.copy(bytes, ValueLayout.JAVA_BYTE, i * bytesPerBlock, value, format.payloadOffset(),
                    (int) bytesPerBlock);
            writes.add(new Write(format, value, high[i], low[i], i == 0 ? parentHigh : high[i - 1],
                    i == 0 ? parentLow : low[i - 1], false));
        }
    }

    /**
     * Queues block {@code high}, {@code low} just demoted to DISK for writing
     * ({@link RemoteStoreConfig.WriteThrough#ON_DEMOTION_TO_DISK}); the writer reads its bytes (under its lock, so
     * never a page that was reused). Never blocks.
     */
    void writeDemoted(long high, long low, long sizeBytes) {
        RemoteBlockFormat format = null;
        for (RemoteBlockFormat f : formats.values()) {
            if (f.bytesPerBlock() == sizeBytes) {
                format = f;
                break;
            }
        }
        if (format == null || knownRemote.contains(high, low)) {
            return; // no view of this layout opened (not a block this cache shares), or sent already
        }
        if (closing || !usable() || !reserve(format.valueBytes())) {
            writesDropped.increment();
            return;
        }
        writes.add(new Write(format, null, high, low, 0, 0, true));
    }

    private java.util.concurrent.ArrayBlockingQueue<byte[]> spares(RemoteBlockFormat format) {
        return spareValues.computeIfAbsent(format, f -> new java.util.concurrent.ArrayBlockingQueue<>(
                (int) Math.max(1, Math.min(4096, config.maxBytesInFlight() / f.valueBytes()))));
    }

    /** A value of {@code format} to fill: a spare one, or a new one. */
    private byte[] takeValue(RemoteBlockFormat format) {
        byte[] spare = spares(format).poll();
        return spare != null ? spare : format.newValue();
    }

    private boolean reserve(long bytes) {
        while (true) {
            long queued = bytesQueued.get();
            if (queued + bytes > config.maxBytesInFlight()) {
                return false;
            }
            if (bytesQueued.compareAndSet(queued, queued + bytes)) {
                return true;
            }
        }
    }

    private void writeLoop() {
        List<Write> batch = new ArrayList<>(WRITE_BATCH_VALUES);
        while (true) {
            try {
                Write first = writes.poll(20, TimeUnit.MILLISECONDS);
                if (first == null) {
                    if (closing) {
                        return;
                    }
                    continue;
                }
                batch.add(first);
                writes.drainTo(batch, WRITE_BATCH_VALUES - 1);
                send(batch);
            } catch (InterruptedException e) {
                if (closing) {
                    return;
                }
            } catch (RuntimeException | Error e) {
                // Never let the writer die: count what is lost (send released its bytes) and go on.
                LOG.log(System.Logger.Level.WARNING, "kvtier: remote write-through failed", e);
                writesDropped.add(batch.size());
            } finally {
                batch.clear();
            }
        }
    }

    private void send(List<Write> batch) {
        long reserved = 0;
        for (Write write : batch) {
            reserved += write.format.valueBytes();
        }
        try {
            Map<String, byte[]> values = new LinkedHashMap<>(); // in the order queued: a chain's parents first
            Map<String, RemoteBlockFormat> formatOf = new HashMap<>();
            List<Write> sealed = new ArrayList<>(batch.size());
            int lost = 0;
            for (Write write : batch) {
                byte[] value = write.value;
                long parentHigh = write.parentHigh;
                long parentLow = write.parentLow;
                if (write.demoted) {
                    BlockReader from = reader;
                    value = takeValue(write.format);
                    long[] parent = from == null ? null : from.read(write.high, write.low,
                            write.format.bytesPerBlock(), write.format.tokensPerBlock(), value,
                            write.format.payloadOffset());
                    if (parent == null) {
                        lost++; // gone (or the cache closing) since it was demoted
                        continue;
                    }
                    parentHigh = parent[0];
                    parentLow = parent[1];
                }
                write.format.seal(value, write.high, write.low, parentHigh, parentLow);
                String key = write.format.keyOf(write.high, write.low);
                values.put(key, value);
                formatOf.put(key, write.format);
                sealed.add(write);
            }
            writesDropped.add(lost);
            if (values.isEmpty()) {
                return;
            }
            if (System.nanoTime() - writerDeadline > 0 || !usable()) {
                writesDropped.add(values.size());
                return;
            }
            Object done = await(() -> store.putAll(values).thenApply(ignored -> Boolean.TRUE));
            if (done == null) {
                writesDropped.add(values.size());
            } else {
                // Remembered before counted: whoever sees a block counted written sees it known to the store too.
                for (Write write : sealed) {
                    knownRemote.add(write.high, write.low);
                }
                blocksWritten.add(values.size());
                // Each array once (a block queued twice in a batch keeps only its last value in the map).
                formatOf.forEach((key, format) -> spares(format).offer(values.get(key)));
            }
        } finally {
            bytesQueued.addAndGet(-reserved);
        }
    }

    /**
     * Blocks known to be in the store, as far as a fixed table remembers: one 64-bit fingerprint of a block's 128-bit
     * hash per slot, the slot chosen by the fingerprint, a new block replacing the one in its slot. A block it says
     * it holds was put or fetched by this cache, unless two hashes share a fingerprint (about 2^-64 for a pair); one it
     * does not hold may still be in the store. Thread-safe: each slot is one atomic word.
     */
    static final class KnownRemote {
        private static final long EMPTY = 0;
        private final AtomicLongArray fingerprints;
        private final int mask;

        KnownRemote(int slots) {
            if (Integer.bitCount(slots) != 1) {
                throw new IllegalArgumentException("slots must be a power of two, was " + slots);
            }
            this.fingerprints = new AtomicLongArray(slots);
            this.mask = slots - 1;
        }

        void add(long high, long low) {
            long fingerprint = fingerprint(high, low);
            fingerprints.setOpaque(slot(fingerprint), fingerprint);
        }

        boolean contains(long high, long low) {
            long fingerprint = fingerprint(high, low);
            return fingerprints.getOpaque(slot(fingerprint)) == fingerprint;
        }

        void clear() {
            for (int i = 0; i <= mask; i++) {
                fingerprints.setOpaque(i, EMPTY);
            }
        }

        private int slot(long fingerprint) {
            return (int) (fingerprint >>> 32) & mask;
        }

        /** Both words mixed (hashes made of small numbers, as tests and benchmarks use, spread too); never EMPTY. */
        private static long fingerprint(long high, long low) {
            long f = mix(mix(high) ^ low);
            return f == EMPTY ? 1 : f;
        }

        /** MurmurHash3's 64-bit finalizer: a bijection, each input bit flipping about half the output bits. */
        private static long mix(long x) {
            x = (x ^ (x >>> 33)) * 0xff51afd7ed558ccdL;
            x = (x ^ (x >>> 33)) * 0xc4ceb93fe53e2b4fL;
            return x ^ (x >>> 33);
        }
    }

    /** Bytes of writes queued or in flight now. */
    long bytesQueued() {
        return bytesQueued.get();
    }

    // ---------------------------------------------------------------- stats and close

    /** A snapshot of the counters and estimates. */
    public RemoteStoreStats stats() {
        long[] rejected = new long[RemoteRejection.values().length];
        for (int i = 0; i < rejected.length; i++) {
            rejected[i] = rejections.get(i);
        }
        synchronized (estimates) {
            return new RemoteStoreStats(true, down, remoteBlocksFound.sum(), gatedBlocks.sum(), blocksFetched.sum(),
                    bytesFetched.sum(), blocksWritten.sum(), writesDropped.sum(), failures.sum(), rejected,
                    (long) roundTripNanos, (long) (bytesPerNano * 1e9), lastFetchEstimate, lastRecomputeEstimate);
        }
    }

    /** The store's description (never a secret). */
    public String describe() {
        return store.describe();
    }

    /**
     * Stops the writer, giving it until {@code deadline} ({@link System#nanoTime()}) to send what is queued (what is
     * left is dropped, counted), then closes the store if this cache opened it. Idempotent.
     */
    public void close(long deadline) {
        if (closing) {
            return;
        }
        writerDeadline = deadline;
        closing = true;
        long waitNanos = deadline - System.nanoTime();
        try {
            if (waitNanos > 0) {
                writer.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        writer.interrupt();
        fetchers.shutdown(); // each fetch is bounded by the timeout; none is waited for here
        List<Write> left = new ArrayList<>();
        writes.drainTo(left);
        for (Write write : left) {
            bytesQueued.addAndGet(-write.format.valueBytes());
        }
        writesDropped.add(left.size());
        if (ownsStore) {
            store.close();
        }
    }

    @Override
    public void close() {
        close(System.nanoTime() + timeoutNanos);
    }
}
