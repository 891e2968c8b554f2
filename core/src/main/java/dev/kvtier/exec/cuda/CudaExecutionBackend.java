package dev.kvtier.exec.cuda;

import dev.kvtier.cuda.CudaException;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.DeviceAllocation;
import dev.kvtier.cuda.DeviceAttribute;
import dev.kvtier.cuda.HostRegistration;
import dev.kvtier.cuda.PinnedAllocation;
import dev.kvtier.exec.BackendUnusableException;
import dev.kvtier.exec.ChunkAllocator;
import dev.kvtier.exec.CopyEngine;
import dev.kvtier.exec.ExecutionBackend;
import dev.kvtier.exec.MappedFileChunkAllocator;
import dev.kvtier.exec.MemoryChunk;
import dev.kvtier.exec.OwnedChunk;
import dev.kvtier.exec.StorageKind;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongFunction;

/**
 * The CUDA backend, a thin adapter over {@code dev.kvtier.cuda}: device chunks are {@code cudaMalloc}
 * arenas (sub-allocated in pages by {@code PagedMemory}), pinned chunks are {@code cudaHostAlloc}
 * blocks grown lazily (at least 8 MiB each), mapped-file chunks are file extents. How extents
 * reach the device is the {@link ExtentRegistration}:
 * <ul>
 *   <li>registered: each extent registered with {@code cudaHostRegister} as it is mapped, so
 *       device copies go straight to and from the mapping and no copy spans two registrations (a
 *       region never crosses a chunk);</li>
 *   <li>staged: the extent stays unregistered and device copies go through a small pool of pinned
 *       bounce buffers (pairs of buffers as configured, allocated on first use, freed on close after
 *       their last copy completed).</li>
 * </ul>
 * {@link ExtentRegistration#WHERE_SUPPORTED} registers where the device reports
 * {@code cudaDevAttrHostRegisterSupported}, else stages; an extent the driver refuses to register is
 * staged (logged once). Copies by {@link CudaCopyEngine}. Uses the calling threads' current device
 * (device 0 unless the application set another). Thread-safe.
 *
 * <p>After a sticky CUDA error ({@link ContextHealth}: found by the copy engine or by a failed
 * allocation) the backend is unusable: device copies and allocations that need the driver fail at
 * once with a {@link BackendUnusableException} (an allocation as an {@link IOException} caused by it),
 * host-to-host copies go on, new DISK extents are staged rather than registered, and frees the driver
 * refuses (all of them, in a dead context) are logged instead of thrown, so close() returns.
 */
public final class CudaExecutionBackend implements ExecutionBackend {
    private static final System.Logger LOG = System.getLogger(CudaExecutionBackend.class.getName());
    private final CudaRuntime cuda;
    private final String reason;
    private final ChunkAllocator device;
    private final ChunkAllocator pinned;
    private final ChunkAllocator disk;
    private final ContextHealth health;
    private final CudaCopyEngine engine;

    /**
     * @param cuda               a usable runtime (from {@code CudaRuntime.probe()})
     * @param diskDirectory      where mapped-file extents go
     * @param hostCopyThreads    threads for host-to-host copies
     * @param batchSmallCopies   whether multi-region copies use {@code cudaMemcpyBatchAsync}
     * @param extentRegistration whether extents are registered or staged
     * @param bounceBufferBytes  bytes per pinned bounce buffer for staged copies, {@code > 0}
     * @param bouncePairs        pairs of bounce buffers, {@code >= 1}: staged copies that run at once
     * @param transferTimeout    the deadline of every wait for the device, {@code > 0}
     * @param reason             why this backend was chosen, for the log line
     * @throws IllegalArgumentException naming the argument for a null registration or a bad bounce size or count
     */
    public CudaExecutionBackend(CudaRuntime cuda, Path diskDirectory, int hostCopyThreads, boolean batchSmallCopies,
                                ExtentRegistration extentRegistration, long bounceBufferBytes, int bouncePairs,
                                Duration transferTimeout, String reason) {
        this(cuda, new MappedFileChunkAllocator(diskDirectory), hostCopyThreads, batchSmallCopies, extentRegistration,
                bounceBufferBytes, bouncePairs, transferTimeout, reason);
    }

