package dev.kvtier.bench.soak;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvtier.testing.FaultLogRouting;

/**
 * Issue 9's multi-threaded fault stress in CI: the soak, briefly. Over the fake libcudart, 3 threads for 20 s cycle
 * through sync and async call failures, host functions that never run, interrupts and tiny budgets, every read checked
 * against the model, leaks checked after every close; it must find no wrong byte, no hang, no leak and no unexpected
 * failure, and each fault kind must actually have fired. Complements {@code Issue9RegressionTest}'s item-3 test (async
 * copy faults only, one cache, no leak checks). A shorter host-backend run covers a full disk, interrupts and tiny
 * budgets. The other kinds (slow copies past the timeout, sticky errors, truncated extents) each have a test of their
 * own, disabled until core fixes what the soak found with them (each test's Javadoc says what).
 */
@Tag(FaultLogRouting.TAG)
class SoakTest {

    @Test
    void faultsOverTheFakeNeverYieldWrongBytesHangsOrLeaks() {
        Path library = fakeLibrary();
        SoakReport report = soak(new SoakOptions(Duration.ofSeconds(20), Duration.ofMillis(3800), 3, 6,
                SoakOptions.BackendChoice.CUDA, Optional.of(library), 9, Duration.ofMillis(200), false, Optional.empty(),
                List.of(Fault.SYNC_FAIL, Fault.ASYNC_FAIL, Fault.HOST_FUNC_NEVER, Fault.INTERRUPTS, Fault.TINY_BUDGETS)));
        assertClean(report);
        Map<String, long[]> injected = report.injected();
        for (String fault : new String[] {"failasync=cudaMemcpy", "fail=cudaMemcpy", "failasync=cudaLaunchHostFunc",
                "interrupt", "GPU 2 pages"}) {
            long fired = injected.entrySet().stream().filter(e -> e.getKey().contains(fault))
                    .mapToLong(e -> e.getValue()[1]).sum();
            assertTrue(fired > 0, fault + " never fired: " + describe(injected));
        }
    }

    /**
     * Copies slower than the transfer timeout: after the cache is closed (and the reaper has had its 20 timeouts to
     * drain the streams), nothing may stay allocated. Fails on main at 2dd89d5: the reaper logs "N stream(s) never
     * drained; their memory stays allocated" although the delay was set back to 0 before close, so the executor's
     * memory is never freed: in the 10-minute soak every such epoch left pinned memory and events in the fake, most
     * left device memory, registrations, the extent files, their descriptors and the held {@code kvtier.lock} too.
     * Enable once core frees them.
     */
    @Test

    void timedOutCopiesLeaveNothingAllocatedAfterClose() {
        SoakReport report = soak(new SoakOptions(Duration.ofSeconds(8), Duration.ofSeconds(4), 3, 6,
                SoakOptions.BackendChoice.CUDA, Optional.of(fakeLibrary()), 9, Duration.ofMillis(200), false,
                Optional.empty(), List.of(Fault.COPY_DELAY)));
        assertClean(report);
    }

    /**
     * A sticky error, then close: the cache's own host resources (extent files, their descriptors, the disk directory's
     * lock) must be released even though the dead context cannot free device memory. Fails on main at 2dd89d5: after
     * {@code close()} returns, the extent files and {@code kvtier.lock} stay in the disk directory with their
     * descriptors open (the lock still held, so that directory cannot be opened again by this process); once in four
     * episodes of the 10-minute soak {@code close()} itself threw {@code CudaException: cudaFree failed:
     * cudaErrorLaunchFailure} (from {@code PagedMemory.close}).
     */
    @Test

    void closeAfterAStickyErrorReleasesTheDiskDirectory() {
        SoakReport report = soak(new SoakOptions(Duration.ofSeconds(8), Duration.ofSeconds(4), 3, 6,
                SoakOptions.BackendChoice.CUDA, Optional.of(fakeLibrary()), 9, Duration.ofMillis(200), false,
                Optional.empty(), List.of(Fault.STICKY)));
        assertClean(report);
    }

    @Test
    void hostFaultsNeverYieldWrongBytesHangsOrLeaks() {
        SoakReport report = soak(new SoakOptions(Duration.ofSeconds(6), Duration.ofSeconds(2), 3, 6,
                SoakOptions.BackendChoice.HOST, Optional.empty(), 7, Duration.ofMillis(200), false, Optional.empty(),
                List.of(Fault.DISK_FULL, Fault.INTERRUPTS, Fault.TINY_BUDGETS)));
        assertClean(report);
    }

