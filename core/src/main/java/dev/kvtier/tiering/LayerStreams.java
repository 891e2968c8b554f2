package dev.kvtier.tiering;

import dev.kvtier.concurrent.KvTierThreads;
import dev.kvtier.exec.PageAllocation;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentHandle;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Opens {@link LayerStream}s: pins a chain where it is ({@link PrefixChains#pinInPlace}), takes the staging area's
 * bytes from the GPU budget (making room there as a restore does: the store books them under a key of their own that
 * the policy never offers, so budgets, room making and eviction all see them) and its pages from GPU memory, and gives
 * both back when the stream closes. Owns the threads that run the streams' copies. Thread-safe.
 */
final class LayerStreams {
    /** The store's key of a staging area's bytes: a character no user key is expected to hold, then a sequence number. */
    static final String STAGING_KEY_PREFIX = "\u0000kvtier-layer-staging/";

    private final PrefixChains chains;
    private final TieredStore store;
    private final RoomMaker roomMaker;
    private final Mover mover;
    private final TierMemories memories;
    private final OperationGate gate;
    private final TieringEngine engine;
    private final ExecutorService copiers;
    private final Completions completers = new Completions("prefix-stream-complete");
    private final Set<LayerStream> open = ConcurrentHashMap.newKeySet();
    private final AtomicLong sequence = new AtomicLong();

    LayerStreams(TieringEngine engine, PrefixChains chains, TieredStore store, RoomMaker roomMaker, Mover mover,
                 TierMemories memories, OperationGate gate) {
        this.engine = engine;
        this.chains = chains;
        this.store = store;
        this.roomMaker = roomMaker;
        this.mover = mover;
        this.memories = memories;
        this.gate = gate;
        this.copiers = Executors.newCachedThreadPool(KvTierThreads.factory("prefix-stream"));
    }

    /**
     * Entered: pins the leading cached run of the chain where each block is and starts streaming it layer by layer
     * ({@code offsets[l]}, {@code lengths[l]}: layer {@code l}'s ranges in every block).
     *
     * @throws dev.kvtier.TierFullException        if no room could be made on the GPU tier for the staging area (nothing
     *                                             stays pinned)
     * @throws dev.kvtier.SegmentCorruptedException if a DISK block's bytes fail their check
     * @throws IllegalArgumentException            if a block is not of {@code geometry}
     */
    LayerStream open(long[] high, long[] low, BlockGeometry geometry, long[][] offsets, long[][] lengths) {
        PrefixChains.PinnedInPlace pinned = chains.pinInPlace(high, low, geometry);
        boolean started = false;
        SegmentHandle booked = null;
        PageAllocation staging = null;
        try {
            long layerBytes = 0;
            for (long[] layer : lengths) {
                long bytes = 0;
                for (long length : layer) {
                    bytes += length;
                }
                layerBytes = Math.max(layerBytes, bytes);
            }
            long staged = 0;
            for (Tier tier : pinned.tiers()) {
                staged += tier == Tier.GPU ? 0 : 1;
            }
            long slotBytes = staged * layerBytes;
            long stagingBytes = slotBytes * Math.min(LayerStream.SLOTS, offsets.length);
            Runnable releaseStaging = null;
            if (stagingBytes > 0) {
                String key = STAGING_KEY_PREFIX + sequence.incrementAndGet();
                SegmentMeta meta = SegmentMeta.of(key, PositionRange.of(0, 1), stagingBytes);
                booked = roomMaker.makingRoomUntil(key, Tier.GPU, stagingBytes, PrefixChains.RESTORE_ROUNDS,
                        () -> store.registerHandle(meta, Tier.GPU, null));
                store.hold(booked); // never a candidate: only close() gives these bytes back
                staging = roomMaker.withRoom(key, Tier.GPU, stagingBytes, RoomMaker.SHORTAGE_PATIENCE,
                        () -> mover.allocate(key, Tier.GPU, stagingBytes, null));
                releaseStaging = releaser(booked, staging);
            }
            LayerStream[] self = new LayerStream[1];
            LayerStream stream = new LayerStream(gate, memories, engine, copiers, completers.sequence(),
                    () -> open.remove(self[0]), pinned, offsets, lengths, slotBytes, staging, releaseStaging);
            self[0] = stream;
            open.add(stream);
            stream.start();
            started = true;
            return stream;
        } finally {
            if (!started) {
                if (staging != null) {
                    memories.release(staging);
                }
                if (booked != null) {
                    store.discard(booked);
                }
                pinned.unpin().run();
            }
        }
    }

    /** Gives a staging area's pages and budget back (nothing after the cache closed: close freed everything). */
    private Runnable releaser(SegmentHandle booked, PageAllocation staging) {
        return () -> {
            if (!gate.tryEnter()) {
                return;
            }
            try {
                memories.release(staging);
                store.discard(booked);
            } finally {
                gate.exit();
            }
        };
    }

    /**
     * After the gate closed: ends every open stream (their layers not yet arrived fail), stops the copier threads and
     * lets the completions run, until {@code deadlineNanos} at most.
     */
    void shutdown(long deadlineNanos) {
        IllegalStateException closed = new IllegalStateException("the cache was closed while the prefix was streaming");
        for (LayerStream stream : open.toArray(LayerStream[]::new)) {
            stream.end(closed);
        }
        copiers.shutdown();
        if (!Completions.onCompleter()) {
            Completions.awaitUntil(copiers, deadlineNanos, "prefix streams");
        }
        completers.shutdown(deadlineNanos);
    }
}
