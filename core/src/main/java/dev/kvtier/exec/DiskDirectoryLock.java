package dev.kvtier.exec;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Exclusive ownership of a DISK directory: while one of these is open, no other cache (in this JVM
 * or another process) can open the same directory, so nobody else creates or deletes extents there.
 *
 * <p>The lock is an OS file lock ({@link FileChannel#tryLock()}) on {@value #LOCK_FILE} in the
 * directory, which the OS drops when the process dies, however it dies. The file holds who owns it,
 * so a refused open can name the holder:
 * <pre>
 * pid=12345
 * started=2026-12-02T19:20:00.123Z
 * instance=9f86d081884c7d65
 * </pre>
 * When the lock is acquired, every {@code kvtier-*.extent} already in the directory belongs to an
 * owner that is gone (killed before it could delete them): they are deleted, and that is logged
 * once with the count. That is the only time anything here deletes a file this instance did not
 * create; other files in the directory are never touched. A persistent cache
 * ({@link #acquire(Path, boolean)}) keeps the persistent extents, which its journal describes. {@link #close()} deletes the lock file, then releases the lock.
 *
 * <p>Within one JVM a registry keyed by the directory's real path refuses a second open before any
 * channel is opened: POSIX record locks belong to the process, and closing <em>any</em> descriptor
 * of the lock file, even one that failed to lock it, would silently drop the owner's lock. For the
 * same reason nothing in a process that holds the lock may open the lock file again (not even to
 * read it).
 *
 * <p>Thread-safe; {@link #close()} is idempotent.
 */
public final class DiskDirectoryLock implements AutoCloseable {
    /** The lock file's name inside the directory. */
    public static final String LOCK_FILE = "kvtier.lock";

    private static final System.Logger LOG = System.getLogger(DiskDirectoryLock.class.getName());
    private static final SecureRandom IDS = new SecureRandom();
    /** Directories (real paths) this JVM holds; guarded by itself. */
    private static final Map<Path, DiskDirectoryLock> HELD = new HashMap<>();
    /**
     * Channels that found this JVM's own lock through another path to the same file (a bind mount):
     * closing them would drop that lock (see the class comment), so they stay open for the JVM's life.
     */
    private static final List<FileChannel> KEPT_OPEN = new ArrayList<>();
    private static final int ATTEMPTS = 10;
    private static final Object GONE = new Object();

    private final Path directory;
    private final Path realDirectory;
    private final Path lockFile;
    private final FileChannel channel;
    private final FileLock lock;
    private final String instanceId;
    private final String holder;
    private boolean closed;

    private DiskDirectoryLock(Path directory, Path realDirectory, FileChannel channel, FileLock lock, String instanceId,
                              String holder) {
        this.directory = directory;
        this.realDirectory = realDirectory;
        this.lockFile = realDirectory.resolve(LOCK_FILE);
        this.channel = channel;
        this.lock = lock;
        this.instanceId = instanceId;
        this.holder = holder;
    }

    /**
     * Takes ownership of {@code directory} (made if missing) and deletes the extents a dead owner left there.
     *
     * @throws DirectoryHeldException if another cache, in this JVM or another process, holds the
     *                                directory; the message names the directory and the holder
     * @throws IOException           if the directory or its lock file cannot be created, read or locked
     */
    public static DiskDirectoryLock acquire(Path directory) throws IOException {
        return acquire(directory, false);
    }

    /**
     * {@link #acquire(Path)}; with {@code keepPersistentExtents} the persistent extents
     * ({@link MappedFileChunkAllocator#PERSISTENT_PREFIX}) a dead owner left are kept for the
     * persistence layer to recover, and only the others are deleted.
     */
    public static DiskDirectoryLock acquire(Path directory, boolean keepPersistentExtents) throws IOException {
        if (directory == null) {
            throw new IllegalArgumentException("directory must not be null");
        }
        Files.createDirectories(directory);
        Path real = directory.toRealPath();
        Path file = real.resolve(LOCK_FILE);
        synchronized (HELD) {
            DiskDirectoryLock held = HELD.get(real);
            if (held != null) {
                throw refused(directory, held.holder + ", in this JVM");
            }
            for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
                try {
                    Files.createFile(file);
                } catch (FileAlreadyExistsException exists) {
                    // the usual case: a lock file from an owner that closed or died, or one holding it now
                }
                Object before = fileKey(file);
                FileChannel channel;
                try {
                    channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
                } catch (NoSuchFileException deletedMeanwhile) { // by an owner closing: try again
                    continue;
                }
                FileLock lock;
                try {
                    lock = channel.tryLock();
                } catch (OverlappingFileLockException sameJvm) {
                    KEPT_OPEN.add(channel);
                    throw refused(directory, "this JVM, through another path to " + file);
                } catch (IOException | RuntimeException e) {
                    channel.close();
                    throw e;
                }
                if (lock == null) {
                    String other = describe(readQuietly(file));
                    channel.close(); // this process holds no lock on the file: closing drops nothing
                    throw refused(directory, other);
                }
                String instance = HexFormat.of().toHexDigits(IDS.nextLong());
                String content = "pid=" + ProcessHandle.current().pid() + "\nstarted="
                        + ProcessHandle.current().info().startInstant().map(Instant::toString).orElse("unknown")
                        + "\ninstance=" + instance + "\n";
                try {
                    channel.truncate(0);
                    ByteBuffer bytes = ByteBuffer.wrap(content.getBytes(StandardCharsets.UTF_8));
                    while (bytes.hasRemaining()) {
                        channel.write(bytes, bytes.position());
                    }
                } catch (IOException | RuntimeException e) {
                    channel.close();
                    throw e;
                }
                // A closing owner deletes the file before it unlocks: what we locked may be an unlinked
                // file while another process locks a fresh one. Ours only if the path still names the
                // file we opened: compared by file key (stat), since opening and closing the lock file
                // here again would drop the lock we now hold.
                Object after = fileKey(file);
                if (after == GONE || !Objects.equals(before, after)) {
                    channel.close();
                    continue;
                }
                DiskDirectoryLock acquired = new DiskDirectoryLock(directory, real, channel, lock, instance,
                        describe(content));
                try {
                    acquired.reclaimDeadOwnersExtents(keepPersistentExtents);
                } catch (IOException | RuntimeException e) {
                    acquired.release();
                    throw e;
                }
                HELD.put(real, acquired);
                return acquired;
            }
        }
        throw new IOException("could not lock " + file + " in " + ATTEMPTS + " attempts: other processes kept"
                + " replacing it (is something else creating and deleting it?)");
    }

    private static DirectoryHeldException refused(Path directory, String holder) {
        return new DirectoryHeldException(directory.toString(), holder);
    }

    /** The holder as a phrase, from the lock file's content (which may be empty while its owner is writing it). */
    private static String describe(String content) {
        if (content == null || content.isBlank()) {
            return "holder unknown: its lock file " + LOCK_FILE + " is empty or gone";
        }
        Map<String, String> fields = new HashMap<>();
        for (String line : content.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                fields.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
            }
        }
        return "pid " + fields.getOrDefault("pid", "?") + ", started " + fields.getOrDefault("started", "?")
                + ", instance " + fields.getOrDefault("instance", "?");
    }

    /** The file's identity (device and inode on Linux; null where the platform has none), or {@link #GONE}. */
    private static Object fileKey(Path file) throws IOException {
        try {
            return Files.readAttributes(file, BasicFileAttributes.class).fileKey();
        } catch (NoSuchFileException gone) {
            return GONE;
        }
    }

    /** Reads a lock file this process does not hold (closing the descriptor drops this process's locks on it). */
    private static String readQuietly(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException gone) {
            return null;
        } catch (IOException e) {
            return "unreadable: " + e;
        }
    }

    /** Deletes every {@code kvtier-*.extent} here: with the lock held, their owner can only be dead. */
    private void reclaimDeadOwnersExtents(boolean keepPersistent) throws IOException {
        int count = 0;
        long bytes = 0;
        try (DirectoryStream<Path> extents = Files.newDirectoryStream(realDirectory, "kvtier-*.extent")) {
            for (Path extent : extents) {
                if (keepPersistent && extent.getFileName().toString().startsWith(MappedFileChunkAllocator.PERSISTENT_PREFIX)) {
                    continue;
                }
                if (Files.isRegularFile(extent)) {
                    long size = Files.size(extent);
                    if (Files.deleteIfExists(extent)) {
                        count++;
                        bytes += size;
                    }
                }
            }
        }
        if (count > 0) {
            LOG.log(System.Logger.Level.WARNING, "reclaimed " + count + " disk extent file(s), " + bytes + " bytes, left in "
                    + directory + " by an owner that is gone (killed before it could delete them)");
        }
    }

    /** The directory this lock owns, as given. */
    public Path directory() {
        return directory;
    }

    /** The random id of this owner, as written into the lock file. */
    public String instanceId() {
        return instanceId;
    }

    /** Who holds the directory, as a refused open would name it: pid, start time, instance id. */
    public String holder() {
        return holder;
    }

    /** Deletes the lock file and releases the lock; later calls do nothing. Failures are logged, not thrown. */
    @Override
    public void close() {
        synchronized (HELD) {
            if (closed) {
                return;
            }
            HELD.remove(realDirectory, this);
            release();
        }
    }

    /** Deletes the file while still holding the lock (see {@link #acquire}), then unlocks by closing. */
    private void release() {
        closed = true;
        try {
            Files.deleteIfExists(lockFile);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "could not delete " + lockFile + " (harmless: the next owner reuses it): " + e);
        }
        try {
            lock.release();
            channel.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "could not release the lock on " + lockFile + ": " + e);
        }
    }

    @Override
    public String toString() {
        return "DiskDirectoryLock[" + directory + ", " + holder + (closed ? ", closed" : "") + "]";
    }
}