    /**
     * Truncated extents on the host backend: reads must fail with a {@link dev.kvtier.KvTierException}, never with the
     * JVM's {@link InternalError}. Fails on main at 2dd89d5: within seconds a {@code read} of a DISK segment throws
     * {@code InternalError: a fault occurred in an unsafe memory access operation} out of
     * {@code Checksums.guardedUpdate} (at its {@code MemorySegment.copy}), although that copy is inside
     * {@code catch (InternalError)}. HotSpot raises a fault in an Unsafe copy as an asynchronous exception in
     * compiled code, delivered at the next safepoint poll, which can lie outside the try block; so the guard must
     * not rely on where the error surfaces. Enable once core handles it.
     */
    @Test

    void truncatedExtentsNeverEscapeAsInternalError() {
        SoakReport report = soak(new SoakOptions(Duration.ofSeconds(6), Duration.ofSeconds(6), 3, 6,
                SoakOptions.BackendChoice.HOST, Optional.empty(), 7, Duration.ofMillis(200), false, Optional.empty(),
                List.of(Fault.TRUNCATE_EXTENT)));
        assertClean(report);
        long truncated = report.injected().getOrDefault("extent truncated and grown back", new long[2])[1];
        assertTrue(truncated > 0, "no extent was truncated: " + describe(report.injected()));
    }

    @Test
    void durationsParse() {
        Soak.DurationConverter converter = new Soak.DurationConverter();
        assertEquals(Duration.ofMinutes(10), converter.convert("10m"));
        assertEquals(Duration.ofSeconds(90), converter.convert("1m30s"));
        assertEquals(Duration.ofMillis(200), converter.convert("200ms"));
        assertEquals(Duration.ofMinutes(5), converter.convert("PT5M"));
    }

    @Test
    void badArgumentsAreNamedAndExitWithUsage() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Soak.run(new PrintStream(new ByteArrayOutputStream()), new PrintStream(err, true, StandardCharsets.UTF_8),
                "--duration", "ten minutes");
        assertEquals(Soak.USAGE, status);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("ten minutes"), err.toString(StandardCharsets.UTF_8));
        err.reset();
        status = Soak.run(new PrintStream(new ByteArrayOutputStream()), new PrintStream(err, true, StandardCharsets.UTF_8),
                "--threads", "0");
        assertEquals(Soak.USAGE, status);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("threads must be in 1..256, was 0"),
                err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void contentTellsKeysVersionsAndTornBytesApart() {
        Content content = new Content(1);
        byte[] v2 = content.bytes(7, 2, 5000);
        assertEquals(null, content.check(v2, v2.length, 7, 2, 2));
        assertTrue(content.check(v2, v2.length, 8, 2, 2).contains("key 7"));
        assertTrue(content.check(v2, v2.length, 7, 3, 4).contains("version 2"));
        v2[4000] ^= 1;
        assertTrue(content.check(v2, v2.length, 7, 2, 2).contains("differs from byte 4000"));
        assertTrue(content.check(new byte[5000], 5000, 7, 2, 2).contains("no header"));
    }

    private static SoakReport soak(SoakOptions options) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        SoakReport report = assertTimeoutPreemptively(options.duration().plusSeconds(25),
                () -> new SoakRun(options, System.out, new PrintStream(err, true, StandardCharsets.UTF_8)).run(),
                () -> "the soak itself did not finish; its log:\n" + err.toString(StandardCharsets.UTF_8));
        System.out.println(report.markdown("SoakTest " + options));
        return report;
    }

    private static void assertClean(SoakReport report) {
        String summary = report.markdown("SoakTest");
        assertTrue(report.verifiedReads() > 100, "too few reads verified:\n" + summary);
        assertEquals(0, report.wrongBytes(), summary);
        assertEquals(0, report.wrongMetadata(), summary);
        assertEquals(0, report.hangs(), summary);
        assertEquals(0, report.leakCount(), summary);
        assertEquals(0, report.unexpectedFailures(), summary);
    }

    private static String describe(Map<String, long[]> injected) {
        StringBuilder text = new StringBuilder();
        injected.forEach((label, n) -> text.append(label).append(": armed ").append(n[0]).append(", fired ").append(n[1]).append("; "));
        return text.toString();
    }

    /** The fake libcudart Maven built, or the test is skipped with the native build's reason. */
    private static Path fakeLibrary() {
        String dir = System.getProperty("kvtier.native.dir");
        Assumptions.assumeTrue(dir != null && !dir.isBlank(), "kvtier.native.dir is not set (run through Maven)");
        Path status = Path.of(dir, "status");
        String text;
        try {
            text = Files.exists(status) ? Files.readString(status).strip() : "no status file at " + status;
        } catch (IOException e) {
            text = "cannot read " + status + ": " + e;
        }
        Assumptions.assumeTrue(text.equals("built"), "native parts not built: " + text);
        return Path.of(dir, "fakecudart", "libcudart.so");
    }
}
