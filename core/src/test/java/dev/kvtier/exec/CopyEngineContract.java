package dev.kvtier.exec;

import dev.kvtier.testing.FaultLogRouting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What every {@link CopyEngine} promises (see its Javadoc), checked over the memory its own backend
 * supplies: bytes land exactly in every direction, as one plan of many regions or many plans at once,
 * blocking or not; a future completes only with the bytes in place; submits from several threads all
 * land; a closed engine refuses work and {@code close()} waits for what was submitted. Device memory
 * is never dereferenced by the test: it is read back through the engine itself.
 *
 * <p>Subclasses only configure: {@link #openBackend} (host backend, CUDA over the fake libcudart,
 * CUDA over the fake with staged extents, CUDA on a GPU tagged {@code gpu}).
 */
@Tag(FaultLogRouting.TAG)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class CopyEngineContract {
    private static final long CHUNK = 1 << 20;
    private static final long WAIT = TimeUnit.SECONDS.toNanos(30);

    @TempDir
    protected Path directory;

    private ExecutionBackend backend;
    private CopyEngine engine;
    private final List<MemoryChunk> chunks = new ArrayList<>();
    private Arena arena;

    /** The backend whose engine and memory are under test, its mapped files in {@code directory}. */
    protected abstract ExecutionBackend openBackend(Path directory);

    /** Runs after the backend is closed (a subclass checks that nothing native is left). */
    protected void afterBackendClosed() {
    }

    @BeforeEach
    void open() {
        backend = openBackend(directory);
        engine = backend.copyEngine();
        arena = Arena.ofShared();
    }

    @AfterEach
    void close() {
        if (backend == null) {
            return; // skipped before it opened (no device)
        }
        try {
            engine.close();
            chunks.forEach(MemoryChunk::close);
            backend.close();
            arena.close();
        } finally {
            afterBackendClosed();
        }
    }

    private MemorySegment memory(StorageKind kind) throws Exception {
        MemoryChunk chunk = backend.chunkAllocator(kind).allocate(CHUNK);
        chunks.add(chunk);
        return chunk.memory();
    }

    private static byte[] random(int size, long seed) {
        byte[] bytes = new byte[size];
        new SplittableRandom(seed).nextBytes(bytes);
        return bytes;
    }

    private static CopyPlan plan(StorageKind from, MemorySegment source, StorageKind to, MemorySegment destination) {
        return CopyPlan.between(from.side(), List.of(source), to.side(), List.of(destination));
    }

    /** Puts {@code content} at the start of {@code target} (of {@code kind}) through the engine, blocking. */
    private void upload(byte[] content, StorageKind kind, MemorySegment target) {
        MemorySegment staging = arena.allocate(content.length, 64);
        MemorySegment.copy(MemorySegment.ofArray(content), 0, staging, 0, content.length);
        engine.copyAndWait(plan(StorageKind.PINNED_HOST, staging, kind, target.asSlice(0, content.length)), WAIT);
    }

    /** The first {@code size} bytes of {@code source} (of {@code kind}), read back through the engine. */
    private byte[] download(StorageKind kind, MemorySegment source, int size) {
        MemorySegment staging = arena.allocate(size, 64);
        engine.copyAndWait(plan(kind, source.asSlice(0, size), StorageKind.PINNED_HOST, staging), WAIT);
        return staging.toArray(ValueLayout.JAVA_BYTE);
    }

    @ParameterizedTest
    @EnumSource(StorageKind.class)
    void bytesLandExactlyFromEveryKindToEveryKindBlockingAndNot(StorageKind from) throws Exception {
        for (StorageKind to : StorageKind.values()) {
            MemorySegment source = memory(from);
            MemorySegment destination = memory(to);
            byte[] content = random(300_001, from.ordinal() * 7L + to.ordinal());
            upload(content, from, source);
            engine.copyAndWait(plan(from, source.asSlice(0, content.length), to, destination.asSlice(0, content.length)), WAIT);
            assertArrayEquals(content, download(to, destination, content.length), from + " -> " + to + " blocking");

            byte[] again = random(4099, from.ordinal() * 13L + to.ordinal());
            upload(again, from, source);
            engine.submit(plan(from, source.asSlice(0, again.length), to, destination.asSlice(0, again.length))).join();
            assertArrayEquals(again, download(to, destination, again.length), from + " -> " + to + " submitted");
        }
    }

    @Test
    void aPlanOfManyRegionsAndManyPlansAtOnceLandInOrder() throws Exception {
        MemorySegment host = memory(StorageKind.PINNED_HOST);
        MemorySegment device = memory(StorageKind.DEVICE);
        byte[] content = random(64 * 4096, 5);
        upload(content, StorageKind.PINNED_HOST, host);
        // One plan: 64 pages scattered in reverse order on the device.
        List<MemorySegment> sourceRuns = new ArrayList<>();
        List<MemorySegment> deviceRuns = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            sourceRuns.add(host.asSlice(i * 4096L, 4096));
            deviceRuns.add(device.asSlice((63 - i) * 2 * 4096L, 4096));
        }
        engine.submit(CopyPlan.between(MemoryKind.HOST, sourceRuns, MemoryKind.DEVICE, deviceRuns)).join();
        // Many plans: each device page back to its place in a second host buffer.
        MemorySegment back = memory(StorageKind.PINNED_HOST);
        List<CopyPlan> plans = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            plans.add(plan(StorageKind.DEVICE, deviceRuns.get(i), StorageKind.PINNED_HOST, back.asSlice(i * 4096L, 4096)));
        }
        engine.submitAll(plans).join();
        assertArrayEquals(content, back.asSlice(0, content.length).toArray(ValueLayout.JAVA_BYTE));
    }

    /**
     * The blocking batch ({@link CopyEngine#copyAllAndWait}) as the cache uses it to make room: plans of every
     * pair of kinds at once (device and host-to-host mixed, which the CUDA engine splits between the device and
     * the calling thread), each page in place when it returns.
     */
    @Test
    void copyAllAndWaitLandsEveryPlanOfEveryKindBeforeReturning() throws Exception {
        List<CopyPlan> plans = new ArrayList<>();
        List<byte[]> contents = new ArrayList<>();
        List<MemorySegment> destinations = new ArrayList<>();
        List<StorageKind> destinationKinds = new ArrayList<>();
        long seed = 11;
        for (StorageKind from : StorageKind.values()) {
            for (StorageKind to : StorageKind.values()) {
                MemorySegment source = memory(from);
                MemorySegment destination = memory(to);
                byte[] content = random(4096 * 3 + 17, seed++);
                upload(content, from, source);
                plans.add(plan(from, source.asSlice(0, content.length), to, destination.asSlice(0, content.length)));
                contents.add(content);
                destinations.add(destination);
                destinationKinds.add(to);
            }
        }
        engine.copyAllAndWait(plans, WAIT);
        for (int i = 0; i < plans.size(); i++) {
            assertArrayEquals(contents.get(i), download(destinationKinds.get(i), destinations.get(i), contents.get(i).length),
                    "plan " + i + ": " + plans.get(i).sourceKind() + " -> " + plans.get(i).destinationKind());
        }
        assertDoesNotThrow(() -> engine.copyAllAndWait(List.of(), WAIT));
    }

    @Test
    void anEmptyPlanCompletesAtOnce() {
        CopyPlan empty = new CopyPlan(MemoryKind.HOST, MemoryKind.DEVICE, List.of());
        assertDoesNotThrow(() -> engine.submit(empty).get(10, TimeUnit.SECONDS));
        assertDoesNotThrow(() -> engine.copyAndWait(empty, WAIT));
    }

    @Test
    void heapMemoryIsTakenOnlyWhereTheEngineSaysSo() throws Exception {
        if (!engine.acceptsHeapMemory()) {
            return; // the executor stages heap bytes for such an engine (TransferExecutorTest)
        }
        MemorySegment device = memory(StorageKind.DEVICE);
        byte[] content = random(70_000, 9);
        engine.copyAndWait(CopyPlan.between(MemoryKind.HOST, List.of(MemorySegment.ofArray(content)),
                MemoryKind.DEVICE, List.of(device.asSlice(0, content.length))), WAIT);
        byte[] back = new byte[content.length];
        engine.copyAndWait(CopyPlan.between(MemoryKind.DEVICE, List.of(device.asSlice(0, content.length)),
                MemoryKind.HOST, List.of(MemorySegment.ofArray(back))), WAIT);
        assertArrayEquals(content, back);
    }

    @Test
    void submitsFromSeveralThreadsAllLand() throws Exception {
        int threads = 3;
        int rounds = 40;
        int slot = 8192;
        MemorySegment host = memory(StorageKind.PINNED_HOST);
        MemorySegment device = memory(StorageKind.DEVICE);
        MemorySegment back = memory(StorageKind.PINNED_HOST);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    for (int round = 0; round < rounds; round++) {
                        long offset = (long) (thread * rounds + round) * slot;
                        byte[] content = random(slot, offset);
                        MemorySegment.copy(MemorySegment.ofArray(content), 0, host, offset, slot);
                        CompletableFuture<Void> up = engine.submit(plan(StorageKind.PINNED_HOST, host.asSlice(offset, slot),
                                StorageKind.DEVICE, device.asSlice(offset, slot)));
                        up.join();
                        engine.copyAndWait(plan(StorageKind.DEVICE, device.asSlice(offset, slot), StorageKind.PINNED_HOST,
                                back.asSlice(offset, slot)), WAIT);
                        assertArrayEquals(content, back.asSlice(offset, slot).toArray(ValueLayout.JAVA_BYTE),
                                "thread " + thread + " round " + round);
                    }
                    return null;
                }));
            }
            for (Future<?> future : done) {
                future.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void closeWaitsForSubmittedCopiesThenRefusesWork() throws Exception {
        MemorySegment host = memory(StorageKind.PINNED_HOST);
        MemorySegment device = memory(StorageKind.DEVICE);
        List<CompletableFuture<Void>> submitted = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            submitted.add(engine.submit(plan(StorageKind.PINNED_HOST, host.asSlice(i * 65536L, 65536),
                    StorageKind.DEVICE, device.asSlice(i * 65536L, 65536))));
        }
        engine.close();
        for (CompletableFuture<Void> future : submitted) {
            assertTrue(future.isDone(), "close() returned before a submitted copy completed");
        }
        CopyPlan more = plan(StorageKind.PINNED_HOST, host.asSlice(0, 4096), StorageKind.DEVICE, device.asSlice(0, 4096));
        assertThrows(IllegalStateException.class, () -> engine.submit(more));
        assertThrows(IllegalStateException.class, () -> engine.copyAndWait(more, WAIT));
        assertDoesNotThrow(engine::close, "close() is idempotent");
    }

    @Test
    void describesItself() {
        assertTrue(!engine.description().isBlank(), "description must say how copies are done");
    }
}
