package dev.kvtier.cuda;

import dev.kvtier.cuda.runtime.cudaHostFn_t;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The one host-function upcall stub of the process, shared by every {@link CudaRuntime}: {@code cudaLaunchHostFunc} gets
 * this stub with a ticket number as {@code userData}; when CUDA runs it, the stub looks the ticket's future up and hands its
 * completion to {@link #COMPLETER}, so no user code (dependent stages) ever runs on the CUDA callback thread, where a CUDA
 * call would deadlock. The stub catches every Throwable: an exception escaping an upcall terminates the JVM. Thread-safe.
 */
final class HostCallbacks {

    private static final ConcurrentHashMap<Long, CompletableFuture<Void>> PENDING = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_TICKET = new AtomicLong(1);
    private static final LongAdder FAILED_UPCALLS = new LongAdder();
    private static volatile Thread lastUpcallThread;

    /** Daemon threads, so a pending callback never keeps the JVM alive. */
    private static final ExecutorService COMPLETER = Executors.newCachedThreadPool(new java.util.concurrent.ThreadFactory() {
        private final AtomicInteger count = new AtomicInteger();

        @Override
        public Thread newThread(Runnable task) {
            Thread thread = new Thread(task, "kvtier-cuda-callback-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        }
    });

    /** Lives as long as the process: CUDA may call it any time after a launch, from any runtime. */
    static final MemorySegment STUB = cudaHostFn_t.allocate(HostCallbacks::onHostFunction, Arena.global());

    private HostCallbacks() {
    }

    /** A ticket and the future its callback completes. */
    record Ticket(long number, CompletableFuture<Void> future) {
        MemorySegment userData() {
            return MemorySegment.ofAddress(number);
        }
    }

    static Ticket newTicket() {
        long number = NEXT_TICKET.getAndIncrement();
        var future = new CompletableFuture<Void>();
        PENDING.put(number, future);
        return new Ticket(number, future);
    }

    /** Forgets a ticket whose launch failed, so its future is not kept forever. */
    static void cancel(Ticket ticket) {
        PENDING.remove(ticket.number());
    }

    /** Callbacks launched whose stub has not run yet (for leak checks in tests). */
    static int pendingCount() {
        return PENDING.size();
    }

    /** Upcalls that caught a Throwable (should stay 0). */
    static long failedUpcalls() {
        return FAILED_UPCALLS.sum();
    }

    /** The native thread that ran the last upcall (for tests that check user code runs elsewhere). */
    static Thread lastUpcallThread() {
        return lastUpcallThread;
    }

    private static void onHostFunction(MemorySegment userData) {
        try {
            lastUpcallThread = Thread.currentThread();
            CompletableFuture<Void> future = PENDING.remove(userData.address());
            if (future != null) {
                future.completeAsync(() -> null, COMPLETER);
            }
        } catch (Throwable failure) {
            try {
                FAILED_UPCALLS.increment();
            } catch (Throwable ignored) {
                // Nothing else is safe here: throwing would terminate the JVM.
            }
        }
    }
}
