package dev.kvtier.persist;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The one way kvtier puts a fully written temporary file in place of another: whatever writes a journal, a
 * snapshot or a result file writes the temporary beside the target (same directory, so the rename stays on one
 * file system), syncs it if it must survive a power loss, then calls {@link #replace}. Stateless, thread-safe.
 */
public final class AtomicReplace {
    private AtomicReplace() {
    }

    /**
     * Renames {@code temporary} to {@code target}, replacing it: atomically where the file system can (a crash
     * leaves the old file or the new one), else with a plain replacing move (a crash in between may leave
     * neither; only file systems without atomic rename get there). Syncing the directory afterwards, for a
     * rename that must survive a power loss, is the caller's.
     *
     * @param temporary the file holding the new content, in the same directory as {@code target}
     * @param target    the file to replace; it need not exist
     * @throws IOException when the move fails ({@code temporary} is left where it was)
     */
    public static void replace(Path temporary, Path target) throws IOException {
        try {
            Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
