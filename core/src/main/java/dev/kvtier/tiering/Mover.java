package dev.kvtier.tiering;

import dev.kvtier.SegmentCorruptedException;
import dev.kvtier.TransferFailedException;
import dev.kvtier.exec.PageAllocation;
import dev.kvtier.exec.PhysicallyFullException;
import dev.kvtier.observe.ChecksumFailureEvent;
import dev.kvtier.observe.TransferEvent;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TierTransfer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Moves one segment's bytes as a transaction with a lifetime: {@link #prepare} (check what leaves
 * DISK, allocate the destination) → {@link #copy} → {@link #commit} (the segment now lives at the
 * destination) or {@link #abort} (the destination is freed). The store has booked the move before
 * {@code prepare}; putting the booking back is the caller's ({@link RoomMaker#undo}), because it
 * may need room. A Mover never evicts. Every method runs with the segment's lock held.
 * Every copy is a JFR {@link TransferEvent}, every checksum mismatch a {@link ChecksumFailureEvent};
 * {@link #commit} counts the move and tells the {@link ChangeListeners}. Thread-safe.
 */
final class Mover {
    /**
     * A booked move: the store already lists the segment on {@code transfer.to()}, its bytes are still
     * in its placement, and {@code destination} has been allocated for them.
     */
    record Move(Segment segment, TierTransfer transfer, PageAllocation destination) { }

    private final TierMemories memories;
    private final TierCounters counters;
    private final ChangeListeners listeners;
    private final PersistedDisk persisted;

    Mover(TierMemories memories, TierCounters counters, ChangeListeners listeners, PersistedDisk persisted) {
        this.memories = memories;
        this.counters = counters;
        this.listeners = listeners;
        this.persisted = persisted;
    }

    /**
     * First half of a booked transfer for a locked segment: checks the bytes it leaves DISK with and
     * allocates their destination. On failure nothing is allocated and the exception says why
     * ({@link RoomShortage} when the destination tier is at its cap).
     */
    Move prepare(Segment segment, TierTransfer transfer) {
        if (transfer.from() == Tier.DISK) {
            verifyDiskChecksum(segment);
            segment.verified = true; // a recovered segment's first check, done: its bytes leave DISK intact
        }
        return new Move(segment, transfer, allocate(segment.key, transfer.to(), segment.sizeBytes, transfer.from()));
    }

    /** Copies a prepared move's bytes and checksums what arrived on DISK. */
    void copy(Move move) {
        Segment segment = move.segment();
        TierTransfer transfer = move.transfer();
        copy(() -> memories.transferAndWait(segment.placement, move.destination()), segment.key, transfer.from(),
                transfer.to(), segment.sizeBytes);
        checksumArrival(move);
    }

    /**
     * Copies the bytes of prepared moves together (one batch and one wait on the CUDA backend) and
     * checksums what arrived.
     *
     * @return per move, in order, what failed, or null where the bytes are in place
     */
    Throwable[] copyAll(List<Move> moves) {
        Throwable[] outcome = new Throwable[moves.size()];
        if (moves.isEmpty()) {
            return outcome;
        }
        List<PageAllocation> sources = new ArrayList<>(moves.size());
        List<PageAllocation> destinations = new ArrayList<>(moves.size());
        for (Move move : moves) {
            sources.add(move.segment().placement);
            destinations.add(move.destination());
        }
        Throwable copyFailure = null;
        TransferEvent[] events = beginIfRecording(moves.size());
        try {
            memories.transferAllAndWait(sources, destinations);
        } catch (RuntimeException | InternalError e) {
            // InternalError: a fault while touching a file mapping (the file shrank or the disk failed);
            // TransferTimeoutException: the copies did not complete in time (destinations quarantined).
            copyFailure = Failures.cause(e);
        }
        for (int i = 0; i < moves.size(); i++) {
            if (events != null) {
                Move move = moves.get(i);
                TransferEvent.finish(events[i], move.segment().key, move.transfer().from(), move.transfer().to(),
                        move.segment().sizeBytes, moves.size(), memories.backendName(), copyFailure);
            }
            Throwable failure = copyFailure;
            if (failure == null) {
                try {
                    checksumArrival(moves.get(i));
                } catch (RuntimeException | InternalError e) {
                    failure = e;
                }
            }
            outcome[i] = failure;
        }
        return outcome;
    }

    /** One started event per move of a batch when a recording wants transfers, else null (nothing allocated). */
    private static TransferEvent[] beginIfRecording(int moves) {
        TransferEvent first = TransferEvent.beginIfRecording();
        if (first == null) {
            return null;
        }
        TransferEvent[] events = new TransferEvent[moves];
        events[0] = first;
        for (int i = 1; i < moves; i++) {
            events[i] = TransferEvent.beginIfRecording();
        }
        return events;
    }

    /** Last half, once the bytes are in the destination: the segment now lives there. */
    void commit(Move move) {
        Segment segment = move.segment();
        if (move.transfer().from() == Tier.DISK) {
            persisted.leaving(segment); // before its pages can be reused
        }
        memories.release(segment.placement);
        segment.placement = move.destination();
        segment.countOn(move.transfer().to());
        if (move.transfer().to() == Tier.DISK) {
            persisted.stored(segment, move.destination()); // its bytes were checksummed on arrival
        }
        counters.transferred(move.transfer().from(), move.transfer().to(), segment.sizeBytes);
        listeners.moved(segment.key, move.transfer().from(), move.transfer().to(), segment.sizeBytes);
    }

    /** The move failed: frees its destination (the segment keeps its placement). */
    void abort(Move move) {
        memories.release(move.destination());
    }

    /**
     * Pages for segment {@code key} on {@code tier}; a tier at its cap throws {@link RoomShortage} (the
     * caller makes room and retries), any other failure to grow becomes a {@code TransferFailedException}.
     */
    PageAllocation allocate(String key, Tier tier, long bytes, Tier from) {
        try {
            return memories.allocate(tier, bytes);
        } catch (PhysicallyFullException e) {
            throw new RoomShortage(tier, e.shortBytes(), e);
        } catch (IOException e) {
            throw Failures.allocationFailed(key, from, tier, bytes, e);
        }
    }

    /**
     * Runs a blocking copy of {@code bytes} (a JFR transfer event when recorded); a failure becomes a
     * {@code TransferFailedException} naming the key and tiers (null: the caller's memory), with the CUDA
     * or I/O error as its cause.
     */
    void copy(Runnable blockingCopy, String key, Tier from, Tier to, long bytes) {
        TransferEvent event = TransferEvent.beginIfRecording();
        try {
            blockingCopy.run();
        } catch (RuntimeException | InternalError e) {
            TransferFailedException failure = Failures.copyFailed(key, from, to, e);
            TransferEvent.finish(event, key, from, to, bytes, 1, memories.backendName(), failure);
            throw failure;
        }
        TransferEvent.finish(event, key, from, to, bytes, 1, memories.backendName(), null);
    }

    /** Checks a locked DISK segment's bytes against the CRC32C of the bytes put. */
    void verifyDiskChecksum(Segment segment) {
        int actual;
        try {
            actual = memories.crc32c(segment.placement);
        } catch (InternalError unreadable) {
            throw unreadableOnDisk(segment, unreadable);
        }
        if (actual != segment.crc32c) {
            ChecksumFailureEvent.emit(segment.key, Tier.DISK, false, segment.crc32c, actual);
            throw new SegmentCorruptedException(segment.key, segment.crc32c, actual);
        }
    }

    /**
     * The fault of reading a file mapping whose file was truncated or whose storage failed. The JVM may
     * deliver it as an asynchronous exception at a safepoint just after the guarded copy that caused
     * it (outside that copy's own {@code catch}), so every checksum of DISK bytes catches it here too.
     */
    private static TransferFailedException unreadableOnDisk(Segment segment, InternalError fault) {
        return new TransferFailedException(segment.key, Tier.DISK, null, "the DISK bytes of segment \"" + segment.key
                + "\" cannot be read (its extent file was truncated or its storage failed): " + fault.getMessage(), fault);
    }

    /** Checks bytes that arrived on DISK against the checksum of what was meant to arrive. */
    private void checksumArrival(Move move) {
        if (move.transfer().to() == Tier.DISK) {
            checkArrival(move.segment(), move.destination(), move.transfer().from(), Tier.DISK);
        }
    }

    /**
     * Compares the CRC32C of host memory {@code arrived} (a DISK placement) with the segment's known
     * checksum; adopted memory arriving for the first time defines it.
     *
     * @throws TransferFailedException if the bytes are not the ones put: the copy did not deliver them
     */
    void checkArrival(Segment segment, PageAllocation arrived, Tier from, Tier to) {
        int actual;
        try {
            actual = memories.crc32c(arrived);
        } catch (InternalError unreadable) {
            throw unreadableOnDisk(segment, unreadable);
        }
        if (!segment.crcKnown) {
            segment.crc32c = actual;
            segment.crcKnown = true;
        } else if (actual != segment.crc32c) {
            ChecksumFailureEvent.emit(segment.key, to, true, segment.crc32c, actual);
            throw new TransferFailedException(segment.key, from, to, "segment \"" + segment.key + "\" arrived on "
                    + to + " with CRC32C " + Integer.toHexString(actual) + " but its bytes had "
                    + Integer.toHexString(segment.crc32c) + ": the copy did not deliver them", null);
        }
    }
}
