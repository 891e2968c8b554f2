package dev.kvtier.exec;

import dev.kvtier.concurrent.KvTierThreads;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * DISK tier chunks: each chunk is a file extent under one directory, mapped read-write with
 * {@link FileChannel#map(FileChannel.MapMode, long, long, Arena)} and owned by its own arena.
 *
 * <p>Each new extent is first checked against the usable space of the directory's file system, then
 * filled with zeros by positional writes. The check refuses an extent that cannot fit before a byte
 * is written (so a put larger than the disk never fills it up for other programs); the zero fill
 * allocates the blocks up front, so a full disk surfaces here as an {@link IOException} naming the
 * directory (never as a fault in the middle of a copy into a sparse mapping), and it puts the pages
 * in the page cache so the first copies into the mapping take no allocation faults. An extent that
 * cannot be made is deleted at once, with whatever it took; extents are reused page by page by
 * {@code PagedMemory} and deleted when closed.
 *
 * <p>Extent files are named {@code kvtier-<instance>-<n>.extent}: a random 64-bit instance id per
 * allocator, never the pid (a restarted process may get the pid of a dead one, and two containers
 * can share a pid on one host directory). This allocator deletes only files it created itself.
 * Exclusive use of the directory is {@link DiskDirectoryLock}'s job, held by whoever opens the
 * directory for a cache; the lock also deletes extents a dead owner left.
 *
 * <p><b>Persistent extents</b> ({@link #persistent}): for a cache whose DISK tier outlives the
 * process, extents are named by the slot their {@code PagedMemory} keeps them in,
 * {@code kvtier-persistent-<slot>.extent} ({@link #persistentExtent}), so that page coordinates in a
 * journal name the same bytes after a restart. Allocating slot {@code n} maps the file already there
 * when it has exactly the size asked for (its bytes are kept: no zero fill), and otherwise replaces
 * it with a fresh zero-filled one; closing such an extent unmaps it and keeps the file. The lock
 * ({@link DiskDirectoryLock#acquire(Path, boolean)}) then leaves these files alone; what they hold is
 * the persistence layer's to judge.
 *
 * <p>Interrupts: creating an extent on an interrupted thread fails with an {@link IOException}
 * whose cause is the channel's {@link ClosedByInterruptException}; the thread's interrupt flag stays
 * set. Thread-safe.
 *
 * <p><b>Ready ahead</b> ({@link #readyAhead}): a cache whose DISK tier grows extent by extent pays each
 * extent's zero fill and the first write faults of its pages on the thread that needed the room (issue 11:
 * ~3% of a trace's playing thread). An allocator made ready-ahead makes the next extent of the size just
 * asked for on its own thread (one at a time, at most one waiting: bounded to one extent of disk space),
 * zero-filled and with every page written once through the mapping, and hands it to the next
 * {@code allocate} of that size. A ready extent that fails to be made is dropped: the next
 * {@code allocate} makes its own and reports its own failure, as without ready-ahead. Its owner must
 * {@link #close} it (the backend that holds it does), which stops the thread and deletes an extent not
 * handed out.
 */
public final class MappedFileChunkAllocator implements ChunkAllocator, AutoCloseable {
    private static final int ZERO_BLOCK = 1 << 20;
    private static final SecureRandom INSTANCE_IDS = new SecureRandom();

    /** How many bytes a new file in a directory can still take; injectable so tests can fake a small disk. */
    @FunctionalInterface
    interface UsableSpace {
        long bytes(Path directory) throws IOException;
    }

    private final Path directory;
    private final String filePrefix;
    private final UsableSpace usableSpace;
    private final AtomicInteger extents = new AtomicInteger();
    private final boolean persistent;
    /** The ready-ahead makers' threads: kvtier's, like every thread it starts. */
    private static final ThreadFactory MAKERS = KvTierThreads.factory("disk-extent-ahead");
    private final boolean readyAhead;
    /** Guards {@link #maker}, {@link #ahead}, {@link #aheadBytes} and {@link #closed}. */
    private final Object aheadLock = new Object();
    /** The thread making the next extent, or null. */
    private Thread maker;
    /** The extent made ahead and not yet handed out (written by the maker), or null. */
    private MemoryChunk ahead;
    private long aheadBytes;
    private boolean closed;

    /** File names of persistent extents start with this; {@link DiskDirectoryLock} keeps them when asked to. */
    public static final String PERSISTENT_PREFIX = "kvtier-persistent-";

    /** @param directory where extent files are created (made if missing) */
    public MappedFileChunkAllocator(Path directory) {
        this(directory, dir -> Files.getFileStore(dir).getUsableSpace());
    }

    MappedFileChunkAllocator(Path directory, UsableSpace usableSpace) {
        this(directory, usableSpace, false);
    }

    private MappedFileChunkAllocator(Path directory, UsableSpace usableSpace, boolean persistent) {
        this(directory, usableSpace, persistent, false);
    }

    private MappedFileChunkAllocator(Path directory, UsableSpace usableSpace, boolean persistent, boolean readyAhead) {
        if (directory == null) {
            throw new IllegalArgumentException("directory must not be null");
        }
        this.directory = directory;
        this.usableSpace = usableSpace;
        this.persistent = persistent;
        this.readyAhead = readyAhead;
        this.filePrefix = "kvtier-" + HexFormat.of().toHexDigits(INSTANCE_IDS.nextLong()) + "-";
    }

    /**
     * An allocator of persistent extents in {@code directory} (see the class comment): only
     * {@link #allocate(long, int)} may be called.
     */
    public static MappedFileChunkAllocator persistent(Path directory) {
        return new MappedFileChunkAllocator(directory, dir -> Files.getFileStore(dir).getUsableSpace(), true);
    }

    /**
     * An allocator of extents in {@code directory} that makes the next extent ahead of need on its own
     * thread (see the class comment); its owner must {@link #close} it.
     */
    public static MappedFileChunkAllocator readyAhead(Path directory) {
        return new MappedFileChunkAllocator(directory, dir -> Files.getFileStore(dir).getUsableSpace(), false, true);
    }

    static MappedFileChunkAllocator readyAhead(Path directory, UsableSpace usableSpace) {
        return new MappedFileChunkAllocator(directory, usableSpace, false, true);
    }

    /** Whether extents are persistent (named by slot, kept on close). */
    public boolean isPersistent() {
        return persistent;
    }

    /** The file of the persistent extent in slot {@code slot} of {@code directory}. */
    public static Path persistentExtent(Path directory, int slot) {
        return directory.resolve(PERSISTENT_PREFIX + slot + ".extent");
    }

    /** @throws IllegalStateException on a persistent allocator, whose extents need a slot */
    @Override
    public MemoryChunk allocate(long bytes) throws IOException {
        if (persistent) {
            throw new IllegalStateException("persistent extents are named by their slot: call allocate(bytes, slot)");
        }
        if (!readyAhead) {
            return createNext(bytes);
        }
        // An interrupted caller is refused as without ready-ahead (see the class comment): it makes its own.
        MemoryChunk ready = Thread.currentThread().isInterrupted() ? null : takeAhead(bytes);
        MemoryChunk chunk = ready != null ? ready : createNext(bytes);
        makeAhead(bytes);
        return chunk;
    }

    private MemoryChunk createNext(long bytes) throws IOException {
        return create(directory.resolve(filePrefix + extents.incrementAndGet() + ".extent"), bytes, true);
    }

    /** The extent made ahead if it has {@code bytes} bytes (waiting for its maker), else null (one of another size is deleted). */
    private MemoryChunk takeAhead(long bytes) {
        Thread running;
        synchronized (aheadLock) {
            running = maker;
        }
        if (running != null) {
            KvTierThreads.joinUninterruptibly(running); // the extent is nearly made: wait for it, flag kept
        }
        MemoryChunk taken;
        long takenBytes;
        synchronized (aheadLock) {
            if (maker == running) {
                maker = null;
            }
            taken = ahead;
            takenBytes = aheadBytes;
            ahead = null;
        }
        if (taken != null && takenBytes != bytes) {
            taken.close();
            return null;
        }
        return taken;
    }

    /** Starts making an extent of {@code bytes} bytes on the maker thread, unless one is made or closed. */
    private void makeAhead(long bytes) {
        synchronized (aheadLock) {
            if (closed || maker != null || ahead != null) {
                return;
            }
            maker = MAKERS.newThread(() -> {
                MemoryChunk made = null;
                try {
                    made = createNext(bytes);
                    touchEveryPage(made.memory());
                } catch (IOException | RuntimeException e) {
                    if (made != null) {
                        made.close();
                        made = null;
                    }
                    // Dropped: the next allocate makes its own extent and reports its own failure.
                    System.getLogger(MappedFileChunkAllocator.class.getName())
                            .log(System.Logger.Level.DEBUG, "a disk extent made ahead failed: " + e);
                }
                synchronized (aheadLock) {
                    if (closed) {
                        if (made != null) {
                            made.close();
                        }
                    } else {
                        ahead = made;
                        aheadBytes = bytes;
                    }
                }
            });
            maker.start();
        }
    }

    /**
     * Writes one zero per page through the mapping (the pages hold zeros already): the writes map each page
     * writable now, so the first copies into it take no fault on the thread that needs the room.
     */
    private static void touchEveryPage(MemorySegment mapping) {
        for (long offset = 0; offset < mapping.byteSize(); offset += 4096) {
            mapping.set(ValueLayout.JAVA_BYTE, offset, (byte) 0);
        }
    }

    /**
     * Stops making extents ahead: waits for the maker thread and deletes the extent made and not handed out.
     * Extents handed out stay their {@code PagedMemory}'s to close. Idempotent; an allocator without
     * ready-ahead has nothing to close. {@code allocate} after close makes extents on the calling thread.
     */
    @Override
    public void close() {
        Thread running;
        synchronized (aheadLock) {
            closed = true;
            running = maker;
        }
        if (running != null) {
            KvTierThreads.joinUninterruptibly(running);
        }
        MemoryChunk left;
        synchronized (aheadLock) {
            maker = null;
            left = ahead;
            ahead = null;
        }
        if (left != null) {
            left.close();
        }
    }

    /**
     * A persistent allocator maps slot {@code slot}'s file as it is when it has {@code bytes} bytes, and
     * otherwise makes it afresh; any other allocator ignores the slot.
     */
    @Override
    public MemoryChunk allocate(long bytes, int slot) throws IOException {
        if (!persistent) {
            return allocate(bytes);
        }
        Path file = persistentExtent(directory, slot);
        if (Files.isRegularFile(file) && Files.size(file) == bytes) {
            return reopen(file, bytes);
        }
        Files.deleteIfExists(file); // a wrong size: whatever it held cannot be trusted to lie where it should
        return create(file, bytes, false);
    }

    /** Maps an existing persistent extent read-write, keeping its bytes. */
    private MemoryChunk reopen(Path file, long bytes) throws IOException {
        FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
        Arena arena = Arena.ofShared();
        try {
            return new MappedExtent(file, channel, arena, channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena),
                    false);
        } catch (IOException | RuntimeException e) {
            arena.close();
            try {
                channel.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            if (e instanceof IOException io) {
                throw explain(io, file, bytes);
            }
            throw e;
        }
    }

    private MemoryChunk create(Path file, long bytes, boolean deleteOnClose) throws IOException {
        FileChannel channel = null;
        boolean created = false;
        Arena arena = null;
        try {
            Files.createDirectories(directory);
            long usable = usableSpace.bytes(directory);
            if (usable < bytes) {
                throw new ExplainedFailure("could not create a " + bytes + "-byte disk extent in " + directory + ": only "
                        + usable + " bytes are usable there (free space in " + directory
                        + ", configure another disk directory, or put less on DISK)");
            }
            channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            created = true;
            preallocate(channel, bytes);
            arena = Arena.ofShared();
            MemorySegment mapping;
            try {
                mapping = channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena);
            } catch (IOException e) {
                throw new ExplainedFailure("could not map " + bytes + " bytes of " + file
                        + " (if the limit on mappings was hit, raise vm.max_map_count or configure larger disk extents): "
                        + e.getMessage(), e);
            }
            return new MappedExtent(file, channel, arena, mapping, deleteOnClose);
        } catch (IOException | RuntimeException e) {
            // Release in order: the mapping (none yet unless map itself failed), the channel, then the
            // file, so its blocks really go back to the file system (an open channel would keep them).
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
            if (created) { // never delete a file another owner made under this name
                try {
                    Files.deleteIfExists(file);
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            if (e instanceof IOException io) {
                throw explain(io, file, bytes);
            }
            throw e;
        }
    }

    /** A failure whose message already names the file or directory and the fix. */
    private static final class ExplainedFailure extends IOException {
        private static final long serialVersionUID = 1L;

        ExplainedFailure(String message) {
            super(message);
        }

        ExplainedFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * The one place extent failures get their message: our own pass as they are; an interrupt says
     * so (its exception has no message at all); anything else names the file and the fix.
     */
    private IOException explain(IOException io, Path file, long bytes) {
        if (io instanceof ExplainedFailure) {
            return io;
        }
        if (io instanceof ClosedByInterruptException) {
            // The channel closed itself and left the interrupt flag set; we keep it set for the caller.
            return new IOException("interrupted while creating the " + bytes + "-byte disk extent " + file
                    + "; nothing was created (the thread's interrupt flag is still set)", io);
        }
        return new IOException("could not create a " + bytes + "-byte disk extent " + file + " (check that "
                + directory + " is writable and has space, or configure another disk directory): " + io, io);
    }

    /**
     * One block of zeros for every extent the process creates, read by positional writes through
     * duplicates (each with its own position): a direct buffer per extent was native memory freed only
     * whenever the garbage collector ran (the soak saw native memory grow by megabytes).
     */
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(ZERO_BLOCK).asReadOnlyBuffer();

    private static void preallocate(FileChannel channel, long bytes) throws IOException {
        ByteBuffer zeros = ZEROS.duplicate();
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
        private final boolean deleteOnClose;

        MappedExtent(Path file, FileChannel channel, Arena arena, MemorySegment mapping, boolean deleteOnClose) {
            this.file = file;
            this.channel = channel;
            this.arena = arena;
            this.mapping = mapping;
            this.deleteOnClose = deleteOnClose;
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
                if (deleteOnClose) {
                    Files.deleteIfExists(file);
                }
            } catch (IOException e) {
                // The extent is unmapped and its channel released; a leftover file is only disk space.
                System.getLogger(MappedFileChunkAllocator.class.getName())
                        .log(System.Logger.Level.WARNING, "could not delete disk extent " + file + ": " + e);
            }
        }
    }
}
