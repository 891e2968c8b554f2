package dev.kvtier.bench.copy;

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
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * What a segment's first write into a new DISK extent costs, by how the extent was made (DESIGN
 * facts: first writes into a fresh mapping fault per page). Each iteration starts from a new file.
 * <ul>
 *   <li>{@code sparseMapThenCopy}: {@code setLength}, map, copy: every page faults and allocates;</li>
 *   <li>{@code prewriteMapThenCopy}: zero-fill with positional writes, map, copy: what
 *       {@code MappedFileChunkAllocator} does (the blocks exist, the pages are in the page cache);</li>
 *   <li>{@code copyIntoPrewrittenMapping}: the copy alone into such an extent;</li>
 *   <li>{@code copyIntoReusedMapping}: the copy into an extent already written once (steady state: freed pages are reused);</li>
 *   <li>{@code prewriteMapPopulateThenCopy}, {@code sparseMapPopulateThenCopy}: the same with
 *       {@code madvise(MADV_POPULATE_WRITE)} on the mapping before the copy (page tables filled in
 *       one call instead of one fault per page);</li>
 *   <li>{@code loadThenCopyIntoPrewrittenMapping}: {@code MemorySegment.load()} (read-populates) before the copy;</li>
 *   <li>{@code positionalWrite}: no mapping, one {@code FileChannel.write} of the bytes into a new file (the page-cache baseline).</li>
 * </ul>
 */
@SuppressWarnings("restricted")
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 10)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class DiskExtentFirstWriteBenchmark {

    /** Extent and segment size in bytes. */
    @Param({"16777216"})
    public int size;

    private Path directory;
    private Arena sourceArena;
    private MemorySegment source;

    private Arena iterationArena;
    private FileChannel sparse;
    private FileChannel prewritten;
    private FileChannel plain;
    private FileChannel reused;
    private MemorySegment prewrittenMapping;
    private MemorySegment reusedMapping;
    private int iteration;

    @Setup(Level.Trial)
    public void setUpTrial() throws IOException {
        directory = Files.createTempDirectory("kvtier-bench-extent-");
        sourceArena = Arena.ofShared();
        source = sourceArena.allocate(size, 4096);
        byte[] random = new byte[size];
        new SplittableRandom(7).nextBytes(random);
        MemorySegment.copy(MemorySegment.ofArray(random), 0, source, 0, size);
    }

    @Setup(Level.Iteration)
    public void setUpIteration() throws IOException {
        iteration++;
        iterationArena = Arena.ofShared();
        sparse = open("sparse");
        plain = open("plain");
        prewritten = open("prewritten");
        prewrite(prewritten, size);
        prewrittenMapping = prewritten.map(FileChannel.MapMode.READ_WRITE, 0, size, iterationArena);
        reused = open("reused");
        prewrite(reused, size);
        reusedMapping = reused.map(FileChannel.MapMode.READ_WRITE, 0, size, iterationArena);
        MemorySegment.copy(source, 0, reusedMapping, 0, size);
    }

    private FileChannel open(String name) throws IOException {
        return FileChannel.open(directory.resolve(name + "-" + iteration), StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.DELETE_ON_CLOSE);
    }

    private static void prewrite(FileChannel channel, long bytes) throws IOException {
        ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
        long position = 0;
        while (position < bytes) {
            zeros.clear().limit((int) Math.min(zeros.capacity(), bytes - position));
            while (zeros.hasRemaining()) {
                position += channel.write(zeros, position);
            }
        }
    }

    @TearDown(Level.Iteration)
    public void tearDownIteration() throws IOException {
        iterationArena.close();
        for (FileChannel channel : new FileChannel[] {sparse, plain, prewritten, reused}) {
            channel.close();
        }
    }

    @TearDown(Level.Trial)
    public void tearDownTrial() throws IOException {
        sourceArena.close();
        Files.deleteIfExists(directory);
    }

    @Benchmark
    public MemorySegment sparseMapThenCopy() throws IOException {
        sparse.truncate(0);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mapping = sparse.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            MemorySegment.copy(source, 0, mapping, 0, size);
            return mapping;
        }
    }

    @Benchmark
    public MemorySegment prewriteMapThenCopy() throws IOException {
        prewrite(plain, size);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mapping = plain.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            MemorySegment.copy(source, 0, mapping, 0, size);
            return mapping;
        }
    }

    @Benchmark
    public MemorySegment prewriteMapPopulateThenCopy() throws Throwable {
        prewrite(plain, size);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mapping = plain.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            populateWrite(mapping);
            MemorySegment.copy(source, 0, mapping, 0, size);
            return mapping;
        }
    }

    @Benchmark
    public MemorySegment sparseMapPopulateThenCopy() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mapping = sparse.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            populateWrite(mapping);
            MemorySegment.copy(source, 0, mapping, 0, size);
            return mapping;
        }
    }

    @Benchmark
    public MemorySegment loadThenCopyIntoPrewrittenMapping() {
        prewrittenMapping.load();
        MemorySegment.copy(source, 0, prewrittenMapping, 0, size);
        return prewrittenMapping;
    }

    private static final int MADV_POPULATE_WRITE = 23;
    private static final java.lang.invoke.MethodHandle MADVISE = java.lang.foreign.Linker.nativeLinker().downcallHandle(
            java.lang.foreign.Linker.nativeLinker().defaultLookup().find("madvise").orElseThrow(),
            java.lang.foreign.FunctionDescriptor.of(java.lang.foreign.ValueLayout.JAVA_INT,
                    java.lang.foreign.ValueLayout.ADDRESS, java.lang.foreign.ValueLayout.JAVA_LONG,
                    java.lang.foreign.ValueLayout.JAVA_INT));

    /** madvise(MADV_POPULATE_WRITE): the kernel maps every page writable in one call, no fault per page. */
    private static void populateWrite(MemorySegment mapping) throws Throwable {
        int rc = (int) MADVISE.invokeExact(mapping, mapping.byteSize(), MADV_POPULATE_WRITE);
        if (rc != 0) {
            throw new IllegalStateException("madvise(MADV_POPULATE_WRITE) failed");
        }
    }

    @Benchmark
    public MemorySegment copyIntoPrewrittenMapping() {
        MemorySegment.copy(source, 0, prewrittenMapping, 0, size);
        return prewrittenMapping;
    }

    @Benchmark
    public MemorySegment copyIntoReusedMapping() {
        MemorySegment.copy(source, 0, reusedMapping, 0, size);
        return reusedMapping;
    }

    @Benchmark
    public long positionalWrite() throws IOException {
        ByteBuffer bytes = source.asByteBuffer();
        long written = 0;
        while (bytes.hasRemaining()) {
            written += plain.write(bytes, bytes.position());
        }
        return written;
    }
}
