package dev.kvtier.exec;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Native buffers for staging heap bytes on their way to or from device memory, reused across
 * calls. They must be shared (a copy engine may touch them from its own threads), and closing a
 * shared arena costs a handshake with every thread, many times the copy of a 64 KiB segment
 * (bench/RESULTS.md, "Heap bytes into device memory", {@code HeapStagingBenchmark}). So buffers up to {@value #MAX_POOLED_BYTES} bytes are kept in
 * power-of-two size classes, at most {@value #MAX_IDLE_PER_CLASS} idle per class (under 64 MiB idle
 * in all, and only after heap copies of every size); larger ones (whose copy dwarfs the close) get
 * an arena of their own.
 *
 * <p>Thread-safe. Every {@link Buffer} from {@link #acquire} must be closed (try-with-resources);
 * {@link #close()} frees the idle buffers, and a buffer closed afterwards is freed at once.
 */
final class StagingBuffers implements AutoCloseable {
    static final long MIN_CLASS_BYTES = 64L << 10;
    static final long MAX_POOLED_BYTES = 16L << 20;
    static final int MAX_IDLE_PER_CLASS = 2;
    private static final int CLASSES = Long.numberOfTrailingZeros(MAX_POOLED_BYTES / MIN_CLASS_BYTES) + 1;

    private final ConcurrentLinkedQueue<Buffer>[] idle;
    private final AtomicInteger[] idleCounts = new AtomicInteger[CLASSES];
    private volatile boolean closed;

    @SuppressWarnings("unchecked")
    StagingBuffers() {
        idle = new ConcurrentLinkedQueue[CLASSES];
        for (int i = 0; i < CLASSES; i++) {
            idle[i] = new ConcurrentLinkedQueue<>();
            idleCounts[i] = new AtomicInteger();
        }
    }

    /** A native buffer of at least {@code bytes} bytes; {@link Buffer#segment()} is exactly {@code bytes} long. */
    Buffer acquire(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes must be >= 0, was " + bytes);
        }
        if (bytes > MAX_POOLED_BYTES) {
            Arena arena = Arena.ofShared();
            return new Buffer(this, -1, arena, arena.allocate(bytes, 64), bytes);
        }
        int sizeClass = sizeClass(bytes);
        Buffer pooled = idle[sizeClass].poll();
        if (pooled != null) {
            idleCounts[sizeClass].decrementAndGet();
            return pooled.reuse(bytes);
        }
        Arena arena = Arena.ofShared();
        return new Buffer(this, sizeClass, arena, arena.allocate(MIN_CLASS_BYTES << sizeClass, 64), bytes);
    }

    /** The smallest class whose buffers hold {@code bytes} ({@code <= MAX_POOLED_BYTES}). */
    static int sizeClass(long bytes) {
        long units = Math.max(1, (bytes + MIN_CLASS_BYTES - 1) / MIN_CLASS_BYTES);
        return 64 - Long.numberOfLeadingZeros(units - 1);
    }

    /** Idle buffers kept, all classes together. */
    int idleBuffers() {
        int total = 0;
        for (AtomicInteger count : idleCounts) {
            total += count.get();
        }
        return total;
    }

    private void giveBack(Buffer buffer) {
        int sizeClass = buffer.sizeClass;
        if (sizeClass >= 0 && !closed) {
            if (idleCounts[sizeClass].incrementAndGet() <= MAX_IDLE_PER_CLASS) {
                idle[sizeClass].offer(buffer);
                if (closed) {
                    drain(); // close() may have drained before this offer landed
                }
                return;
            }
            idleCounts[sizeClass].decrementAndGet();
        }
        buffer.arena.close();
    }

    private void drain() {
        for (int i = 0; i < CLASSES; i++) {
            for (Buffer buffer; (buffer = idle[i].poll()) != null; ) {
                idleCounts[i].decrementAndGet();
                buffer.arena.close();
            }
        }
    }

    /** Frees every idle buffer; buffers in use are freed when closed. Idempotent. */
    @Override
    public void close() {
        closed = true;
        drain();
    }

    /** One staging buffer on loan; {@link #close()} gives it back (once). Confined to one use at a time. */
    static final class Buffer implements AutoCloseable {
        private final StagingBuffers owner;
        private final int sizeClass;
        private final Arena arena;
        private final MemorySegment whole;
        private MemorySegment segment;
        private boolean returned;

        private Buffer(StagingBuffers owner, int sizeClass, Arena arena, MemorySegment whole, long bytes) {
            this.owner = owner;
            this.sizeClass = sizeClass;
            this.arena = arena;
            this.whole = whole;
            this.segment = whole.asSlice(0, bytes);
        }

        private Buffer reuse(long bytes) {
            segment = whole.asSlice(0, bytes);
            returned = false;
            return this;
        }

        /** The buffer, exactly as long as asked. */
        MemorySegment segment() {
            return segment;
        }

        /**
         * A copy that timed out may still touch this buffer: it is neither reused nor freed (its arena
         * stays open for the life of the process), and {@link #close()} then does nothing.
         */
        void abandon() {
            returned = true;
        }

        @Override
        public void close() {
            if (!returned) {
                returned = true;
                owner.giveBack(this);
            }
        }
    }
}
