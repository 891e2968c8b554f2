package dev.kvtier.bench.sim;

import dev.kvtier.ByteSizes;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import org.HdrHistogram.Histogram;

import dev.kvtier.store.Tier;

/**
 * Plays one {@link Workload} against one cache and verifies every byte: the engine behind
 * {@link Simulate}. One instance runs once; not reusable.
 *
 * <p>Requests are handed to the threads in workload order; the requests of one session are served in
 * order (a thread waits for the session's previous request), as a chat serves one turn at a time.
 * The first failure -- wrong bytes, wrong metadata, a lost segment or an exception from the cache --
 * stops every thread and is reported with the segment's key and tier path.
 */
final class SimulationRun {
    /** Time-to-resident is recorded in nanoseconds up to an hour with 3 significant digits. */
    private static final long HISTOGRAM_MAX_NANOS = TimeUnit.HOURS.toNanos(1);

    private final SimOptions options;
    private final Workload workload;
    private final CacheUnderTest cache;
    private final CacheUnderTest.Settings settings;
    private final Progress.Sink progressSink;

    private final AtomicInteger nextRequest = new AtomicInteger();
    private final AtomicReference<String> failure = new AtomicReference<>();
    private final Map<String, SegmentRecord> live = new ConcurrentHashMap<>();
    private final SessionState[] sessions;
    private final LongAdder requestsDone = new LongAdder();
    private final LongAdder residentCalls = new LongAdder();
    private final LongAdder[] foundOn = {new LongAdder(), new LongAdder(), new LongAdder()};
    private final LongAdder segmentsWritten = new LongAdder();
    private final LongAdder bytesWritten = new LongAdder();
    private final LongAdder bytesVerified = new LongAdder();
    private final LongAdder segmentsVerified = new LongAdder();
    private final LongAdder segmentsRemoved = new LongAdder();
    private final List<Histogram> histograms = new ArrayList<>();
    private volatile long deadlineNanos = Long.MAX_VALUE;

    /** What the simulator knows about a live segment: enough to check it without a copy of its bytes. */
    private record SegmentRecord(String key, long contentSeed, long startPosition, long endPosition, long sizeBytes,
                                 long checksum, TierPath path) {
    }

    /** A session's current conversation; guarded by its own monitor. */
    private static final class SessionState {
        int nextOrdinal;
        final List<String> keys = new ArrayList<>();
    }

    private SimulationRun(SimOptions options, Workload workload, CacheUnderTest cache,
                          CacheUnderTest.Settings settings, Progress.Sink progressSink) {
        this.options = options;
        this.workload = workload;
        this.cache = cache;
        this.settings = settings;
        this.progressSink = progressSink;
        this.sessions = new SessionState[options.sessions()];
        for (int i = 0; i < sessions.length; i++) {
            sessions[i] = new SessionState();
        }
    }

    /**
     * Plays the workload on a cache opened from {@code factory} with {@code settings}, verifies what is
     * left, removes everything, checks the tiers are empty, and closes the cache.
     *
     * @throws RuntimeException when the cache cannot be opened (nothing was run)
     */
    static RunResult run(SimOptions options, Workload workload, CacheUnderTest.Factory factory,
                         CacheUnderTest.Settings settings, Progress.Sink progressSink) {
        try (CacheUnderTest cache = factory.open(settings)) {
            return new SimulationRun(options, workload, cache, settings, progressSink).play();
        }
    }

