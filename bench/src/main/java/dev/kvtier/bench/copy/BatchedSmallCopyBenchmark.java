package dev.kvtier.bench.copy;

import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.exec.cuda.CudaExecutionBackend;
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
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Many small (16 KiB) segments moved GPU to CPU by the CUDA backend: all of them enqueued as one
 * {@code cudaMemcpyBatchAsync} ({@code batched}) against one {@code cudaMemcpyAsync} per segment
 * with the same single completion ({@code oneCallEach}), and against one transfer per segment, each
 * waited for ({@code oneTransferEach} asynchronously, {@code oneBlockingTransferEach} as the facade
 * does: what a caller moving segments one by one pays). Scores are
 * segments per second. Runs over the libcudart named by system property {@code kvtier.cudart}
 * (default {@code native/build/fakecudart/libcudart.so}: the host-emulated one, so this measures the
 * per-call path, not a bus).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class BatchedSmallCopyBenchmark {
    private static final int SEGMENTS = 256;

    /** Segment size in bytes. */
    @Param({"16384"})
    public int size;

    private Path directory;
    private TransferExecutor batching;
    private TransferExecutor oneByOne;
    private final List<PageAllocation> batchingSources = new ArrayList<>();
    private final List<PageAllocation> batchingDestinations = new ArrayList<>();
    private final List<PageAllocation> oneByOneSources = new ArrayList<>();
    private final List<PageAllocation> oneByOneDestinations = new ArrayList<>();

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        CudaRuntime cuda = BenchmarkCuda.runtime();
        if (!cuda.isBatchCopyAvailable()) {
            throw new IllegalStateException("this runtime has no cudaMemcpyBatchAsync: " + cuda.description());
        }
        directory = Files.createTempDirectory("kvtier-bench-batch-");
        batching = executor(cuda, true);
        oneByOne = executor(cuda, false);
        // Every other page is taken, so no two segments are contiguous: each is its own copy.
        fill(batching, batchingSources, batchingDestinations);
        fill(oneByOne, oneByOneSources, oneByOneDestinations);
    }

    private TransferExecutor executor(CudaRuntime cuda, boolean batch) {
        Map<StorageKind, Long> budgets = new EnumMap<>(StorageKind.class);
        for (StorageKind tier : StorageKind.values()) {
            budgets.put(tier, 4L * SEGMENTS * size);
        }
        return new TransferExecutor(new CudaExecutionBackend(cuda, directory, 2, batch, ExtentRegistration.WHERE_SUPPORTED,
                KvTierConfig.DEFAULT_BOUNCE_BUFFER_BYTES, KvTierConfig.DEFAULT_BOUNCE_BUFFER_PAIRS, KvTierConfig.DEFAULT_TRANSFER_TIMEOUT, "benchmark"), size, budgets,
                1L << 30, KvTierConfig.DEFAULT_TRANSFER_TIMEOUT);
    }

    private void fill(TransferExecutor executor, List<PageAllocation> sources, List<PageAllocation> destinations)
            throws IOException {
        List<PageAllocation> spacers = new ArrayList<>();
        for (int i = 0; i < SEGMENTS; i++) {
            sources.add(executor.allocate(StorageKind.DEVICE, size));
            spacers.add(executor.allocate(StorageKind.DEVICE, size));
            destinations.add(executor.allocate(StorageKind.PINNED_HOST, size));
            spacers.add(executor.allocate(StorageKind.PINNED_HOST, size));
        }
        spacers.forEach(executor::release);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        batching.close();
        oneByOne.close();
        Files.deleteIfExists(directory);
    }

    /** All segments in one cudaMemcpyBatchAsync, one completion. */
    @Benchmark
    @OperationsPerInvocation(SEGMENTS)
    public void batched() {
        batching.transferAll(batchingSources, batchingDestinations).join();
    }

    /** One cudaMemcpyAsync per segment, one completion for all. */
    @Benchmark
    @OperationsPerInvocation(SEGMENTS)
    public void oneCallEach() {
        oneByOne.transferAll(oneByOneSources, oneByOneDestinations).join();
    }

    /** One blocking transfer per segment (what the facade does), each waited for on its event from this thread. */
    @Benchmark
    @OperationsPerInvocation(SEGMENTS)
    public void oneBlockingTransferEach() {
        for (int i = 0; i < SEGMENTS; i++) {
            oneByOne.transferAndWait(oneByOneSources.get(i), oneByOneDestinations.get(i));
        }
    }

    /** One asynchronous transfer per segment, each waited for (host-function completion). */
    @Benchmark
    @OperationsPerInvocation(SEGMENTS)
    public void oneTransferEach() {
        for (int i = 0; i < SEGMENTS; i++) {
            oneByOne.transfer(oneByOneSources.get(i), oneByOneDestinations.get(i)).join();
        }
    }
}
