package dev.kvtier.exec.cuda;

import dev.kvtier.cuda.CudaEvent;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.CudaStream;
import dev.kvtier.cuda.MemcpyKind;
import dev.kvtier.cuda.PinnedAllocation;
import dev.kvtier.exec.Cleanup;
import dev.kvtier.exec.CopyRegion;
import dev.kvtier.exec.TransferTimeoutException;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Copies between device memory and host memory the device should not read directly (unregistered
 * file mappings) through pinned bounce buffers: a small pool from {@code cudaHostAlloc}, allocated
 * on first use, in pairs. One staged copy leases one pair and alternates between its two buffers,
 * chunk by chunk (chunks of at most one buffer), so the host {@code memcpy} of one chunk overlaps
 * the DMA of the previous one. A buffer is written or read by the host, and a pair is handed back
 * or freed, only after the event recorded after its last DMA has completed.
 *
 * <p>Thread-safe: as many staged copies run at once as there are pairs; further ones wait for a
 * pair. {@link #close()} frees the idle pairs at once and every leased pair when its copy hands it
 * back (by then its events have completed).
 */
final class BounceBuffers implements AutoCloseable {
    private final CudaRuntime cuda;
    private final long bufferBytes;
    private final int pairCount;
    private final Semaphore freePairs;
    private final ArrayDeque<Pair> idle = new ArrayDeque<>();
    /** Pairs a timed-out copy may still DMA into or out of: freed only once the engine has drained. */
    private final List<Pair> abandoned = new java.util.ArrayList<>();
    private boolean closed;

    /**
     * @param cuda        the runtime
     * @param bufferBytes bytes per bounce buffer, {@code > 0}
     * @param pairCount   pairs in the pool (each two buffers), {@code >= 1}: the number of staged copies at once
     */
    BounceBuffers(CudaRuntime cuda, long bufferBytes, int pairCount) {
        if (bufferBytes <= 0) {
            throw new IllegalArgumentException("bufferBytes must be > 0, was " + bufferBytes);
        }
        if (pairCount < 1) {
            throw new IllegalArgumentException("pairCount must be >= 1, was " + pairCount);
        }
        this.cuda = cuda;
        this.bufferBytes = bufferBytes;
        this.pairCount = pairCount;
        this.freePairs = new Semaphore(pairCount, true);
    }

    /**
     * Copies every region (host to device or device to host) through one leased pair, on {@code stream},
     * and returns when every byte is in place. On failure it returns only after no copy it enqueued can
     * still touch either side or the buffers, and throws what failed (a {@code CudaException} naming the
     * call and error, or the fault from reading a mapping). Every wait ends at {@code deadline}
     * ({@link System#nanoTime()}'s clock): then it throws {@link TransferTimeoutException}, and the pair,
     * which a DMA may still use, is abandoned (neither reused nor freed).
     */
    void copy(MemcpyKind kind, List<CopyRegion> regions, CudaStream stream, long deadline, long timeoutNanos) {
        if (kind != MemcpyKind.HOST_TO_DEVICE && kind != MemcpyKind.DEVICE_TO_HOST) {
            throw new IllegalArgumentException("kind must be HOST_TO_DEVICE or DEVICE_TO_HOST, was " + kind);
        }
        Wait wait = new Wait(deadline, timeoutNanos);
        Pair pair = lease(wait);
        boolean clean = false;
        boolean wedged = false;
        try {
            if (kind == MemcpyKind.HOST_TO_DEVICE) {
                stageToDevice(pair, regions, stream, wait);
            } else {
                stageToHost(pair, regions, stream, wait);
            }
            clean = true;
        } catch (TransferTimeoutException timedOut) {
            wedged = true;
            throw timedOut;
        } catch (RuntimeException | Error failure) {
            if (!drainAfter(pair, stream, failure, deadline)) {
                wedged = true;
                TransferTimeoutException timedOut = wait.timedOut("draining a failed staged copy");
                timedOut.addSuppressed(failure);
                throw timedOut;
            }
            throw failure;
        } finally {
            if (wedged) {
                synchronized (this) {
                    abandoned.add(pair); // a DMA may still use it: freed by freeAbandoned() once drained
                }
                freePairs.release();
            } else {
                giveBack(pair, clean);
            }
        }
    }

    /** When every wait of one staged copy ends. */
    private record Wait(long deadline, long timeoutNanos) {
        TransferTimeoutException timedOut(String what) {
            return new TransferTimeoutException(what, Duration.ofNanos(timeoutNanos));
        }
    }

    /** Mapping to buffer (host memcpy), buffer to device (DMA), alternating buffers. */
    private void stageToDevice(Pair pair, List<CopyRegion> regions, CudaStream stream, Wait wait) {
        int chunk = 0;
        for (CopyRegion region : regions) {
            for (long offset = 0; offset < region.byteSize(); offset += bufferBytes, chunk++) {
                long length = Math.min(bufferBytes, region.byteSize() - offset);
                Buffer buffer = pair.buffer(chunk);
                buffer.awaitLastCopy(wait);
                MemorySegment staging = buffer.memory.segment().asSlice(0, length);
                MemorySegment.copy(region.source(), offset, staging, 0, length);
                cuda.memcpyAsync(region.destination().asSlice(offset, length), staging, length,
                        MemcpyKind.HOST_TO_DEVICE, stream);
                buffer.recordLastCopy(cuda, stream);
            }
        }
        pair.first.awaitLastCopy(wait);
        pair.second.awaitLastCopy(wait);
    }

    /** Device to buffer (DMA), buffer to mapping (host memcpy) once that DMA is done; the next DMA runs meanwhile. */
    private void stageToHost(Pair pair, List<CopyRegion> regions, CudaStream stream, Wait wait) {
        MemorySegment[] pendingTarget = new MemorySegment[2];
        int chunk = 0;
        for (CopyRegion region : regions) {
            for (long offset = 0; offset < region.byteSize(); offset += bufferBytes, chunk++) {
                long length = Math.min(bufferBytes, region.byteSize() - offset);
                int slot = chunk & 1;
                Buffer buffer = pair.buffer(chunk);
                if (pendingTarget[slot] != null) {
                    unstage(buffer, pendingTarget[slot], wait);
                    pendingTarget[slot] = null;
                }
                cuda.memcpyAsync(buffer.memory.segment().asSlice(0, length), region.source().asSlice(offset, length),
                        length, MemcpyKind.DEVICE_TO_HOST, stream);
                buffer.recordLastCopy(cuda, stream);
                pendingTarget[slot] = region.destination().asSlice(offset, length);
            }
        }
        // The older chunk first; either order gives the same bytes.
        for (int i = 0; i < 2; i++) {
            int slot = (chunk + i) & 1;
            if (pendingTarget[slot] != null) {
                unstage(pair.buffer(slot), pendingTarget[slot], wait);
            }
        }
    }

    private static void unstage(Buffer buffer, MemorySegment target, Wait wait) {
        buffer.awaitLastCopy(wait);
        MemorySegment.copy(buffer.memory.segment(), 0, target, 0, target.byteSize());
    }

    /**
     * After a failure: waits, at most until {@code deadline}, until nothing this copy enqueued can still
     * run (the stream drained, which also reads and clears a pending asynchronous error), keeping
     * further errors as suppressed.
     *
     * @return false if work was still running at the deadline
     */
    private static boolean drainAfter(Pair pair, CudaStream stream, Throwable failure, long deadline) {
        if (!StreamWaits.drain(stream, failure, deadline)) {
            return false;
        }
        pair.first.forgetLastCopy();
        pair.second.forgetLastCopy();
        return true;
    }

    private Pair lease(Wait wait) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (!freePairs.tryAcquire(Math.max(0, wait.deadline() - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                        throw wait.timedOut("waiting for a pair of bounce buffers (" + pairCount + " in use)");
                    }
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (this) {
            if (closed) {
                freePairs.release();
                throw new IllegalStateException("the bounce buffers are closed");
            }
            Pair pair = idle.poll();
            if (pair != null) {
                return pair;
            }
        }
        try {
            return newPair();
        } catch (RuntimeException e) {
            freePairs.release();
            throw e;
        }
    }

    private Pair newPair() {
        PinnedAllocation first = cuda.allocatePinned(bufferBytes);
        try {
            return new Pair(new Buffer(first), new Buffer(cuda.allocatePinned(bufferBytes)));
        } catch (RuntimeException e) {
            first.close();
            throw e;
        }
    }

    /** A pair whose events may be unusable (after a failure) keeps its memory but gets fresh events. */
    private void giveBack(Pair pair, boolean clean) {
        if (!clean) {
            pair.first.dropEvent();
            pair.second.dropEvent();
        }
        boolean free;
        synchronized (this) {
            free = closed;
            if (!free) {
                idle.push(pair);
            }
        }
        freePairs.release();
        if (free) {
            pair.free();
        }
    }

    /**
     * Frees the pairs abandoned by copies that timed out. Call only when no copy can still run (the
     * engine drained every stream).
     */
    void freeAbandoned() {
        List<Pair> toFree;
        synchronized (this) {
            toFree = List.copyOf(abandoned);
            abandoned.clear();
        }
        Cleanup cleanup = new Cleanup();
        for (Pair pair : toFree) {
            cleanup.run(pair::free);
        }
        cleanup.rethrowFirst();
    }

    /** Pairs in the pool: how many staged copies run at once. */
    int pairCount() {
        return pairCount;
    }

    /** Bytes per bounce buffer. */
    long bufferBytes() {
        return bufferBytes;
    }

    /** For logs. */
    String description() {
        return "staged through " + pairCount + " pair(s) of " + (bufferBytes >> 10) + " KiB pinned bounce buffers";
    }

    /** Frees the idle pairs now and each leased pair when its copy hands it back; idempotent. */
    @Override
    public void close() {
        List<Pair> toFree;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            toFree = List.copyOf(idle);
            idle.clear();
        }
        Cleanup cleanup = new Cleanup();
        for (Pair pair : toFree) {
            cleanup.run(pair::free);
        }
        cleanup.rethrowFirst();
    }

    private record Pair(Buffer first, Buffer second) {
        Buffer buffer(int chunk) {
            return (chunk & 1) == 0 ? first : second;
        }

        void free() {
            try {
                first.free();
            } finally {
                second.free();
            }
        }
    }

    /** One pinned buffer and the event recorded after the last DMA that touches it (if one may be pending). */
    private static final class Buffer {
        private final PinnedAllocation memory;
        private CudaEvent lastCopy;
        private boolean pending;

        Buffer(PinnedAllocation memory) {
            this.memory = memory;
        }

        void recordLastCopy(CudaRuntime cuda, CudaStream stream) {
            if (lastCopy == null) {
                lastCopy = cuda.createEvent(false);
            }
            lastCopy.record(stream);
            pending = true;
        }

        /**
         * Waits for the last DMA on this buffer; throws its asynchronous fault, if it had one, or
         * {@link TransferTimeoutException} at the deadline.
         */
        void awaitLastCopy(Wait wait) {
            if (pending) {
                if (!StreamWaits.await(lastCopy, wait.deadline())) {
                    throw wait.timedOut("a staged copy of " + memory.segment().byteSize() + " bytes through a bounce buffer");
                }
                pending = false;
            }
        }

        /** After the stream was drained: nothing is pending any more. */
        void forgetLastCopy() {
            pending = false;
        }

        void dropEvent() {
            pending = false;
            if (lastCopy != null) {
                try {
                    lastCopy.close();
                } catch (RuntimeException ignored) {
                    // An event that cannot be destroyed holds no memory of ours; a fresh one is made on next use.
                }
                lastCopy = null;
            }
        }

        void free() {
            try {
                dropEvent();
            } finally {
                memory.close();
            }
        }
    }
}
