package dev.kvtier;

import dev.kvtier.persist.RecoveryProgress;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 24 item 13: a long recovery says in the log how far it got. With the interval at 0 (the system
 * property {@code kvtier.recovery.progressMillis}; 2 s by default) a recovery of 2,100 segments logs a line
 * per 1,024 steps of each phase, each naming the directory, the count so far and the time elapsed. (The bound
 * on a recovery's time and heap is measured by {@code PersistenceBench recovery}, not here.) On main at
 * 8d41ee6 the recovery logs no progress: the test fails at its first assertion.
 */
class RecoveryProgressTest {
    @TempDir
    Path directory;

    @Test
    void aLongRecoveryLogsHowFarItGot() {
        KvTierConfig config = KvTierConfig.builder().backend(Backend.HOST).gpuBudgetBytes(16L * 512)
                .cpuBudgetBytes(32L * 512).pageSizeBytes(512).diskExtentBytes(1024L * 512).diskDirectory(directory)
                .persistence(DiskPersistence.of("progress")).build();
        try (KvTierCache cache = KvTierCache.open(config)) {
            for (int i = 0; i < 2100; i++) {
                PersistedSegments.put(cache, "p-" + i, Tier.DISK);
            }
        }
        List<String> lines = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                lines.add(record.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger logger = Logger.getLogger(RecoveryProgress.class.getName());
        logger.addHandler(handler);
        System.setProperty("kvtier.recovery.progressMillis", "0");
        try (KvTierCache cache = KvTierCache.open(config)) {
            assertEquals(2100, cache.recovery().orElseThrow().recovered());
        } finally {
            System.clearProperty("kvtier.recovery.progressMillis");
            logger.removeHandler(handler);
        }
        List<String> ours = lines.stream().filter(line -> line.contains(directory.toString())).toList();
        assertTrue(ours.size() >= 6, "two lines per phase expected: " + ours);
        assertTrue(ours.contains("kvtier recovery of " + directory + ": journal records read 1,024 so far, "
                + ours.getFirst().substring(ours.getFirst().lastIndexOf(", ") + 2)), ours.toString());
        assertTrue(ours.stream().anyMatch(line -> line.contains("segments registered 2,048 of 2,100 so far")), ours.toString());
        assertTrue(ours.stream().allMatch(line -> line.matches(".* so far, [0-9]+\\.[0-9] s elapsed")), ours.toString());
    }
}
