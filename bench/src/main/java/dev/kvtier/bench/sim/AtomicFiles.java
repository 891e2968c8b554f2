package dev.kvtier.bench.sim;

import dev.kvtier.persist.AtomicReplace;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;

/** Writes whole files or nothing: readers see the old file or the complete new one, never half of it. */
final class AtomicFiles {
    private AtomicFiles() {
    }

    /**
     * Writes {@code content} (UTF-8) to a temporary file beside {@code target}, then moves it over
     * {@code target} atomically (or, where the file system cannot, with a replacing move).
     */
    static void write(Path target, String content) throws IOException {
        Path absolute = target.toAbsolutePath();
        Path directory = absolute.getParent();
        Files.createDirectories(directory);
        // Not Files.createTempFile: that makes the file owner-only (0600), and results are meant to be read.
        Path temporary = directory.resolve("." + absolute.getFileName() + "." + ThreadLocalRandom.current().nextLong(1L << 48) + ".tmp");
        try {
            Files.writeString(temporary, content, StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            AtomicReplace.replace(temporary, absolute);
        } finally {
            Files.deleteIfExists(temporary);
        }
    }
}
