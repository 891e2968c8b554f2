package dev.kvtier.exec;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvtier.testing.FaultLogRouting;

/**
 * Issue 9 item 4: one owner per disk directory. {@link DiskDirectoryLock} is new; on main at
 * 212fa8f nothing stopped two caches sharing a directory (see {@code Issue9RegressionTest} for the
 * same on the public API, which fails there).
 */
@Tag(FaultLogRouting.TAG)
class DiskDirectoryLockTest {
    @TempDir
    Path directory;

    private List<String> names() throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aSecondLockInThisJvmIsRefusedUnderAnySpellingOfThePath() throws IOException {
        Path link = Files.createSymbolicLink(directory.resolveSibling(directory.getFileName() + "-link"), directory);
        try (DiskDirectoryLock lock = DiskDirectoryLock.acquire(directory)) {
            assertEquals(List.of(DiskDirectoryLock.LOCK_FILE), names());
            String content = Files.readString(directory.resolve(DiskDirectoryLock.LOCK_FILE));
            assertTrue(content.contains("pid=" + ProcessHandle.current().pid()), content);
            assertTrue(content.contains("instance=" + lock.instanceId()), content);
            for (Path spelling : List.of(directory, directory.resolve("."), link)) {
                IllegalStateException e = assertThrows(IllegalStateException.class, () -> DiskDirectoryLock.acquire(spelling));
                assertTrue(e.getMessage().contains(spelling.toString()), e.getMessage());
                assertTrue(e.getMessage().contains("pid " + ProcessHandle.current().pid()), e.getMessage());
                assertTrue(e.getMessage().contains(lock.instanceId()), e.getMessage());
            }
        } finally {
            Files.delete(link);
        }
        assertEquals(List.of(), names(), "close deletes the lock file");
        DiskDirectoryLock.acquire(directory).close(); // and the directory can be had again
    }

    @Test
    void closeIsIdempotentAndLeavesOtherFilesAlone() throws IOException {
        Files.writeString(directory.resolve("notes.extent.txt"), "not ours");
        Files.writeString(directory.resolve("other.extent"), "not a kvtier name");
        DiskDirectoryLock lock = DiskDirectoryLock.acquire(directory);
        lock.close();
        lock.close();
        assertEquals(List.of("notes.extent.txt", "other.extent"), names());
    }

    /**
     * Another process holding the directory: refused, naming that process; once it is killed with
     * SIGKILL (its lock dies with it, its extent stays), the directory is taken and the dead owner's
     * extent deleted.
     */
    @Test
    void anotherProcessIsNamedAndItsExtentsReclaimedOnceItIsKilled() throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx64m",
                "-cp", System.getProperty("java.class.path"), DiskDirectoryLockHolder.class.getName(), directory.toString())
                .redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream()));
            String line = out.readLine();
            assertNotNull(line, "the child ended before holding the lock");
            assertTrue(line.startsWith("HOLDING"), line);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> DiskDirectoryLock.acquire(directory));
            assertTrue(e.getMessage().contains("pid " + child.pid()), e.getMessage());
            assertTrue(names().stream().anyMatch(n -> n.endsWith(".extent")), names().toString());
        } finally {
            child.destroyForcibly(); // SIGKILL: nothing of the child's runs
            assertTrue(child.waitFor(30, TimeUnit.SECONDS));
        }
        try (DiskDirectoryLock lock = DiskDirectoryLock.acquire(directory)) {
            assertEquals(List.of(DiskDirectoryLock.LOCK_FILE), names(), "the dead owner's extent was reclaimed");
            assertTrue(Files.readString(directory.resolve(DiskDirectoryLock.LOCK_FILE)).contains(lock.instanceId()));
        }
    }
}
