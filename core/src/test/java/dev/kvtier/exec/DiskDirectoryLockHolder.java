package dev.kvtier.exec;

import java.nio.file.Path;

/**
 * The child JVM of {@link DiskDirectoryLockTest}: takes the lock on a directory, creates one extent
 * there, prints {@code HOLDING}, then waits until its stdin closes (or it is killed, which is the
 * point: a {@code kill -9} leaves the extent behind). Not a test itself.
 */
public final class DiskDirectoryLockHolder {
    private DiskDirectoryLockHolder() {
    }

    /** @param args the directory to hold */
    public static void main(String[] args) throws Exception {
        Path directory = Path.of(args[0]);
        DiskDirectoryLock lock = DiskDirectoryLock.acquire(directory);
        MemoryChunk extent = new MappedFileChunkAllocator(directory).allocate(64 * 1024);
        System.out.println("HOLDING " + lock.holder());
        System.out.flush();
        System.in.read(); // until the parent closes our stdin, or kills us
        extent.close();
        lock.close();
    }
}
