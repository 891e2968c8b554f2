package dev.kvtier.cuda;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The loader and {@link CudaRuntime#probe()} against what this machine has: the real libcudart 13 under
 * /usr/local/cuda but no GPU and no driver, so the probe must say why CUDA is unusable, and never throw.
 */
class RealRuntimeProbeTest {

    private static final Path REAL_CUDART = Path.of("/usr/local/cuda/lib64/libcudart.so.13");

    @Test
    void theRealRuntimeWithoutADriverOrDeviceIsReportedUnusableWithTheCudaError() {
        assumeTrue(Files.exists(REAL_CUDART), "no real libcudart at " + REAL_CUDART);
        CudaProbe probe = assertDoesNotThrow(() -> CudaRuntime.probe(REAL_CUDART));
        assumeTrue(!probe.isUsable(), "this machine has a usable GPU: " + probe.describe());
        CudaProbe.Unavailable unavailable = assertInstanceOf(CudaProbe.Unavailable.class, probe);
        CudaException error = unavailable.cudaError().orElseThrow(
                () -> new AssertionError("expected a CUDA error as the reason, got: " + probe.describe()));
        assertEquals("cudaGetDeviceCount", error.call());
        assertTrue(List.of("cudaErrorInsufficientDriver", "cudaErrorNoDevice").contains(error.errorName()),
                error.getMessage());
        assertFalse(error.errorText().isBlank());
        String reason = probe.describe();
        assertTrue(reason.contains("libcudart 13.0 at " + REAL_CUDART), reason);
        assertTrue(reason.contains(error.errorName()) && reason.contains(error.errorText()), reason);
    }

    @Test
    void theDefaultSearchNeverThrowsAndExplainsItself() {
        CudaProbe probe = assertDoesNotThrow(() -> CudaRuntime.probe());
        assertFalse(probe.describe().isBlank());
        if (probe instanceof CudaProbe.Unavailable unavailable) {
            assertFalse(unavailable.attempts().isEmpty(), "an unusable result must list where the loader looked");
        }
    }

    @Test
    void aMissingFileIsReportedWithThePlacesTriedAndThePropertyToSet() {
        CudaProbe probe = CudaRuntime.probe(Path.of("/nonexistent/libcudart.so.13"));
        CudaProbe.Unavailable unavailable = assertInstanceOf(CudaProbe.Unavailable.class, probe);
        assertEquals(1, unavailable.attempts().size());
        assertEquals("no such file", unavailable.attempts().getFirst().failure().orElseThrow());
        assertTrue(probe.describe().contains("/nonexistent/libcudart.so.13")
                && probe.describe().contains("-D" + CudaLibraryLoader.LIBRARY_PROPERTY)
                && probe.describe().contains(CudaLibraryLoader.LIBRARY_ENV), probe.describe());
    }

    @Test
    void aLibraryThatIsNotACudaRuntimeIsRefused() {
        Path libm = Path.of("/lib/x86_64-linux-gnu/libm.so.6");
        assumeTrue(Files.exists(libm), "no " + libm + " on this machine");
        CudaProbe.Unavailable unavailable = assertInstanceOf(CudaProbe.Unavailable.class, CudaRuntime.probe(libm));
        assertTrue(unavailable.attempts().getFirst().failure().orElseThrow().contains("not a CUDA runtime"),
                unavailable.attempts().toString());
    }

    @Test
    void defaultPlacesAreTriedInTheDocumentedOrder() {
        Map<String, String> properties = Map.of(CudaLibraryLoader.LIBRARY_PROPERTY, "/p/libcudart.so");
        Map<String, String> environment = Map.of(CudaLibraryLoader.LIBRARY_ENV, "/e/libcudart.so",
                "CUDA_HOME", "/home", "CUDA_PATH", "/path");
        List<String> order = CudaLibraryLoader.defaultCandidates(properties::get, environment::get).stream()
                .map(c -> c.source() + " " + c.location()).toList();
        assertEquals(List.of(
                "-Dkvtier.cudart /p/libcudart.so",
                "$KVTIER_CUDART /e/libcudart.so",
                "$CUDA_HOME /home/lib64/libcudart.so.13",
                "$CUDA_HOME /home/lib64/libcudart.so.12",
                "$CUDA_HOME /home/lib64/libcudart.so",
                "$CUDA_PATH /path/lib64/libcudart.so.13",
                "$CUDA_PATH /path/lib64/libcudart.so.12",
                "$CUDA_PATH /path/lib64/libcudart.so",
                "/usr/local/cuda /usr/local/cuda/lib64/libcudart.so.13",
                "/usr/local/cuda /usr/local/cuda/lib64/libcudart.so.12",
                "/usr/local/cuda /usr/local/cuda/lib64/libcudart.so",
                "system loader libcudart.so.13",
                "system loader libcudart.so.12",
                "system loader libcudart.so"), order);
    }

    @Test
    void theFirstLoadablePlaceWinsAndEarlierFailuresAreKept() {
        assumeTrue(Files.exists(REAL_CUDART), "no real libcudart at " + REAL_CUDART);
        Map<String, String> properties = Map.of(CudaLibraryLoader.LIBRARY_PROPERTY, "/nonexistent/libcudart.so");
        CudaLibraryLoader.LoadResult result = CudaLibraryLoader.load(
                CudaLibraryLoader.defaultCandidates(properties::get, name -> null));
        CudaLibraryLoader.Library library = result.library().orElseThrow();
        assertEquals("/usr/local/cuda", library.source());
        assertEquals("no such file", result.attempts().getFirst().failure().orElseThrow());
        assertEquals("not set", result.attempts().get(1).failure().orElseThrow());
        assertTrue(result.attempts().getLast().failure().isEmpty());
    }
}
