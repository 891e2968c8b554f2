package dev.kvtier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 24 item 12, first half: "directory in use" has its own {@link KvTierException} subtype, no longer the
 * {@link IllegalStateException} that also means "used after close". On main at 8d41ee6 this fails at its
 * first assertion: the refusal is a plain {@code IllegalStateException}. (Another process holding the
 * directory is refused the same way: {@code PersistenceCrashTest}.)
 */
class DirectoryInUseTest {
    @TempDir
    Path directory;

    @Test
    void aSecondOpenOfAHeldDirectoryIsRefusedWithItsOwnTypeNamingTheHolder() {
        KvTierConfig config = PersistedSegments.config(directory, DiskPersistence.of("in-use")).build();
        try (KvTierCache holder = KvTierCache.open(config)) {
            RuntimeException refused = assertThrows(RuntimeException.class, () -> KvTierCache.open(config).close());
            assertTrue(refused instanceof KvTierException, () -> "refused with " + refused);
            DirectoryInUseException e = (DirectoryInUseException) refused;
            assertEquals(directory.toString(), e.directory());
            assertTrue(e.holder().startsWith("pid " + ProcessHandle.current().pid() + ","), e.holder());
            assertTrue(e.getMessage().contains("is in use by another kvtier cache (" + e.holder()) && e.getMessage()
                    .contains("configure another disk directory"), e.getMessage());
            assertNull(e.key());
            holder.stats(); // the holder is untouched
        }
        KvTierCache.open(config).close(); // and the directory can be had once it is closed
    }
}
