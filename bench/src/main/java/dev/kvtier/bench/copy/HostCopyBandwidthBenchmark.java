package dev.kvtier.bench.copy;

import dev.kvtier.exec.host.HostExecutionBackend;
import dev.kvtier.exec.PageAllocation;
import dev.kvtier.exec.TransferExecutor;
import dev.kvtier.KvTierConfig;
import dev.kvtier.exec.StorageKind;
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
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.EnumMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Bandwidth of one tier-to-tier transfer through the {@link TransferExecutor} on the host backend
 * ({@code way=executor}, {@code way=executorAsync}), beside the raw mechanism moving the same bytes
 * in the same run ({@code way=baseline}): {@code MemorySegment.copy} between two native buffers for GPU/CPU pairs (the
 * host backend's device memory is native memory), and a page-cache {@code FileChannel} write or
 * read of the same size for pairs with DISK. Bytes per second = size x ops/s; the ratio of the two
 * scores is what {@code bench/RESULTS.md} (Copies) reports.
 *
 * <p>The executor's numbers include what a real transfer pays: planning the copy over the page runs
 * and the bound on bytes in flight; {@code executorAsync} also the hand-off to a copy thread and
 * waiting for its future (a waiting thread runs a copy no copy thread has started yet).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class HostCopyBandwidthBenchmark {

    /** Source tier to destination tier. */
    @Param({"GPU_CPU", "CPU_GPU", "CPU_DISK", "DISK_CPU"})
    public String pair;

    /** Segment size in bytes: 4 KiB, 64 KiB, 1 MiB, 16 MiB, 64 MiB. */
    @Param({"4096", "65536", "1048576", "16777216", "67108864"})
    public int size;

    /**
     * {@code executor}: one blocking transfer, as every facade call does it (the host backend copies
     * on the calling thread); {@code executorAsync}: submitted to the copy threads, its future waited
     * for; {@code baseline}: the raw mechanism.
     */
    @Param({"executor", "executorAsync", "baseline"})
    public String way;

    private Path directory;
    private TransferExecutor executor;
    private PageAllocation source;
    private PageAllocation destination;

    private Arena arena;
    private MemorySegment rawSource;
    private MemorySegment rawDestination;
    private FileChannel file;
    private ByteBuffer fileBuffer;

    private StorageKind from;
    private StorageKind to;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        String[] tiers = pair.split("_");
        from = storageOf(tiers[0]);
        to = storageOf(tiers[1]);
        directory = Files.createTempDirectory("kvtier-bench-copy-");
        Map<StorageKind, Long> chunkBudgets = new EnumMap<>(StorageKind.class);
        for (StorageKind tier : StorageKind.values()) {
            chunkBudgets.put(tier, 4L * size);
        }
        executor = new TransferExecutor(new HostExecutionBackend(directory, 2, "benchmark"), 64 * 1024,
                chunkBudgets, 256L << 20, KvTierConfig.DEFAULT_TRANSFER_TIMEOUT);
        source = executor.allocate(from, size);
        destination = executor.allocate(to, size);

        arena = Arena.ofShared();
        rawSource = arena.allocate(size, 4096);
        rawDestination = arena.allocate(size, 4096);
        byte[] random = new byte[size];
        new SplittableRandom(42).nextBytes(random);
        MemorySegment.copy(MemorySegment.ofArray(random), 0, rawSource, 0, size);
        // Fill the executor's source (and warm the destination) through the executor itself.
        executor.copyIn(rawSource, source);
        executor.transferAndWait(source, destination);

        file = FileChannel.open(directory.resolve("baseline.bin"), StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE, StandardOpenOption.DELETE_ON_CLOSE);
        fileBuffer = (from == StorageKind.MAPPED_FILE ? rawDestination : rawSource).asByteBuffer();
        fileBuffer.clear();
        while (fileBuffer.hasRemaining()) {
            file.write(fileBuffer, fileBuffer.position());
        }
    }

    /** The memory a tier named in {@link #pair} is on the host backend (as the cache maps it). */
    private static StorageKind storageOf(String tier) {
        return switch (tier) {
            case "GPU" -> StorageKind.DEVICE;
            case "CPU" -> StorageKind.PINNED_HOST;
            case "DISK" -> StorageKind.MAPPED_FILE;
            default -> throw new IllegalArgumentException("pair must name tiers GPU, CPU or DISK, was " + tier);
        };
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        executor.release(source);
        executor.release(destination);
        executor.close();
        file.close();
        arena.close();
        Files.deleteIfExists(directory);
    }

    /**
     * One copy of the segment by {@link #way}. A single benchmark method with the way as the last
     * parameter makes JMH run the three ways back to back for each pair and size, so on a shared,
     * noisy machine each ratio compares runs seconds apart, not minutes.
     */
    @Benchmark
    public long copy() throws IOException {
        switch (way) {
            case "executor" -> executor.transferAndWait(source, destination);
            case "executorAsync" -> executor.transfer(source, destination).join();
            default -> {
                return baseline();
            }
        }
        return size;
    }

    /** The raw mechanism for the same bytes: MemorySegment.copy, or a page-cache write/read for DISK. */
    private long baseline() throws IOException {
        if (to == StorageKind.MAPPED_FILE) {
            fileBuffer.clear();
            long written = 0;
            while (fileBuffer.hasRemaining()) {
                written += file.write(fileBuffer, fileBuffer.position());
            }
            return written;
        }
        if (from == StorageKind.MAPPED_FILE) {
            fileBuffer.clear();
            long read = 0;
            while (fileBuffer.hasRemaining()) {
                read += file.read(fileBuffer, fileBuffer.position());
            }
            return read;
        }
        MemorySegment.copy(rawSource, 0, rawDestination, 0, size);
        return size;
    }
}