    /**
     * As the constructor above, with the DISK extents' allocator given ({@link MappedFileChunkAllocator#persistent}
     * for a DISK tier that outlives the process); each extent is registered or staged the same way.
     */
    public CudaExecutionBackend(CudaRuntime cuda, MappedFileChunkAllocator diskExtents, int hostCopyThreads,
                                boolean batchSmallCopies, ExtentRegistration extentRegistration, long bounceBufferBytes,
                                int bouncePairs, Duration transferTimeout, String reason) {
        if (extentRegistration == null) {
            throw new IllegalArgumentException("extentRegistration must not be null");
        }
        this.cuda = cuda;
        this.reason = reason;
        this.health = new ContextHealth(cuda);
        try {
            this.device = CudaChunks.device(cuda, health);
            this.pinned = CudaChunks.pinned(cuda, health);
            StagedHostMemory staged = new StagedHostMemory();
            BounceBuffers bounce = new BounceBuffers(cuda, bounceBufferBytes, bouncePairs);
            boolean register = switch (extentRegistration) {
                case WHERE_SUPPORTED -> hostRegisterSupported(cuda);
                case ALWAYS -> true;
                case NEVER -> false;
            };
            String why = switch (extentRegistration) {
                case WHERE_SUPPORTED -> register ? "AUTO: device supports cudaHostRegister" : "AUTO: device lacks cudaHostRegister";
                case ALWAYS -> "REGISTERED by configuration";
                case NEVER -> "STAGED by configuration";
            };
            this.disk = new DiskExtents(cuda, health, diskExtents, register, staged,
                    bounce.description(), why);
            this.engine = new CudaCopyEngine(cuda, health, hostCopyThreads, batchSmallCopies, transferTimeout, staged,
                    bounce);
        } catch (RuntimeException | Error e) {
            health.close(); // nothing of a failed construction may outlive it
            throw e;
        }
    }

