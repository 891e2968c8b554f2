package dev.kvtier;

import dev.kvtier.cuda.FakeCuda;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The child JVM of {@link CudaStickyErrorTest}: over the fake libcudart (found through the
 * {@code kvtier.native.dir} property, as in the parent), puts segments on GPU, CPU and DISK (some of
 * them moved there through the device), injects a sticky asynchronous fault, and checks what the
 * cache does from then on: each check prints {@code ok:} or {@code FAILED:} (and the later checks still
 * run, so one run shows every difference); the exit status is 0, after {@code OK}, only if all held. Not a test itself: a sticky error cannot be cleared from inside the
 * process (the fake keeps what the dead context could not free, as a real context does until it is
 * destroyed), so it runs in a process of its own whose exit plays the context's destruction.
 *
 * <p>Arguments: the {@link DiskTransferMode} name, a disk directory.
 */
public final class StickyCudaErrorChild {
    private static final int PAGE = 4096;
    /** Far above what any failing call may take here: "fast" is judged against a fifth of it. */
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private StickyCudaErrorChild() {
    }

    public static void main(String[] args) throws Exception {
        DiskTransferMode mode = DiskTransferMode.valueOf(args[0]);
        Path directory = Files.createDirectories(Path.of(args[1]));
        FakeCuda fake = FakeCuda.open();
        fake.reset();
        KvTierCache cache = KvTierCache.open(KvTierConfig.builder().backend(Backend.CUDA).cudaLibrary(fake.library())
                .diskTransferMode(mode).gpuBudgetBytes(64L * PAGE).cpuBudgetBytes(64L * PAGE).pageSizeBytes(PAGE)
                .diskExtentBytes(16L * PAGE).diskDirectory(directory).transferTimeout(TIMEOUT).build());
        byte[] gpu = KvTierCacheContract.randomBytes(1, 3 * PAGE + 5);
        byte[] cpu = KvTierCacheContract.randomBytes(2, 2 * PAGE + 7);
        byte[] disk = KvTierCacheContract.randomBytes(3, 5 * PAGE + 1);
        byte[] cpuFromGpu = KvTierCacheContract.randomBytes(4, PAGE);
        byte[] diskFromGpu = KvTierCacheContract.randomBytes(5, 2 * PAGE);
        put(cache, "gpu", gpu, Tier.GPU);
        put(cache, "cpu", cpu, Tier.CPU);
        put(cache, "disk", disk, Tier.DISK);
        put(cache, "cpu-from-gpu", cpuFromGpu, Tier.GPU);
        cache.demote("cpu-from-gpu", Tier.CPU);
        put(cache, "disk-from-gpu", diskFromGpu, Tier.GPU);
        cache.demote("disk-from-gpu", Tier.DISK);
        System.out.println("placed: " + cache.stats());

        // The fault: the copy of this promotion is accepted, skipped, and poisons the whole context.
        fake.configure("stickyasync=1;failasync=cudaMemcpyAsync:1:cudaErrorIllegalAddress");
        check("the failing call names the sticky error and says the backend is unusable", () -> {
            TransferFailedException first = timed("the failing promote", () ->
                    assertThrows(TransferFailedException.class, () -> cache.promote("cpu", Tier.GPU)));
            System.out.println("  the failing call: " + first.getMessage());
            assertTrue(first.getMessage().contains("cudaErrorIllegalAddress"), first.getMessage());
            requireUnusableMessage(first);
        });
        check("the failed promotion is rolled back", () -> assertEquals(Tier.CPU, cache.get("cpu").orElseThrow().tier()));

        // Every later device operation fails at once, saying why.
        check("read of a GPU segment fails fast and clearly", () -> requireUnusableMessage(timed("read GPU", () ->
                assertThrows(TransferFailedException.class, () -> cache.read("gpu", MemorySegment.ofArray(new byte[gpu.length]))))));
        check("demote GPU to CPU fails fast and clearly", () -> requireUnusableMessage(timed("demote GPU to CPU", () ->
                assertThrows(TransferFailedException.class, () -> cache.demote("gpu", Tier.CPU)))));
        check("promote DISK to GPU fails fast and clearly", () -> requireUnusableMessage(timed("promote DISK to GPU", () ->
                assertThrows(TransferFailedException.class, () -> cache.promote("disk", Tier.GPU)))));
        check("promote CPU to GPU again fails fast and clearly", () -> requireUnusableMessage(timed("promote CPU to GPU", () ->
                assertThrows(TransferFailedException.class, () -> cache.promote("cpu", Tier.GPU)))));
        check("put on GPU fails fast and clearly, leaving nothing", () -> {
            requireUnusableMessage(timed("put on GPU", () -> assertThrows(TransferFailedException.class, () ->
                    put(cache, "new-gpu", KvTierCacheContract.randomBytes(6, PAGE), Tier.GPU))));
            assertTrue(cache.get("new-gpu").isEmpty(), "a failed put leaves nothing behind");
        });

        check("put on a full GPU fails fast: no room can be made, for the reason that stops the victims", () -> {
            TierFullException full = timed("put on a full GPU", () -> assertThrows(TierFullException.class, () ->
                    put(cache, "big-gpu", KvTierCacheContract.randomBytes(8, 62 * PAGE), Tier.GPU)));
            requireUnusableMessage(assertInstanceOf(TransferFailedException.class, full.getCause(), String.valueOf(full)));
            assertEquals(Tier.GPU, cache.get("gpu").orElseThrow().tier(), "the victim's failed demotion is rolled back");
        });

        // No segment with its bytes on the host is lost: reads are host copies, and so are moves between CPU and DISK.
        check("CPU and DISK segments read back byte-exact", () -> {
            assertArrayEquals(cpu, KvTierCacheContract.readAll(cache, "cpu"), "cpu");
            assertArrayEquals(disk, KvTierCacheContract.readAll(cache, "disk"), "disk");
            assertArrayEquals(cpuFromGpu, KvTierCacheContract.readAll(cache, "cpu-from-gpu"), "cpu-from-gpu");
            assertArrayEquals(diskFromGpu, KvTierCacheContract.readAll(cache, "disk-from-gpu"), "disk-from-gpu");
        });
        check("CPU to DISK still moves, new CPU and DISK segments still go in", () -> {
            cache.demote("cpu", Tier.DISK);
            assertArrayEquals(cpu, KvTierCacheContract.readAll(cache, "cpu"), "cpu, demoted to DISK after the fault");
            byte[] late = KvTierCacheContract.randomBytes(7, 6 * PAGE); // on DISK: a new extent, made after the fault
            put(cache, "late-cpu", late, Tier.CPU);
            put(cache, "late-disk", late, Tier.DISK);
            assertArrayEquals(late, KvTierCacheContract.readAll(cache, "late-cpu"), "late-cpu");
            assertArrayEquals(late, KvTierCacheContract.readAll(cache, "late-disk"), "late-disk");
            assertEquals(Tier.GPU, cache.get("gpu").orElseThrow().tier(), "the GPU segment's metadata stays");
        });
        System.out.println("after the fault: " + cache.stats());

        // close() returns, bounded, without throwing, though the dead context refuses every free and destroy.
        check("close returns in time without throwing, leaving no thread behind", () -> {
            CompletableFuture<Void> closing = CompletableFuture.runAsync(cache::close);
            try {
                closing.get(TIMEOUT.toMillis() / 5, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                fail("close() did not return within " + TIMEOUT.toMillis() / 5 + " ms", e);
            } catch (Exception e) {
                fail("close() threw " + e.getCause(), e.getCause());
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (kvtierThreads() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(0, kvtierThreads(), "no kvtier thread (say, a reaper waiting for dead streams) outlives close: "
                    + Thread.getAllStackTraces().keySet());
        });
        fake.reset();
        System.out.println("kept by the dead context (freed by its destruction: this process's exit): device="
                + fake.liveCount("device") + " pinned=" + fake.liveCount("pinned") + " registered="
                + fake.liveCount("registered") + " streams=" + fake.liveCount("streams") + " events="
                + fake.liveCount("events"));
        System.out.println(failures == 0 ? "OK" : failures + " check(s) FAILED");
        System.exit(failures == 0 ? 0 : 1);
    }

    /** A step that must hold; a failure is printed and counted, and the next steps still run (to show them all). */
    private static void check(String what, Step step) {
        try {
            step.run();
            System.out.println("ok: " + what);
        } catch (Throwable t) {
            failures++;
            System.out.println("FAILED: " + what + ": " + t);
            t.printStackTrace(System.out);
        }
    }

    private interface Step {
        void run() throws Exception;
    }

    private static int failures;

    private static void put(KvTierCache cache, String key, byte[] bytes, Tier tier) {
        cache.put(key, PositionRange.of(0, 1), MemorySegment.ofArray(bytes), tier);
    }

    /** What a call answers after the sticky fault: the error's name, that GPU is lost and CPU and DISK stay. */
    private static void requireUnusableMessage(TransferFailedException e) {
        String message = e.getMessage();
        assertTrue(message.contains("unusable") && message.contains("cudaErrorIllegalAddress")
                && message.contains("GPU are lost") && message.contains("CPU and DISK stay readable"), message);
    }

    /** Runs {@code call}, which must end well within the transfer timeout (it must not wait for the device). */
    private static <T> T timed(String what, Supplier<T> call) {
        long start = System.nanoTime();
        T result = call.get();
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.println(what + ": " + millis + " ms");
        assertTrue(millis < TIMEOUT.toMillis() / 5, what + " took " + millis + " ms of a " + TIMEOUT.toMillis()
                + " ms transfer timeout");
        return result;
    }

    /** Live threads of the cache (not the bindings' process-wide callback completers, idle ones linger by design). */
    private static long kvtierThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("kvtier-")
                        && !t.getName().startsWith("kvtier-cuda-callback-")).count();
    }
}
