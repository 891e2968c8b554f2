package dev.kvtier.tiering;

import dev.kvtier.CacheOpenException;
import dev.kvtier.DirectoryInUseException;
import dev.kvtier.KvTierConfig;
import dev.kvtier.cuda.CudaProbe;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.exec.DirectoryHeldException;
import dev.kvtier.exec.DirectoryOwningBackend;
import dev.kvtier.exec.DiskDirectoryLock;
import dev.kvtier.exec.ExecutionBackend;
import dev.kvtier.exec.MappedFileChunkAllocator;
import dev.kvtier.exec.cuda.CudaExecutionBackend;
import dev.kvtier.exec.cuda.ExtentRegistration;
import dev.kvtier.exec.host.HostExecutionBackend;

import java.io.IOException;
import java.nio.file.Path;

/** Picks the executor backend for a configuration and says why (the reason goes into the one log line). */
public final class BackendSelection {
    private BackendSelection() {
    }

    /**
     * The backend for {@code config}, owning {@code diskDirectory} (see {@link DiskDirectoryLock})
     * until it is closed.
     *
     * @throws DirectoryInUseException if another cache holds the directory (the message names it and the holder)
     * @throws CacheOpenException      if the directory cannot be locked, or CUDA was required and is not usable
     */
    public static ExecutionBackend open(KvTierConfig config, Path diskDirectory) {
        DiskDirectoryLock lock;
        try {
            lock = DiskDirectoryLock.acquire(diskDirectory, config.persistence().isPresent());
        } catch (DirectoryHeldException e) {
            throw new DirectoryInUseException(e.directory(), e.holder(), e.getMessage(), e);
        } catch (IOException e) {
            throw Failures.openFailed("lock the disk directory " + diskDirectory, e);
        }
        try {
            return new DirectoryOwningBackend(select(config, diskDirectory), lock);
        } catch (RuntimeException | Error e) {
            lock.close();
            throw e;
        }
    }

    /** Where DISK extents come from: named by slot and kept on close when the DISK tier is persistent. */
    private static MappedFileChunkAllocator diskExtents(KvTierConfig config, Path diskDirectory) {
        return config.persistence().isPresent() ? MappedFileChunkAllocator.persistent(diskDirectory)
                : new MappedFileChunkAllocator(diskDirectory);
    }

    /**
     * The host backend's DISK extents: made ahead of need on the allocator's own thread when not persistent
     * (persistent extents are named by slot and reopened, nothing to make ahead); the backend closes it.
     */
    private static MappedFileChunkAllocator hostDiskExtents(KvTierConfig config, Path diskDirectory) {
        return config.persistence().isPresent() ? MappedFileChunkAllocator.persistent(diskDirectory)
                : MappedFileChunkAllocator.readyAhead(diskDirectory);
    }

    private static ExecutionBackend select(KvTierConfig config, Path diskDirectory) {
        return switch (config.backend()) {
            case HOST -> new HostExecutionBackend(hostDiskExtents(config, diskDirectory), config.copyThreads(),
                    "HOST requested by configuration");
            case CUDA -> {
                CudaProbe probe = probe(config);
                CudaRuntime cuda = probe.runtime().orElseThrow(() -> new CacheOpenException(
                        "backend CUDA requested but CUDA is not usable: " + probe.describe()
                                + " (use Backend.AUTO or Backend.HOST to run without a GPU)", null));
                yield cuda(cuda, config, diskDirectory, "CUDA requested by configuration");
            }
            case AUTO -> {
                CudaProbe probe;
                try {
                    probe = probe(config);
                } catch (RuntimeException | LinkageError e) {
                    yield new HostExecutionBackend(hostDiskExtents(config, diskDirectory), config.copyThreads(),
                            "no GPU: probing CUDA failed: " + e);
                }
                if (probe.runtime().isPresent()) {
                    yield cuda(probe.runtime().get(), config, diskDirectory, "AUTO found a usable device");
                }
                yield new HostExecutionBackend(hostDiskExtents(config, diskDirectory), config.copyThreads(),
                        "no GPU: " + probe.describe());
            }
        };
    }

    private static ExecutionBackend cuda(CudaRuntime cuda, KvTierConfig config, Path diskDirectory, String reason) {
        ExtentRegistration registration = switch (config.diskTransferMode()) {
            case AUTO -> ExtentRegistration.WHERE_SUPPORTED;
            case REGISTERED -> ExtentRegistration.ALWAYS;
            case STAGED -> ExtentRegistration.NEVER;
        };
        return new CudaExecutionBackend(cuda, diskExtents(config, diskDirectory), config.copyThreads(), true, registration,
                config.bounceBufferBytes(), config.bounceBufferPairs(), config.transferTimeout(), reason);
    }

    private static CudaProbe probe(KvTierConfig config) {
        return config.cudaLibrary().map(CudaRuntime::probe).orElseGet(CudaRuntime::probe);
    }
}
