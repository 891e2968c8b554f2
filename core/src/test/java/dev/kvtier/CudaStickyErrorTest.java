package dev.kvtier;

import dev.kvtier.cuda.FakeCuda;
import dev.kvtier.testing.FaultLogRouting;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Issue 9, "the fake models the driver's failure modes": a sticky CUDA error. On a real device an
 * asynchronous fault (here {@code cudaErrorIllegalAddress} injected into a promotion's
 * {@code cudaMemcpyAsync} with {@code stickyasync=1}) poisons the context: every later call fails with
 * it. The cache must then say so, fail every device operation at once, lose no segment whose bytes are
 * on CPU or DISK, and still close. {@link StickyCudaErrorChild} does it all and says what it expects;
 * it runs in a child JVM because nothing inside the process can clear a sticky error or free what the
 * dead context holds (the fake keeps those, as a real context does until it is destroyed), so the
 * fake's {@code assertNothingLive()} could not pass after it and would fail every later test; the
 * child's exit is the context's destruction. Skipped where the fake is not built.
 *
 * <p>On main at 2dd89d5 (this child run against that commit's code and fake) 8 of its 11 checks
 * failed, in both DISK modes: the failing call and every later device call threw a raw
 * {@code CudaException} of whichever call met the error first ({@code cudaEventRecord failed},
 * {@code cudaStreamCreateWithFlags failed: cudaErrorIllegalAddress}), never saying the backend was dead
 * or what survived, with a WARNING that a copy "did not complete in time" and its stream was set aside;
 * {@code close()} threw {@code CudaException: cudaFree failed} and left a reaper thread waiting for a
 * stream that "still runs a copy". CPU and DISK reads already worked (host copies). The calls were fast
 * there too (the sticky error made each fail at once), so the checks that fail are the message and close.
 */
@Tag(FaultLogRouting.TAG)
class CudaStickyErrorTest {
    @TempDir
    Path directory;

    @ParameterizedTest(name = "DISK {0}")
    @EnumSource(value = DiskTransferMode.class, names = {"REGISTERED", "STAGED"})
    void aStickyErrorMakesTheBackendUnusableLosesNoHostSegmentAndCloseReturns(DiskTransferMode mode) throws Exception {
        FakeCuda.open(); // skips this test where the fake was not built
        String javaBinary = ProcessHandle.current().info().command().orElseThrow();
        List<String> command = List.of(javaBinary, "--enable-native-access=ALL-UNNAMED", "-Xmx256m",
                "-Dkvtier.native.dir=" + System.getProperty("kvtier.native.dir"),
                "-cp", System.getProperty("java.class.path"), StickyCudaErrorChild.class.getName(), mode.name(),
                directory.resolve("disk").toString());
        Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        child.getOutputStream().close();
        CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(child.getInputStream().readAllBytes());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        if (!child.waitFor(90, TimeUnit.SECONDS)) {
            child.destroyForcibly(); // also closes its output, which ends the reader
            fail("the child JVM did not finish within 90 s (a call hung), output:\n" + output.get(10, TimeUnit.SECONDS));
        }
        String text = output.get(10, TimeUnit.SECONDS);
        assertEquals(0, child.exitValue(), "the child JVM failed (exit " + child.exitValue() + "), output:\n" + text);
        assertTrue(text.strip().endsWith("OK"), text);
    }
}
