package dev.kvtier.bench.observe;

import dev.kvtier.Backend;
import dev.kvtier.CacheChangeListener;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.ResidentSegment;
import dev.kvtier.observe.KvTierFlightRecording;
import dev.kvtier.observe.TransferEvent;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
import jdk.jfr.Recording;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * What kvtier's JFR events and its change listeners cost on the host backend, for three operations:
 * {@code put} (a put on CPU and its remove: one copy), {@code transfer} (a promotion CPU to GPU by
 * {@code ensureResident} and the demotion back: two moves) and {@code residentHit}
 * ({@code ensureResident} of a segment already there: no copy), and {@code eventAlone} (one transfer
 * event begun and finished around nothing). Each variant is a nested class with
 * its own fork:
 * <ul>
 *   <li>{@link EventsRemoved}: {@code -Dkvtier.jfr.events=false}, the events folded out of the code
 *       (the baseline: as if never written);</li>
 *   <li>{@link EventsOff}: events compiled in, no recording (what every user pays);</li>
 *   <li>{@link EventsRecording}: a recording with the shipped settings (every event written);</li>
 *   <li>{@link NoOpListener}: events off, one listener registered that takes completion times and does nothing (the seam's cost,
 *       {@code ensureResident} timed by {@code nanoTime}).</li>
 * </ul>
 * Run all of them in one invocation, several times, and compare each with {@code EventsRemoved} of
 * the same round: {@code java -jar benchmarks.jar 'FlightEventCostBenchmark'}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 4, time = 1)
@State(Scope.Thread)
public abstract class FlightEventCostBenchmark {
    private static final int PAGE = 4096;

    /** Small segments: the per-copy cost, where an event's share is largest. */
    @Param({"16384"})
    public int segmentBytes;

    private final Arena arena = Arena.ofShared();
    private KvTierCache cache;
    private MemorySegment bytes;
    private Recording recording;
    private Path recordingFile;
    private final PositionRange positions = PositionRange.of(0, 16);

    /** Whether this variant records kvtier's events. */
    abstract boolean recording();

    /** Whether this variant registers a listener that does nothing. */
    boolean listening() {
        return false;
    }

    @Setup(Level.Trial)
    public void open() throws IOException {
        cache = KvTierCache.open(KvTierConfig.builder().backend(Backend.HOST).pageSizeBytes(PAGE)
                .gpuBudgetBytes(64L << 20).cpuBudgetBytes(64L << 20).build());
        bytes = arena.allocate(segmentBytes);
        bytes.fill((byte) 3);
        cache.put("moving", positions, bytes, Tier.CPU);
        cache.put("hot", positions, bytes, Tier.GPU);
        if (listening()) {
            // It takes completion times (the costliest kind of listener: ensureResident reads the clock twice for it);
            // a listener without ensureResidentCompleted is not timed at all.
            cache.addListener(new CacheChangeListener() {
                @Override
                public void ensureResidentCompleted(String key, Tier tier, Tier foundOn, long nanos) {
                }
            });
        }
        if (recording()) {
            recordingFile = Files.createTempFile("kvtier-bench-", ".jfr");
            recording = KvTierFlightRecording.start(recordingFile);
        }
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        if (recording != null) {
            recording.close();
            Files.deleteIfExists(recordingFile);
        }
        cache.close();
        arena.close();
    }

    @Benchmark
    public void put() {
        cache.put("new", positions, bytes, Tier.CPU);
        cache.remove("new");
    }

    @Benchmark
    public ResidentSegment transfer() {
        ResidentSegment resident = cache.ensureResident("moving", Tier.GPU);
        cache.demote("moving", Tier.CPU);
        return resident;
    }

    @Benchmark
    public ResidentSegment residentHit() {
        return cache.ensureResident("hot", Tier.CPU);
    }

    /**
     * One transfer event begun and finished around nothing, outside the cache: the event's own cost
     * (in {@code EventsRemoved} the JIT folds it away, so that variant times an empty method).
     */
    @Benchmark
    public void eventAlone() {
        TransferEvent event = TransferEvent.beginIfRecording();
        TransferEvent.finish(event, "bench", Tier.CPU, Tier.GPU, segmentBytes, 1, "host", null);
    }

    /** The baseline: the events removed from the compiled code. */
    @Fork(value = 1, jvmArgsAppend = "-Dkvtier.jfr.events=false")
    public static class EventsRemoved extends FlightEventCostBenchmark {
        @Override
        boolean recording() {
            return false;
        }
    }

    /** Events compiled in, nothing recording: the cost every user pays. */
    @Fork(1)
    public static class EventsOff extends FlightEventCostBenchmark {
        @Override
        boolean recording() {
            return false;
        }
    }

    /** A recording with the shipped settings: every transfer and round of making room written. */
    @Fork(1)
    public static class EventsRecording extends FlightEventCostBenchmark {
        @Override
        boolean recording() {
            return true;
        }
    }

    /** Events off, one listener that does nothing: what the seam costs once anyone listens. */
    @Fork(1)
    public static class NoOpListener extends FlightEventCostBenchmark {
        @Override
        boolean recording() {
            return false;
        }

        @Override
        boolean listening() {
            return true;
        }
    }
}