    private RunResult play() {
        CacheUnderTest.Counters before = cache.counters();
        int threads = Math.min(options.threads(), workload.requests().size());
        long start = System.nanoTime();
        if (options.maxSeconds() > 0) {
            deadlineNanos = start + TimeUnit.SECONDS.toNanos(options.maxSeconds());
        }
        Progress progress = Progress.start(progressSink, this::progressLine);
        List<Thread> workers = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                Histogram histogram = new Histogram(HISTOGRAM_MAX_NANOS, 3);
                histograms.add(histogram);
                workers.add(Thread.ofPlatform().name("sim-request-" + t).start(() -> serve(histogram)));
            }
            for (Thread worker : workers) {
                worker.join();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("the simulator was interrupted");
        } finally {
            progress.stop();
        }
        long playedNanos = System.nanoTime() - start;
        CacheUnderTest.Counters afterPlay = cache.counters().since(before);
        String leftover = null;
        if (failure.get() == null) {
            verifyAndRemoveEverything();
            CacheUnderTest.Counters end = cache.counters();
            if (failure.get() == null && (end.used(Tier.GPU) != 0 || end.used(Tier.CPU) != 0 || end.used(Tier.DISK) != 0)) {
                leftover = "tiers not empty after removing every segment: GPU " + end.used(Tier.GPU) + " B, CPU "
                        + end.used(Tier.CPU) + " B, disk " + end.used(Tier.DISK) + " B";
            }
        }
        Histogram timeToResident = new Histogram(HISTOGRAM_MAX_NANOS, 3);
        histograms.forEach(timeToResident::add);
        long[] found = new long[foundOn.length];
        for (int i = 0; i < found.length; i++) {
            found[i] = foundOn[i].sum();
        }
        return new RunResult(options, settings, cache.backendDescription(), workload, playedNanos,
                requestsDone.intValue(), residentCalls.sum(), found, segmentsWritten.sum(), bytesWritten.sum(),
                segmentsVerified.sum(), bytesVerified.sum(), segmentsRemoved.sum(), timeToResident, afterPlay,
                Optional.ofNullable(failure.get()), Optional.ofNullable(leftover),
                requestsDone.intValue() < workload.requests().size() && failure.get() == null);
    }

    private String progressLine(double seconds) {
        long done = requestsDone.sum();
        long resident = residentCalls.sum();
        long onGpu = foundOn[Tier.GPU.ordinal()].sum();
        return String.format(Locale.ROOT, "%,d/%,d requests  %,.0f req/s  %,d made resident (%.1f%% already on GPU)  %s verified  failures %d",
                done, workload.requests().size(), seconds > 0 ? done / seconds : 0.0, resident,
                resident == 0 ? 0.0 : 100.0 * onGpu / resident, ByteSizes.format(bytesVerified.sum()),
                failure.get() == null ? 0 : 1);
    }

    private void serve(Histogram timeToResident) {
        try (Arena arena = Arena.ofConfined()) {
            Buffers buffers = new Buffers(arena);
            while (failure.get() == null && System.nanoTime() < deadlineNanos) {
                int index = nextRequest.getAndIncrement();
                if (index >= workload.requests().size()) {
                    return;
                }
                Workload.Request request = workload.requests().get(index);
                SessionState session = sessions[request.session()];
                if (!awaitTurn(session, request)) {
                    return;
                }
                try {
                    serve(request, session, buffers, timeToResident);
                } finally {
                    synchronized (session) {
                        session.nextOrdinal++;
                        session.notifyAll();
                    }
                }
                requestsDone.increment();
            }
        } catch (RuntimeException | Error e) {
            fail("unexpected " + describe(e) + " in the simulator");
        }
    }

    /** Waits until this request is its session's next one; false when the run stopped meanwhile. */
    private boolean awaitTurn(SessionState session, Workload.Request request) {
        synchronized (session) {
            while (session.nextOrdinal != request.ordinalInSession()) {
                if (failure.get() != null) {
                    return false;
                }
                try {
                    session.wait(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    fail("request thread interrupted");
                    return false;
                }
            }
            return true;
        }
    }

    /** Per-thread host buffers as large as the largest segment. */
    private final class Buffers {
        final MemorySegment readBack;
        final MemorySegment expected;

        Buffers(Arena arena) {
            long size = Math.max(1, workload.largestSegmentBytes());
            readBack = arena.allocate(size, 64);
            expected = arena.allocate(size, 64);
        }
    }

    private void serve(Workload.Request request, SessionState session, Buffers buffers, Histogram timeToResident) {
        List<String> keys = session.keys;
        if (request.endsConversation()) {
            for (String key : keys) {
                if (!removeSegment(key)) {
                    return;
                }
            }
            keys.clear();
        }
        if (keys.size() != request.turn()) {
            fail("session " + request.session() + " has " + keys.size() + " turns, request " + request.index()
                    + " expects " + request.turn() + " (simulator bug)");
            return;
        }
        for (String key : keys) {
            if (failure.get() != null || !makeResident(key, buffers, timeToResident)) {
                return;
            }
        }
        writeNewTurn(request, buffers);
        keys.add(request.key());
    }

    private boolean removeSegment(String key) {
        SegmentRecord record = live.remove(key);
        try {
            if (!cache.remove(key)) {
                fail("segment " + key + " was lost: remove found nothing (tier path: " + record.path() + ")");
                return false;
            }
        } catch (RuntimeException e) {
            fail("remove(" + key + ") failed: " + describe(e) + " (tier path: " + record.path() + ")");
            return false;
        }
        segmentsRemoved.increment();
        return true;
    }

    private boolean makeResident(String key, Buffers buffers, Histogram timeToResident) {
        SegmentRecord record = live.get(key);
        CacheUnderTest.Resident resident;
        Tier before;
        try {
            Optional<Tier> tier = cache.tierOf(key);
            if (tier.isEmpty()) {
                fail("segment " + key + " was lost: the cache no longer knows it (tier path: " + record.path() + ")");
                return false;
            }
            before = tier.get();
            record.path().observe(before);
            long t0 = System.nanoTime();
            resident = cache.ensureResidentOnGpu(key);
            timeToResident.recordValue(Math.min(HISTOGRAM_MAX_NANOS, System.nanoTime() - t0));
        } catch (RuntimeException e) {
            fail("ensureResident(" + key + ", GPU) failed: " + describe(e) + " (tier path: " + record.path() + ")");
            return false;
        }
        record.path().observe(resident.tier());
        residentCalls.increment();
        foundOn[before.ordinal()].increment();
        if (resident.tier() != Tier.GPU || resident.sizeBytes() != record.sizeBytes()
                || resident.startPosition() != record.startPosition() || resident.endPosition() != record.endPosition()) {
            fail("segment " + key + " came back as " + resident + ", expected GPU, " + record.sizeBytes()
                    + " bytes at positions [" + record.startPosition() + ", " + record.endPosition()
                    + ") (tier path: " + record.path() + ")");
            return false;
        }
        return verify(record, "ensureResident", buffers);
    }

    private void writeNewTurn(Workload.Request request, Buffers buffers) {
        String key = request.key();
        long size = request.tokens() * workload.bytesPerToken();
        long seed = workload.contentSeed(request.session(), request.conversation(), request.turn());
        MemorySegment bytes = buffers.expected.asSlice(0, size);
        SegmentContent.fill(bytes, seed);
        SegmentRecord record = new SegmentRecord(key, seed, request.startPosition(),
                request.startPosition() + request.tokens(), size, SegmentContent.checksum(bytes), new TierPath());
        live.put(key, record);
        try {
            cache.putOnGpu(key, record.startPosition(), record.endPosition(), bytes);
        } catch (RuntimeException e) {
            fail("put(" + key + ", GPU) of " + ByteSizes.format(size) + " failed: " + describe(e));
            return;
        }
        record.path().observe(Tier.GPU);
        segmentsWritten.increment();
        bytesWritten.add(size);
        verify(record, "put", buffers);
    }

    /** Reads the segment back from wherever it is and compares it with what was written. */
    private boolean verify(SegmentRecord record, String after, Buffers buffers) {
        MemorySegment readBack = buffers.readBack.asSlice(0, record.sizeBytes());
        // Poison the buffer so a read that silently copies nothing cannot pass as the previous segment's bytes.
        readBack.fill((byte) 0x5A);
        try {
            cache.read(record.key(), readBack);
        } catch (RuntimeException e) {
            fail("read(" + record.key() + ") after " + after + " failed: " + describe(e) + " (tier path: "
                    + record.path() + ")");
            return false;
        }
        String mismatch = switch (options.verify()) {
            case CHECKSUM -> {
                long crc = SegmentContent.checksum(readBack);
                yield crc == record.checksum() ? null : String.format(Locale.ROOT,
                        "checksum mismatch: wrote CRC32C 0x%08x, read back 0x%08x", record.checksum(), crc);
            }
            case FULL -> {
                MemorySegment expected = buffers.expected.asSlice(0, record.sizeBytes());
                SegmentContent.fill(expected, record.contentSeed());
                long offset = readBack.mismatch(expected);
                yield offset < 0 ? null : String.format(Locale.ROOT, "byte %d of %d differs: wrote 0x%02x, read back 0x%02x",
                        offset, record.sizeBytes(), expected.get(ValueLayout.JAVA_BYTE, offset),
                        readBack.get(ValueLayout.JAVA_BYTE, offset));
            }
        };
        if (mismatch != null) {
            fail("segment " + record.key() + " (" + ByteSizes.format(record.sizeBytes()) + ", positions ["
                    + record.startPosition() + ", " + record.endPosition() + ")) after " + after + ": " + mismatch
                    + " (tier path: " + record.path() + ")");
            return false;
        }
        segmentsVerified.increment();
        bytesVerified.add(record.sizeBytes());
        return true;
    }

    /** After the requests: every live segment verified where it lies, then removed. */
    private void verifyAndRemoveEverything() {
        try (Arena arena = Arena.ofConfined()) {
            Buffers buffers = new Buffers(arena);
            for (SegmentRecord record : List.copyOf(live.values())) {
                if (failure.get() != null) {
                    return;
                }
                try {
                    cache.tierOf(record.key()).ifPresent(record.path()::observe);
                } catch (RuntimeException e) {
                    fail("tierOf(" + record.key() + ") failed: " + describe(e));
                    return;
                }
                if (!verify(record, "the run (final pass)", buffers) || !removeSegment(record.key())) {
                    return;
                }
            }
        }
    }

    private void fail(String message) {
        failure.compareAndSet(null, message);
    }

    static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder(e.toString());
        for (Throwable cause = e.getCause(); cause != null && cause != cause.getCause(); cause = cause.getCause()) {
            sb.append("; caused by ").append(cause);
        }
        return sb.toString();
    }
}
