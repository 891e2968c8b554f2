package dev.kvtier;

import dev.kvtier.exec.ChunkAllocator;
import dev.kvtier.exec.CopyEngine;
import dev.kvtier.exec.CopyPlan;
import dev.kvtier.exec.ExecutionBackend;
import dev.kvtier.exec.MemoryChunk;
import dev.kvtier.exec.StorageKind;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Wraps any backend to inject faults the contract suite needs: the Nth copy failing, a disk that
 * fills up after some bytes, copies that take a while (to have transfers in flight at close).
 */
final class FaultInjectingBackend implements ExecutionBackend {
    private final ExecutionBackend inner;
    private final AtomicInteger copiesLeftBeforeFailure;
    private final AtomicLong diskBytesLeft;
    private final java.util.function.LongSupplier copyDelayMillis;
    private final AtomicInteger copiesSubmitted = new AtomicInteger();
    private final CopyEngine engine;
    private final ChunkAllocator disk;

    private FaultInjectingBackend(ExecutionBackend inner, int failCopyNumber, long diskCapacity, long copyDelayMillis) {
        this(inner, failCopyNumber, diskCapacity, () -> copyDelayMillis);
    }

    private FaultInjectingBackend(ExecutionBackend inner, int failCopyNumber, long diskCapacity,
                                  java.util.function.LongSupplier copyDelayMillis) {
        this.inner = inner;
        this.copiesLeftBeforeFailure = new AtomicInteger(failCopyNumber);
        this.diskBytesLeft = new AtomicLong(diskCapacity);
        this.copyDelayMillis = copyDelayMillis;
        this.engine = new Engine(inner.copyEngine());
        this.disk = new LimitedDisk(inner.chunkAllocator(StorageKind.MAPPED_FILE));
    }

    /** Runs before the injected failure, on the thread that submitted the failing copy. */
    private volatile Runnable beforeFailure = () -> { };
    /** When set, the failing copy does nothing and reports success (a copy that silently lost its bytes). */
    private boolean silent;

    /**
     * Fails the {@code n}th copy, after running what {@code beforeFailure} holds at that moment (a
     * test sets it once the cache is open, e.g. to have another segment take room meanwhile).
     */
    static java.util.function.UnaryOperator<ExecutionBackend> failingCopy(int n,
            java.util.concurrent.atomic.AtomicReference<Runnable> beforeFailure) {
        return b -> {
            FaultInjectingBackend backend = new FaultInjectingBackend(b, n, Long.MAX_VALUE, 0);
            backend.beforeFailure = () -> beforeFailure.get().run();
            return backend;
        };
    }

    /** Fails the {@code n}th copy submitted from now on (1 = the next), with an I/O-like error. */
    static java.util.function.UnaryOperator<ExecutionBackend> failingCopy(int n) {
        return b -> new FaultInjectingBackend(b, n, Long.MAX_VALUE, 0);
    }

    /**
     * The {@code n}th copy submitted from now on does nothing and reports success: the failure mode a
     * checksum of what was meant to arrive must catch.
     */
    static java.util.function.UnaryOperator<ExecutionBackend> silentlySkippedCopy(int n) {
        return b -> {
            FaultInjectingBackend backend = new FaultInjectingBackend(b, n, Long.MAX_VALUE, 0);
            backend.silent = true;
            return backend;
        };
    }

    /** A disk that refuses to grow beyond {@code capacity} bytes of extents. */
    static java.util.function.UnaryOperator<ExecutionBackend> diskCapacity(long capacity) {
        return b -> new FaultInjectingBackend(b, Integer.MAX_VALUE, capacity, 0);
    }

    /** Every copy waits {@code millis} before it starts. */
    static java.util.function.UnaryOperator<ExecutionBackend> slowCopies(long millis) {
        return b -> new FaultInjectingBackend(b, Integer.MAX_VALUE, Long.MAX_VALUE, millis);
    }

    /** Every copy submitted while {@code millis} is above 0 waits that long before it starts. */
    static java.util.function.UnaryOperator<ExecutionBackend> slowCopies(AtomicLong millis) {
        return b -> new FaultInjectingBackend(b, Integer.MAX_VALUE, Long.MAX_VALUE, millis::get);
    }

    @Override
    public String description() {
        return "fault-injecting " + inner.description();
    }

    @Override
    public ChunkAllocator chunkAllocator(StorageKind tier) {
        return tier == StorageKind.MAPPED_FILE ? disk : inner.chunkAllocator(tier);
    }

    @Override
    public CopyEngine copyEngine() {
        return engine;
    }

    @Override
    public long chunkBytes(StorageKind tier, long budgetBytes, long pageSize) {
        return inner.chunkBytes(tier, budgetBytes, pageSize);
    }

    @Override
    public void close() {
        inner.close();
    }

    private final class Engine implements CopyEngine {
        private final CopyEngine delegate;

        Engine(CopyEngine delegate) {
            this.delegate = delegate;
        }

        @Override
        public CompletableFuture<Void> submit(CopyPlan plan) {
            copiesSubmitted.incrementAndGet();
            if (copiesLeftBeforeFailure.decrementAndGet() == 0) {
                beforeFailure.run();
                return silent ? CompletableFuture.completedFuture(null)
                        : CompletableFuture.failedFuture(new IOException("injected copy failure"));
            }
            long delay = copyDelayMillis.getAsLong();
            if (delay == 0) {
                return delegate.submit(plan);
            }
            return CompletableFuture.runAsync(() -> { },
                    CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS))
                    .thenCompose(ignored -> delegate.submit(plan));
        }

        @Override
        public void copyAndWait(CopyPlan plan, long timeoutNanos) {
            if (copyDelayMillis.getAsLong() == 0 && copiesLeftBeforeFailure.get() != 1) {
                copiesSubmitted.incrementAndGet();
                copiesLeftBeforeFailure.decrementAndGet();
                delegate.copyAndWait(plan, timeoutNanos);
            } else {
                CopyEngine.await(submit(plan), timeoutNanos, plan.totalBytes());
            }
        }

        @Override
        public boolean acceptsHeapMemory() {
            return delegate.acceptsHeapMemory();
        }

        @Override
        public boolean copiesWithTheCpu() {
            return delegate.copiesWithTheCpu(); // its paths that copy on the caller's thread meet the faults too
        }

        @Override
        public String description() {
            return delegate.description();
        }

        @Override
        public void close() {
            delegate.close();
        }
    }

    private final class LimitedDisk implements ChunkAllocator {
        private final ChunkAllocator delegate;

        LimitedDisk(ChunkAllocator delegate) {
            this.delegate = delegate;
        }

        @Override
        public MemoryChunk allocate(long bytes) throws IOException {
            take(bytes);
            return delegate.allocate(bytes);
        }

        @Override
        public MemoryChunk allocate(long bytes, int slot) throws IOException {
            take(bytes);
            return delegate.allocate(bytes, slot); // persistent extents are named by slot
        }

        private void take(long bytes) throws IOException {
            if (diskBytesLeft.addAndGet(-bytes) < 0) {
                diskBytesLeft.addAndGet(bytes);
                throw new IOException("No space left on device (injected)");
            }
        }

        @Override
        public String description() {
            return delegate.description();
        }
    }
}
