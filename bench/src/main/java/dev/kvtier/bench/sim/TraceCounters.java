package dev.kvtier.bench.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;

import dev.kvtier.store.Tier;

/**
 * What a trace run counts. Written by the one thread that plays the trace; the few fields the progress
 * line reads from another thread are volatile and published once per request. Not otherwise thread-safe.
 */
final class TraceCounters {
    /** Time-to-resident is recorded in nanoseconds up to an hour with 3 significant digits. */
    static final long HISTOGRAM_MAX_NANOS = TimeUnit.HOURS.toNanos(1);

    /** Block references played. */
    long references;
    /** Per tier ({@link Tier#ordinal()}): references that found their block there. */
    final long[] foundOn = new long[Tier.values().length];
    /** References whose block was not cached locally and was fetched from the remote block store ({@code --remote}). */
    long foundRemote;
    /** References whose block was not cached anywhere (its first use: the disk tier is unbounded). */
    long missing;
    /** Summed over requests: leading blocks found cached on some tier, up to the first that was not. */
    long prefixCached;
    /** Summed over requests: leading blocks found on the GPU, up to the first that was not. */
    long prefixOnGpu;
    /** New blocks put and their bytes. */
    long blocksWritten;
    long bytesWritten;
    /** Read-backs that matched and their bytes. */
    long readBacks;
    long bytesVerified;
    /** Prefix API: requests whose cached prefix was pinned on the GPU whole, and those refused (no room for all of it). */
    long prefixesPinned;
    long prefixesNotPinned;
    /** Blocks removed at the end. */
    long blocksRemoved;
    /**
     * CPU time of the thread that played the requests, nanoseconds (-1 where the JVM cannot measure it): on a
     * busy machine, a steadier measure of the cost per reference than the wall time.
     */
    long playCpuNanos = -1;
    /**
     * The steady state: the requests from {@link #steadyFromRequest} (the first quarter of the trace left out, JIT
     * warm-up and the cold first fill of the tiers with it) to the end of the play; their references, wall time
     * and CPU time of the playing thread (-1 where not measured, or when the play stopped before that request).
     */
    int steadyFromRequest = -1;
    long steadyReferences;
    long steadyNanos = -1;
    long steadyCpuNanos = -1;
    /**
     * The quarters of the play (requests {@code [n*k/4, n*(k+1)/4)} of a trace of n), each with what the process
     * spent in it ({@link JvmActivity}): where the first quarter's extra time goes. A play that stopped early has
     * fewer, the last one ending where it stopped.
     */
    final List<Quarter> quarters = new ArrayList<>();
    /** ensureResident latency, nanoseconds. */
    final Histogram timeToResident = new Histogram(HISTOGRAM_MAX_NANOS, 3);

    private String failure;

    /**
     * One quarter of the play.
     *
     * @param fromRequest first request, 0-based
     * @param toRequest   one past the last request
     * @param references  block references played in it
     * @param spent       what the process spent in it
     */
    record Quarter(int fromRequest, int toRequest, long references, JvmActivity spent) {
    }

    /** For the progress line. */
    volatile long publishedRequests;
    volatile long publishedReferences;
    volatile long publishedOnGpu;

    void fail(String message) {
        if (failure == null) {
            failure = message;
        }
    }

    /** The first failure, or null. */
    String failure() {
        return failure;
    }

    void publish(long requestsDone) {
        publishedReferences = references;
        publishedOnGpu = foundOn[Tier.GPU.ordinal()];
        publishedRequests = requestsDone;
    }
}
