package dev.kvtier.exec;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * DISK tier chunks: each chunk is a file extent under one directory, mapped read-write with
 * {@link FileChannel#map(FileChannel.MapMode, long, long, Arena)} and owned by its own arena.
 *
 * <p>Each new extent is first filled with zeros by positional writes. That allocates its blocks
 * up front, so a full disk surfaces here as an {@link IOException} naming the directory (never as
 * a fault in the middle of a copy into a sparse mapping), and it puts the pages in the page cache
 * so the first copies into the mapping take no allocation faults. Extents are reused page by page
 * by {@link PagedMemory} and deleted when closed. Thread-safe.
 */
public final class MappedFileChunkAllocator implements ChunkAllocator {
    private static final int ZERO_BLOCK = 1 << 20;
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final Path directory;
    private final String filePrefix;
    private final AtomicInteger extents = new AtomicInteger();

    /** @param directory where extent files are created (made if missing) */
    public MappedFileChunkAllocator(Path directory) {
        if (directory == null) {
            throw new IllegalArgumentException("directory must not be null");
        }
        this.directory = directory;
        this.filePrefix = "kvtier-" + ProcessHandle.current().pid() + "-" + INSTANCES.incrementAndGet() + "-";
    }

    @Override
    public MemoryChunk allocate(long bytes) throws IOException {
        Path file = directory.resolve(filePrefix + extents.incrementAndGet() + ".extent");
        FileChannel channel = null;
        Arena arena = null;
        try {
            Files.createDirectories(directory);
            channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            preallocate(channel, bytes);
            arena = Arena.ofShared();
            MemorySegment mapping;
            try {
                mapping = channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena);
            } catch (IOException e) {
                throw new IOException("could not map " + bytes + " bytes of " + file
                        + " (if the limit on mappings was hit, raise vm.max_map_count or configure larger disk extents): "
                        + e.getMessage(), e);
            }
            return new MappedExtent(file, channel, arena, mapping);
        } catch (IOException | RuntimeException e) {
            if (arena != null) {
                arena.close();
            }
            if (channel != null) {
                try {
                    channel.close();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            try {
                Files.deleteIfExists(file);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            if (e instanceof IOException io && !io.getMessage().startsWith("could not")) {
                throw new IOException("could not create a " + bytes + "-byte disk extent " + file
                        + " (free space in " + directory + " or configure another disk directory): " + e, e);
            }
            throw e;
        }
    }

    private static void preallocate(FileChannel channel, long bytes) throws IOException {
        ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(ZERO_BLOCK, Math.max(1, bytes)));
        long position = 0;
        while (position < bytes) {
            zeros.clear().limit((int) Math.min(zeros.capacity(), bytes - position));
            while (zeros.hasRemaining()) {
                position += channel.write(zeros, position);
            }
        }
    }

    @Override
    public String description() {
        return "mapped file extents in " + directory;
    }

    /** The directory extents are created in. */
    public Path directory() {
        return directory;
    }

    private static final class MappedExtent implements MemoryChunk {
        private final Path file;
        private final FileChannel channel;
        private final Arena arena;
        private final MemorySegment mapping;
        private final AtomicBoolean closed = new AtomicBoolean();

        MappedExtent(Path file, FileChannel channel, Arena arena, MemorySegment mapping) {
            this.file = file;
            this.channel = channel;
            this.arena = arena;
            this.mapping = mapping;
        }

        @Override
        public MemorySegment memory() {
            return mapping;
        }

        @Override
        public void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            arena.close();
            try {
                channel.close();
                Files.deleteIfExists(file);
            } catch (IOException e) {
                // The extent is unmapped and its channel released; a leftover file is only disk space.
                System.getLogger(MappedFileChunkAllocator.class.getName())
                        .log(System.Logger.Level.WARNING, "could not delete disk extent " + file + ": " + e);
            }
        }
    }
}
