package dev.kvtier;

import dev.kvtier.DiskPersistence.FsyncPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * kill -9 at random points: writer JVMs ({@link PersistenceWriterChild}) are killed after a random
 * number of acknowledged operations, under each fsync policy in turn, on one directory. After every
 * kill the next open (the next child, or this JVM every other round) must find every segment either
 * whole, with every byte as the generator made it, or absent; every DISK put acknowledged before the
 * kill and not removed or promoted since must be there (the page cache survives a killed process, under
 * every policy); no recovered segment may fail its checksum. A second open while a writer runs is
 * refused. The directory stays bounded. The children close and reopen every 100 operations and compact
 * their journal every few dozen records, so kills also land in opens, closes and compactions.
 * Bounded: 6 kills, each child waited for at most 60 s.
 */
class PersistenceCrashTest {
    private static final int KILLS = 6;

    @TempDir
    Path directory;
    @TempDir
    Path logs;
    private final StringBuilder timings = new StringBuilder();

    private final Set<String> mustBePresent = new HashSet<>();
    private final Set<String> touched = new HashSet<>();

    @Test
    void everySegmentIsWholeOrAbsentAfterEachKill() throws Exception {
        SplittableRandom random = new SplittableRandom(20261202);
        for (int round = 0; round < KILLS; round++) {
            FsyncPolicy policy = FsyncPolicy.values()[round % FsyncPolicy.values().length];
            runAndKill(round, policy, 20 + random.nextInt(400), random.nextLong());
            if (round % 2 == 1 || round == KILLS - 1) {
                checkHere();
            }
        }
        long extents;
        try (var files = Files.list(directory)) {
            extents = files.filter(f -> f.getFileName().toString().endsWith(".extent")).count();
        }
        // ~150-200 live segments of at most 4 pages: about 3 extents of 256 pages; fragmentation at most doubles it.
        assertTrue(extents <= 8, "extent files " + extents + timings);
        System.out.println("PersistenceCrashTest:" + timings);
        assertTrue(Files.size(directory.resolve("kvtier.journal")) < 200_000, "journal bytes");
    }

    private void runAndKill(int round, FsyncPolicy policy, int acksBeforeKill, long seed) throws Exception {
        Path log = logs.resolve("child-" + round + ".log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx128m",
                "-Dkvtier.journal.compactSlack=32", "-cp",
                System.getProperty("java.class.path"), PersistenceWriterChild.class.getName(), directory.toString(),
                policy.name(), "r" + round, Long.toString(seed), log.toString()).redirectErrorStream(true).start();
        long started = System.nanoTime();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream()));
            String line;
            while ((line = out.readLine()) != null && !line.startsWith("READY") && !line.startsWith("BAD")) {
                // log lines of the open
            }
            assertNotNull(line, () -> "child " + round + " ended before it was ready (exit " + waitFor(child) + ")");
            String ready = line;
            assertTrue(ready.startsWith("READY"), () -> "child " + round + " found a bad segment after the last kill: " + ready);
            if (round == 0) {
                DirectoryInUseException refused = assertThrows(DirectoryInUseException.class, () -> {
                    try (KvTierCache wrong = KvTierCache.open(PersistedSegments.config(directory,
                            DiskPersistence.of("crash-test")).build())) {
                        wrong.stats(); // closed again at once should the open wrongly succeed
                    }
                });
                assertTrue(refused.getMessage().contains("in use") && refused.getMessage().contains("pid " + child.pid()),
                        refused.getMessage());
            }
            child.getOutputStream().write("GO\n".getBytes(StandardCharsets.UTF_8));
            child.getOutputStream().flush();
            int acks = 0;
            while (acks < acksBeforeKill && (line = out.readLine()) != null) {
                acks += line.startsWith("DISK ") || line.startsWith("CPU ") || line.startsWith("BEGIN ") ? 1 : 0;
            }
            assertNotNull(line, () -> "child " + round + " died on its own (exit " + waitFor(child) + ")");
            child.destroyForcibly(); // SIGKILL, somewhere inside a put, demotion, removal or promotion
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the killed child did not end");
            for (String logged : Files.readAllLines(log)) { // all it did before it died, not only what we read
                note(logged);
            }
            timings.append(" round ").append(round).append(' ').append(policy).append(": ").append(acks).append(" acks in ")
                    .append((System.nanoTime() - started) / 1_000_000).append(" ms;");
        } finally {
            child.destroyForcibly();
            child.waitFor(60, TimeUnit.SECONDS);
        }
    }

    /** Only for a failure message: the child has ended or is about to. */
    private static int waitFor(Process child) {
        try {
            return child.waitFor(60, TimeUnit.SECONDS) ? child.exitValue() : -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** Keeps what a line of a child's log promises. */
    private void note(String line) {
        if (line.startsWith("DISK ")) {
            mustBePresent.add(line.substring(5));
        } else if (line.startsWith("BEGIN ")) {
            touched.add(line.substring(6));
        }
    }

    /** Opens the crashed directory here: every byte of every segment, and nothing acknowledged lost. */
    private void checkHere() {
        try (KvTierCache cache = KvTierCache.open(PersistedSegments.config(directory, DiskPersistence.of("crash-test"))
                .build())) {
            RecoveryReport report = cache.recovery().orElseThrow();
            List<String> keys = report.recoveredKeys();
            for (String key : keys) {
                PersistedSegments.verify(cache, key);
            }
            assertEquals(0, cache.recovery().orElseThrow().failedFirstUse(), report.toString());
            Set<String> missing = new HashSet<>(mustBePresent);
            missing.removeAll(touched);
            missing.removeAll(keys);
            assertTrue(missing.isEmpty(), "acknowledged DISK puts lost by a kill: " + missing + " " + report + timings);
            assertEquals(0L, report.discarded().get(RecoveryReport.DiscardReason.OVERLAPPED), report.toString());
        }
    }
}
