package dev.kvtier.sync;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The cache state that the {@link SyncEvent}s of {@code worldSize} ranks over {@code numLayers} layers
 * imply: the latest sequence position of every (rank, layer), the confirmed prefixes and their token
 * counts, and a bounded log of the most recent events. Metadata only: it holds no tensors.
 *
 * <p><b>Semantics</b> (the Rust seed's): {@link SyncEvent.ShardUpdated} and {@link SyncEvent.ShardEvicted}
 * both set the (rank, layer)'s position to the event's {@code seqPos}; {@link SyncEvent.PrefixConfirmed}
 * sets the prefix's token count; {@link SyncEvent.FlushAll} forgets all positions and prefixes. Every
 * event, {@code FlushAll} included, is then appended to the log; when the log holds more than
 * {@link #withMaxLogSize(int) maxLogSize} events (default {@value #DEFAULT_MAX_LOG_SIZE}) the oldest are
 * dropped.
 *
 * <p><b>Thread safety.</b> All methods may be called from any thread. Each method is atomic:
 * {@link #recordEvent} applies the event and appends it to the log as one step, so no query ever sees
 * the one without the other or half of a {@code FlushAll}, and the log order is the order in which the
 * events were applied (replaying the log, when nothing was dropped, rebuilds the same state). Each
 * query answers from one consistent state; {@link #recentEvents(int)} returns a snapshot. A sequence of
 * calls is not atomic as a whole. Queries share a read lock and run in parallel; {@code recordEvent}
 * and {@code withMaxLogSize} take the write lock.
 *
 * <p><b>Cost.</b> Positions live in a dense {@code worldSize x numLayers} array: {@code recordEvent} and
 * {@link #latestPosition} are O(1), {@link #minSyncedPosition} is O(worldSize), {@code FlushAll} is
 * O(worldSize x numLayers + prefixes). The log is a ring buffer; {@code recentEvents(n)} is O(n).
 *
 * <p><b>Errors</b> ({@link IllegalArgumentException} naming the argument and value; nothing is changed):
 * {@code worldSize <= 0}, {@code numLayers < 0}, a shape too large for one array, an event that is
 * {@code null} or names a rank outside {@code [0, worldSize)} or a layer outside {@code [0, numLayers)},
 * a negative {@code maxLogSize} or {@code n}, and queries for such a rank or layer. (Negative positions
 * and token counts are already refused by the event records.) The seed accepted all of these and
 * answered "unknown".
 *
 * <p>Differences from the seed beyond the above: {@link #withMaxLogSize(int)} trims the log at once, so
 * {@code eventCount() <= maxLogSize} always holds (the seed trimmed on the next event).
 */
public final class CacheSyncProtocol {
    /** Log capacity unless {@link #withMaxLogSize(int)} says otherwise (the seed's default). */
    public static final int DEFAULT_MAX_LOG_SIZE = 10_000;

    /** Marks a (rank, layer) that has not reported; real positions are {@code >= 0}. */
    private static final long NO_POSITION = -1L;

    /** Stands for "this event touches no position cell" in {@link #recordEvent}. */
    private static final int NO_CELL = -1;

    private final int worldSize;
    private final int numLayers;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    // Everything below is guarded by lock.
    /** Layer-major: (rank, layer) at {@code layer * worldSize + rank}, so one layer's ranks are adjacent. */
    private final long[] positions;
    private final Map<Long, Long> confirmedPrefixes = new HashMap<>();
    private final ArrayDeque<SyncEvent> log = new ArrayDeque<>();
    private int maxLogSize = DEFAULT_MAX_LOG_SIZE;

    /**
     * A protocol for {@code worldSize} ranks and {@code numLayers} layers, with nothing reported yet.
     *
     * @param worldSize how many ranks report, {@code >= 1}; ranks are {@code [0, worldSize)}
     * @param numLayers how many layers each rank reports positions for, {@code >= 0}; layers are {@code [0,
     *                  numLayers)}
     * @throws IllegalArgumentException if {@code worldSize <= 0}, {@code numLayers < 0}, or
     *     {@code worldSize * numLayers} does not fit in one Java array
     */
    public CacheSyncProtocol(int worldSize, int numLayers) {
        Checks.requireWorldSize(worldSize);
        Checks.requireNonNegative("numLayers", numLayers);
        long cells = (long) worldSize * numLayers;
        if (cells > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("worldSize * numLayers must be at most " + (Integer.MAX_VALUE - 8)
                    + ", got " + worldSize + " * " + numLayers + " = " + cells);
        }
        this.worldSize = worldSize;
        this.numLayers = numLayers;
        this.positions = new long[(int) cells];
        Arrays.fill(positions, NO_POSITION);
    }

    /**
     * Sets how many events the log keeps (oldest dropped first) and drops the oldest events at once if
     * the log is now longer. {@code 0} is allowed: events are still applied but none is kept, so
     * {@link #eventCount()} stays 0.
     *
     * @param maxLogSize the most events the log keeps, {@code >= 0}
     * @return this protocol
     * @throws IllegalArgumentException if {@code maxLogSize < 0}
     */
    public CacheSyncProtocol withMaxLogSize(int maxLogSize) {
        Checks.requireNonNegative("maxLogSize", maxLogSize);
        lock.writeLock().lock();
        try {
            this.maxLogSize = maxLogSize;
            trimLog();
        } finally {
            lock.writeLock().unlock();
        }
        return this;
    }

    /**
     * Applies {@code event} to the state and appends it to the log, atomically (see the class Javadoc).
     *
     * @param event the event a rank reported, not null; kept in the log as given (events are immutable)
     * @throws IllegalArgumentException if {@code event} is {@code null} or names a rank outside
     *     {@code [0, worldSize)} or a layer outside {@code [0, numLayers)}; nothing is changed then
     */
    public void recordEvent(SyncEvent event) {
        if (event == null) {
            throw new IllegalArgumentException("event must not be null");
        }
        // Validate before locking: a refused event changes nothing and never holds up readers.
        int cell = switch (event) {
            case SyncEvent.ShardUpdated e -> cell(e.rank(), e.layer());
            case SyncEvent.ShardEvicted e -> cell(e.rank(), e.layer());
            case SyncEvent.PrefixConfirmed _ -> NO_CELL;
            case SyncEvent.FlushAll _ -> NO_CELL;
        };
        lock.writeLock().lock();
        try {
            switch (event) {
                case SyncEvent.ShardUpdated e -> positions[cell] = e.seqPos();
                case SyncEvent.ShardEvicted e -> positions[cell] = e.seqPos();
                case SyncEvent.PrefixConfirmed e -> confirmedPrefixes.put(e.prefixId(), e.numTokens());
                case SyncEvent.FlushAll _ -> {
                    Arrays.fill(positions, NO_POSITION);
                    confirmedPrefixes.clear();
                }
            }
            log.addLast(event);
            trimLog();
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * Forgets every position {@code rank} reported, as if it had never reported (a restarted rank starts over; the
     * cluster router calls this when a rank resets). Other ranks, confirmed prefixes and the log are unchanged: this
     * is not an event of the seed, so nothing is appended to the log. O(numLayers).
     *
     * @param rank the rank whose reports are forgotten, in {@code [0, worldSize)}
     * @throws IllegalArgumentException if {@code rank} is outside {@code [0, worldSize)}
     */
    public void forgetRank(int rank) {
        Checks.requireIndex("rank", rank, "worldSize", worldSize);
        lock.writeLock().lock();
        try {
            for (int layer = 0; layer < numLayers; layer++) {
                positions[layer * worldSize + rank] = NO_POSITION;
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Caller holds the write lock. */
    private void trimLog() {
        while (log.size() > maxLogSize) {
            log.removeFirst();
        }
    }

    /**
     * The latest sequence position reported for ({@code rank}, {@code layer}) by a
     * {@link SyncEvent.ShardUpdated} or {@link SyncEvent.ShardEvicted} since the last
     * {@link SyncEvent.FlushAll}; empty if none.
     *
     * @param rank  the reporting rank, in {@code [0, worldSize)}
     * @param layer the layer, in {@code [0, numLayers)}
     * @return the latest position reported, or empty when none was since the last flush
     * @throws IllegalArgumentException if {@code rank} is outside {@code [0, worldSize)} or {@code layer}
     *     outside {@code [0, numLayers)}
     */
    public OptionalLong latestPosition(int rank, int layer) {
        int cell = cell(rank, layer);
        lock.readLock().lock();
        try {
            return present(positions[cell]);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * The smallest latest position over all ranks for {@code layer}: the position up to which every
     * rank is in sync. Empty if any rank has not reported for that layer.
     *
     * @param layer the layer, in {@code [0, numLayers)}
     * @return the smallest of the ranks' latest positions for {@code layer}, or empty when a rank has none
     * @throws IllegalArgumentException if {@code layer} is outside {@code [0, numLayers)}
     */
    public OptionalLong minSyncedPosition(int layer) {
        Checks.requireIndex("layer", layer, "numLayers", numLayers);
        int first = layer * worldSize;
        lock.readLock().lock();
        try {
            long min = Long.MAX_VALUE;
            for (int cell = first; cell < first + worldSize; cell++) {
                long position = positions[cell];
                if (position == NO_POSITION) {
                    return OptionalLong.empty();
                }
                min = Math.min(min, position);
            }
            return OptionalLong.of(min);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Whether {@code prefixId} (any 64-bit value) has been confirmed since the last {@link SyncEvent.FlushAll}.
     *
     * @param prefixId the prefix's 64-bit id, any bit pattern
     * @return true when a confirmation of {@code prefixId} was recorded since the last flush
     */
    public boolean isPrefixConfirmed(long prefixId) {
        lock.readLock().lock();
        try {
            return confirmedPrefixes.containsKey(prefixId);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * The token count of confirmed prefix {@code prefixId} (latest confirmation wins); empty if not confirmed.
     *
     * @param prefixId the prefix's 64-bit id, any bit pattern
     * @return the token count of the latest confirmation, or empty when {@code prefixId} is not confirmed
     */
    public OptionalLong prefixTokens(long prefixId) {
        lock.readLock().lock();
        try {
            Long tokens = confirmedPrefixes.get(prefixId);
            return tokens == null ? OptionalLong.empty() : OptionalLong.of(tokens);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Number of events in the log: all events recorded, minus those dropped to keep within maxLogSize.
     *
     * @return the number of events the log holds now, in {@code [0, maxLogSize]}
     */
    public int eventCount() {
        lock.readLock().lock();
        try {
            return log.size();
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * The last {@code min(n, eventCount())} events of the log, oldest first, as an unmodifiable
     * snapshot that later events do not change.
     *
     * @param n how many of the latest events to return at most, {@code >= 0}
     * @return an unmodifiable snapshot of up to {@code n} events, oldest first; empty when {@code n} is 0 or the log
     *         is empty
     * @throws IllegalArgumentException if {@code n < 0}
     */
    public List<SyncEvent> recentEvents(int n) {
        Checks.requireNonNegative("n", n);
        lock.readLock().lock();
        try {
            int count = Math.min(n, log.size());
            SyncEvent[] recent = new SyncEvent[count];
            Iterator<SyncEvent> newestFirst = log.descendingIterator();
            for (int i = count - 1; i >= 0; i--) {
                recent[i] = newestFirst.next();
            }
            return List.of(recent);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Validated index of ({@code rank}, {@code layer}) in {@link #positions}. */
    private int cell(int rank, int layer) {
        Checks.requireIndex("rank", rank, "worldSize", worldSize);
        Checks.requireIndex("layer", layer, "numLayers", numLayers);
        return layer * worldSize + rank;
    }

    private static OptionalLong present(long position) {
        return position == NO_POSITION ? OptionalLong.empty() : OptionalLong.of(position);
    }

    @Override
    public String toString() {
        lock.readLock().lock();
        try {
            return "CacheSyncProtocol[worldSize=" + worldSize + ", numLayers=" + numLayers + ", events=" + log.size()
                    + ", maxLogSize=" + maxLogSize + ", confirmedPrefixes=" + confirmedPrefixes.size() + "]";
        } finally {
            lock.readLock().unlock();
        }
    }
}
