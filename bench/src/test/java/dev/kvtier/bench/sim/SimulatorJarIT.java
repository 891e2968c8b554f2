package dev.kvtier.bench.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarFile;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bench/target/kvtier-sim.jar} run as a user runs it ({@code java -jar}, a fresh JVM, nothing on the class
 * path but the jar): its manifest, its help, its own exit status and message for a mistyped option, and a short
 * run to the end. Runs after {@code package} (the {@code packaged-jars} execution in bench's POM).
 */
class SimulatorJarIT {
    /** Set only by bench's {@code packaged-jars} execution, which runs after the jar is built. */
    private static final String BUILD_DIRECTORY = System.getProperty("kvtier.build.directory");
    private static final Path JAR = Path.of(BUILD_DIRECTORY == null ? "target" : BUILD_DIRECTORY, "kvtier-sim.jar");

    @TempDir
    Path temp;

    @BeforeAll
    static void onlyAfterPackage() {
        // A -Dtest=... naming this class also reaches the test phase, before the jar exists: nothing to check there.
        assumeTrue(BUILD_DIRECTORY != null, "runs after package, in bench's packaged-jars execution");
    }

    private record Outcome(int status, String out, String err) {
    }

    /** Runs the jar with the java of this JVM (the toolchain's, >= 22); no JVM options but the jar's manifest's. */
    private static Outcome run(Path workingDirectory, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElseThrow());
        command.add("-jar");
        command.add(JAR.toAbsolutePath().toString());
        command.addAll(List.of(args));
        Path out = Files.createTempFile(workingDirectory, "out", ".txt");
        Path err = Files.createTempFile(workingDirectory, "err", ".txt");
        Process process = new ProcessBuilder(command).directory(workingDirectory.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!process.waitFor(120, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("java -jar " + JAR + " " + String.join(" ", args) + " did not end in 120 s");
        }
        return new Outcome(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    @Test
    void theManifestNamesTheSimulatorAndGrantsNativeAccess() throws IOException {
        assertTrue(Files.isRegularFile(JAR), JAR + " was not built by package");
        try (JarFile jar = new JarFile(JAR.toFile())) {
            Attributes main = jar.getManifest().getMainAttributes();
            assertEquals(Simulate.class.getName(), main.getValue(Attributes.Name.MAIN_CLASS));
            assertEquals("ALL-UNNAMED", main.getValue("Enable-Native-Access"));
        }
    }

    @Test
    void helpPrintsTheUsageAndExitsZero() throws Exception {
        Outcome o = run(temp, "--help");
        assertEquals(0, o.status(), o.err());
        assertTrue(o.out().startsWith("Usage: simulate"), o.out());
        assertTrue(o.out().contains("--policy"), o.out());
    }

    @Test
    void aMistypedOptionIsOneLineWithASuggestionThenTheUsageAndExitStatusTwo() throws Exception {
        Outcome o = run(temp, "--polcy", "lru");
        assertEquals(2, o.status(), o.err());
        List<String> lines = o.err().lines().toList();
        assertEquals("simulate: unknown option --polcy (did you mean --policy?)", lines.getFirst(), o.err());
        assertTrue(o.err().contains("Usage: simulate"), o.err());
        assertFalse(o.err().contains("Exception") || o.err().contains("\tat "), "no stack trace: " + o.err());
        assertEquals("", o.out());
    }

    @Test
    void aShortRunEndsCleanWithoutANativeAccessWarning() throws Exception {
        Outcome o = run(temp, "--sessions", "4", "--requests", "60", "--turn-tokens", "8..64", "--gpu-budget", "30%",
                "--backend", "host", "--progress", "off");
        assertEquals(0, o.status(), o.err() + o.out());
        assertTrue(o.out().contains("failures          0"), o.out());
        assertFalse(o.err().contains("restricted method"), "Enable-Native-Access took effect: " + o.err());
    }
}
