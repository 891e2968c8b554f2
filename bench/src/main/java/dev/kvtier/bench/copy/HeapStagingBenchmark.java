package dev.kvtier.bench.copy;

import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.exec.cuda.CudaExecutionBackend;
import dev.kvtier.exec.ExecutionBackend;
import dev.kvtier.exec.host.HostExecutionBackend;
import dev.kvtier.exec.PageAllocation;
import dev.kvtier.exec.TransferExecutor;
import dev.kvtier.KvTierConfig;
import dev.kvtier.exec.StorageKind;
import dev.kvtier.exec.cuda.ExtentRegistration;
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
import java.util.EnumMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Heap bytes copied into device memory ({@code TransferExecutor.copyIn} of a {@code byte[]} into a
 * GPU allocation). On the CUDA backend (over the libcudart named by {@code kvtier.cudart}, default
 * the host-emulated one) they are staged through native memory first, because the driver needs
 * native addresses; the host backend copies them as they are. {@code executor} is the executor's
 * path (pooled staging buffers on CUDA); {@code sharedArenaPerCall} stages through a shared arena
 * opened and closed per call (what the executor did before the pool, through the public API);
 * {@code baseline} is one {@code MemorySegment.copy} of the same bytes from the heap into native
 * memory, the least any heap-to-device path can cost. Copies per second.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class HeapStagingBenchmark {

    /** Bytes per copy: 64 KiB, 1 MiB. */
    @Param({"65536", "1048576"})
    public int bytes;

    /** {@code host} or {@code cuda} (over {@code kvtier.cudart}). */
    @Param({"cuda", "host"})
    public String backend;

    /** {@code executor}, {@code sharedArenaPerCall} or {@code baseline}, run back to back per size. */
    @Param({"executor", "sharedArenaPerCall", "baseline"})
    public String way;

    private Path directory;
    private TransferExecutor executor;
    private PageAllocation device;
    private MemorySegment heap;
    private Arena arena;
    private MemorySegment raw;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        directory = Files.createTempDirectory("kvtier-bench-staging-");
        Map<StorageKind, Long> budgets = new EnumMap<>(StorageKind.class);
        for (StorageKind tier : StorageKind.values()) {
            budgets.put(tier, 4L * bytes);
        }
        executor = new TransferExecutor(executionBackend(), 64 * 1024, budgets, 256L << 20, KvTierConfig.DEFAULT_TRANSFER_TIMEOUT);
        device = executor.allocate(StorageKind.DEVICE, bytes);
        byte[] content = new byte[bytes];
        new SplittableRandom(7).nextBytes(content);
        heap = MemorySegment.ofArray(content);
        arena = Arena.ofShared();
        raw = arena.allocate(bytes, 64);
    }

    private ExecutionBackend executionBackend() {
        if (backend.equals("host")) {
            return new HostExecutionBackend(directory, 2, "benchmark");
        }
        CudaRuntime cuda = BenchmarkCuda.runtime();
        return new CudaExecutionBackend(cuda, directory, 2, true, ExtentRegistration.WHERE_SUPPORTED,
                KvTierConfig.DEFAULT_BOUNCE_BUFFER_BYTES, KvTierConfig.DEFAULT_BOUNCE_BUFFER_PAIRS, KvTierConfig.DEFAULT_TRANSFER_TIMEOUT, "benchmark");
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        executor.release(device);
        executor.close();
        arena.close();
        Files.deleteIfExists(directory);
    }

    @Benchmark
    public long copy() {
        switch (way) {
            case "executor" -> executor.copyIn(heap, device);
            case "sharedArenaPerCall" -> {
                try (Arena stage = Arena.ofShared()) {
                    MemorySegment staged = stage.allocate(bytes, 64);
                    MemorySegment.copy(heap, 0, staged, 0, bytes);
                    executor.copyIn(staged, device);
                }
            }
            default -> MemorySegment.copy(heap, 0, raw, 0, bytes);
        }
        return bytes;
    }
}