    /** Whether the current device supports {@code cudaHostRegister}; if the query itself fails, try (and fall back per extent). */
    private static boolean hostRegisterSupported(CudaRuntime cuda) {
        try {
            return cuda.deviceAttribute(DeviceAttribute.HOST_REGISTER_SUPPORTED, cuda.currentDevice()) != 0;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "cannot query cudaDevAttrHostRegisterSupported, will try: " + e);
            return true;
        }
    }

    /** The runtime this backend drives. */
    public CudaRuntime runtime() {
        return cuda;
    }

    @Override
    public String description() {
        return "cuda (" + cuda.description() + "; " + reason + "; " + engine.description() + "; DISK: "
                + disk.description() + ")";
    }

    @Override
    public ChunkAllocator chunkAllocator(StorageKind kind) {
        return switch (kind) {
            case DEVICE -> device;
            case PINNED_HOST -> pinned;
            case MAPPED_FILE -> disk;
        };
    }

    @Override
    public CopyEngine copyEngine() {
        return engine;
    }

    /** Whether a sticky CUDA error has made this backend unusable (see the class comment). */
    public boolean isUnusable() {
        return health.isUnusable();
    }

    @Override
    public void close() {
        try {
            engine.close();
        } finally {
            health.close(); // last: the memories freed before this one still ask it whether a failure is sticky
        }
    }

    /**
     * Chunks from one CUDA allocation call ({@code cudaMalloc} arenas, {@code cudaHostAlloc} pinned
     * blocks); a {@link CudaException} becomes an {@link IOException} naming the call, the size and
     * {@code fix}, or, when the error is sticky, caused by the {@link BackendUnusableException} (no
     * budget or limit would help then). Freeing a chunk in a dead context is logged, not thrown.
     */
    private record CudaChunks(String call, String fix, String description, ContextHealth health,
                              LongFunction<MemoryChunk> allocator) implements ChunkAllocator {
        static CudaChunks device(CudaRuntime cuda, ContextHealth health) {
            return new CudaChunks("cudaMalloc", "lower gpuBudgetBytes or free device memory", "cudaMalloc arenas",
                    health, bytes -> {
                        DeviceAllocation allocation = cuda.allocateDevice(bytes);
                        return new OwnedChunk(allocation.segment(), () -> health.free(allocation.toString(),
                                allocation::close));
                    });
        }

        static CudaChunks pinned(CudaRuntime cuda, ContextHealth health) {
            return new CudaChunks("cudaHostAlloc", "lower cpuBudgetBytes or raise the locked-memory limit (ulimit -l)",
                    "cudaHostAlloc pinned chunks", health, bytes -> {
                        PinnedAllocation allocation = cuda.allocatePinned(bytes);
                        return new OwnedChunk(allocation.segment(), () -> health.free(allocation.toString(),
                                allocation::close));
                    });
        }

        @Override
        public MemoryChunk allocate(long bytes) throws IOException {
            try {
                health.requireUsable();
                return allocator.apply(bytes);
            } catch (BackendUnusableException e) {
                throw new IOException(call + " of " + bytes + " bytes refused: " + e.getMessage(), e);
            } catch (CudaException e) {
                if (health.check(e) instanceof BackendUnusableException unusable) {
                    throw new IOException(call + " of " + bytes + " bytes failed: " + unusable.getMessage(), unusable);
                }
                throw new IOException(call + " of " + bytes + " bytes failed: " + e.getMessage() + " (" + fix + ")", e);
            }
        }
    }

    /**
     * Mapped extents, each registered with {@code cudaHostRegister} (unregistered before unmapping) or
     * marked as staged (unmarked before unmapping).
     */
    private static final class DiskExtents implements ChunkAllocator {
        private final CudaRuntime cuda;
        private final ContextHealth health;
        private final MappedFileChunkAllocator files;
        private final boolean register;
        private final StagedHostMemory staged;
        private final String bounceDescription;
        private final String why;
        private final AtomicBoolean warned = new AtomicBoolean();

        DiskExtents(CudaRuntime cuda, ContextHealth health, MappedFileChunkAllocator files, boolean register,
                    StagedHostMemory staged, String bounceDescription, String why) {
            this.cuda = cuda;
            this.health = health;
            this.files = files;
            this.register = register;
            this.staged = staged;
            this.bounceDescription = bounceDescription;
            this.why = why;
        }

        @Override
        public MemoryChunk allocate(long bytes) throws IOException {
            return register(files.allocate(bytes));
        }

        @Override
        public MemoryChunk allocate(long bytes, int slot) throws IOException {
            return register(files.allocate(bytes, slot));
        }

        /** Registers a new extent with the driver, or marks it staged. */
        private MemoryChunk register(MemoryChunk extent) {
            if (!register || health.isUnusable()) {
                // Unusable: the driver would refuse; the extent still holds host bytes (host copies need no driver).
                return stagedExtent(extent);
            }
            HostRegistration registration;
            try {
                registration = cuda.registerHost(extent.memory(), false);
            } catch (CudaException e) {
                if (health.check(e) instanceof BackendUnusableException) {
                    return stagedExtent(extent); // logged once by the health check
                }
                if (warned.compareAndSet(false, true)) {
                    LOG.log(System.Logger.Level.WARNING, "cudaHostRegister refused a DISK extent (" + e.getMessage()
                            + "); such extents are staged through pinned bounce buffers");
                }
                return stagedExtent(extent);
            }
            return new OwnedChunk(extent.memory(), () -> {
                try {
                    // A dead context cannot unregister; the driver's hold on the pages ends with the context.
                    health.free(registration.toString(), registration::close);
                } finally {
                    extent.close();
                }
            });
        }

        private MemoryChunk stagedExtent(MemoryChunk extent) {
            MemorySegment memory = extent.memory();
            staged.add(memory);
            return new OwnedChunk(memory, () -> {
                try {
                    staged.remove(memory);
                } finally {
                    extent.close();
                }
            });
        }

        @Override
        public String description() {
            return (register ? "cudaHostRegister'ed " : bounceDescription + " ") + files.description() + " (" + why + ")";
        }
    }
}
