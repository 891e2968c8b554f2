package dev.kvtier.bench.copy;

import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.exec.cuda.CudaExecutionBackend;
import dev.kvtier.exec.cuda.ExtentRegistration;
import dev.kvtier.exec.PageAllocation;
import dev.kvtier.exec.TransferExecutor;
import dev.kvtier.DiskTransferMode;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * DISK to GPU from a cold mapping: registered extents (the copy reads the mapping directly) against
 * staged ones (mapping to pinned bounce buffer to device, double-buffered), over the CUDA backend
 * with whatever libcudart {@code -Dkvtier.cudart} names (default: the host-emulated fake, where
 * "device" memory is host memory and a copy is a memcpy on the fake's worker thread: this then
 * measures the host-side cost only).
 *
 * <p>Each measured invocation (SingleShotTime: one per iteration) gets a new executor whose DISK
 * extent was just created by the backend's own allocator (zero-filled by positional writes, so its
 * pages are in the page cache but the mapping has never been touched: every page faults on first
 * access) and, in REGISTERED mode, registered with {@code cudaHostRegister} (untimed; the fake does
 * not touch the pages when registering, a real driver pins them then). An untimed copy from another
 * extent beforehand warms the streams, events and (STAGED) the bounce buffers.
 * <ul>
 *   <li>{@code coldMappingToGpu}: {@code transferAndWait} of the fresh extent into device memory;</li>
 *   <li>{@code warmMappingToGpu}: the same from the extent the warm-up copy already read;</li>
 *   <li>{@code newExtentToGpu}: creating the extent (zero-fill, map and, REGISTERED, {@code cudaHostRegister},
 *       which on a real driver pins and so faults in every page) and copying it into device memory, all timed;</li>
 *   <li>{@code coldMappingMemcpy}: baseline, {@code MemorySegment.copy} of a fresh extent into native
 *       memory in the same JVM (the page faults and one memcpy, no CUDA at all).</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5)
@Measurement(iterations = 30)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class ColdDiskToGpuBenchmark {
    private static final int PAGE = 64 << 10;

    /** How DISK extents reach the device. */
    @Param({"REGISTERED", "STAGED"})
    public DiskTransferMode mode;

    /** Segment (and extent) size in bytes. */
    @Param({"1048576", "16777216"})
    public int size;

    /** Bytes per pinned bounce buffer (STAGED only; REGISTERED ignores it, its two rows are a noise check). */
    @Param({"8388608", "1048576"})
    public long bounceBufferBytes;

    private CudaRuntime cuda;
    private Path directory;
    private TransferExecutor executor;
    private PageAllocation warmDisk;
    private PageAllocation coldDisk;
    private PageAllocation gpu;
    private Arena hostArena;
    private MemorySegment host;

    @Setup(Level.Trial)
    public void setUpTrial() throws IOException {
        cuda = BenchmarkCuda.runtime();
        directory = Files.createTempDirectory("kvtier-bench-cold-disk-");
        hostArena = Arena.ofShared();
        host = hostArena.allocate(size, 4096);
    }

    @Setup(Level.Iteration)
    public void setUpIteration() throws IOException {
        Map<StorageKind, Long> budgets = new EnumMap<>(StorageKind.class);
        budgets.put(StorageKind.DEVICE, 4L * size);    // one device arena of one segment
        budgets.put(StorageKind.PINNED_HOST, 8L << 20);     // unused
        budgets.put(StorageKind.MAPPED_FILE, (long) size); // one extent per segment: every DISK allocation below maps a new file
        executor = new TransferExecutor(new CudaExecutionBackend(cuda, directory, 2, true,
                mode == DiskTransferMode.STAGED ? ExtentRegistration.NEVER : ExtentRegistration.ALWAYS,
                bounceBufferBytes, KvTierConfig.DEFAULT_BOUNCE_BUFFER_PAIRS, KvTierConfig.DEFAULT_TRANSFER_TIMEOUT, "benchmark"), PAGE,
                budgets, 1L << 30, KvTierConfig.DEFAULT_TRANSFER_TIMEOUT);
        warmDisk = executor.allocate(StorageKind.MAPPED_FILE, size);
        gpu = executor.allocate(StorageKind.DEVICE, size);
        executor.transferAndWait(warmDisk, gpu);
        coldDisk = executor.allocate(StorageKind.MAPPED_FILE, size);
    }

    @TearDown(Level.Iteration)
    public void tearDownIteration() {
        executor.close(); // unregisters, unmaps and deletes the extents
    }

    @TearDown(Level.Trial)
    public void tearDownTrial() throws IOException {
        hostArena.close();
        Files.deleteIfExists(directory);
    }

    /** A never-touched extent into device memory. */
    @Benchmark
    public void coldMappingToGpu() {
        executor.transferAndWait(coldDisk, gpu);
    }

    /** An extent already read once into device memory. */
    @Benchmark
    public void warmMappingToGpu() {
        executor.transferAndWait(warmDisk, gpu);
    }

    /** A new extent made (and registered, REGISTERED) and copied into device memory: registration cost included. */
    @Benchmark
    public void newExtentToGpu() throws IOException {
        PageAllocation fresh = executor.allocate(StorageKind.MAPPED_FILE, size); // the two extents made in setup are full: a new one
        executor.transferAndWait(fresh, gpu);
    }

    /** Baseline: a never-touched extent copied into native memory by the CPU (DISK -> CPU, one run). */
    @Benchmark
    public void coldMappingMemcpy() {
        executor.copyOut(coldDisk, host);
    }
}
