package dev.kvtier.exec;

import dev.kvtier.cuda.CudaException;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.DeviceAllocation;
import dev.kvtier.cuda.DeviceAttribute;
import dev.kvtier.cuda.HostRegistration;
import dev.kvtier.cuda.PinnedAllocation;
import dev.kvtier.store.Tier;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The CUDA backend, a thin adapter over {@code dev.kvtier.cuda}: GPU chunks are {@code cudaMalloc}
 * arenas (sub-allocated in pages by {@link PagedTierMemory}), CPU chunks are {@code cudaHostAlloc}
 * pinned blocks grown lazily (at least 8 MiB each), DISK chunks are mapped file extents registered
 * with {@code cudaHostRegister} one extent at a time, so device copies go straight to and from the
 * mapping and no copy spans two registrations (a region never crosses a chunk). Where the device
 * lacks {@code cudaHostRegister} ({@code cudaDevAttrHostRegisterSupported} = 0) or refuses an
 * extent, extents are used unregistered: the driver's pageable path (logged once). A pinned bounce
 * buffer of our own for that case is not implemented. Copies by
 * {@link CudaCopyEngine}. Uses the calling threads' current device (device 0 unless the
 * application set another). Thread-safe.
 */
public final class CudaExecutionBackend implements ExecutionBackend {
    private static final System.Logger LOG = System.getLogger(CudaExecutionBackend.class.getName());

    private final CudaRuntime cuda;
    private final String reason;
    private final ChunkAllocator device;
    private final ChunkAllocator pinned;
    private final ChunkAllocator disk;
    private final CudaCopyEngine engine;

    /**
     * @param cuda             a usable runtime (from {@code CudaRuntime.probe()})
     * @param diskDirectory    where DISK extents go
     * @param hostCopyThreads  threads for host-to-host copies
     * @param batchSmallCopies whether multi-region copies use {@code cudaMemcpyBatchAsync}
     * @param reason           why this backend was chosen, for the log line
     */
    public CudaExecutionBackend(CudaRuntime cuda, Path diskDirectory, int hostCopyThreads, boolean batchSmallCopies,
                                String reason) {
        this.cuda = cuda;
        this.reason = reason;
        this.device = new DeviceArenas(cuda);
        this.pinned = new PinnedChunks(cuda);
        this.disk = new RegisteredExtents(cuda, new MappedFileChunkAllocator(diskDirectory), hostRegisterSupported(cuda));
        this.engine = new CudaCopyEngine(cuda, hostCopyThreads, batchSmallCopies);
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
    public ChunkAllocator chunkAllocator(Tier tier) {
        return switch (tier) {
            case GPU -> device;
            case CPU -> pinned;
            case DISK -> disk;
        };
    }

    @Override
    public CudaCopyEngine copyEngine() {
        return engine;
    }

    @Override
    public void close() {
        engine.close();
    }

    private static IOException asIo(String what, long bytes, CudaException e, String fix) {
        return new IOException(what + " of " + bytes + " bytes failed: " + e.getMessage() + " (" + fix + ")", e);
    }

    /** {@code cudaMalloc} arenas. */
    private record DeviceArenas(CudaRuntime cuda) implements ChunkAllocator {
        @Override
        public MemoryChunk allocate(long bytes) throws IOException {
            DeviceAllocation allocation;
            try {
                allocation = cuda.allocateDevice(bytes);
            } catch (CudaException e) {
                throw asIo("cudaMalloc", bytes, e, "lower gpuBudgetBytes or free device memory");
            }
            MemorySegment memory = allocation.segment();
            return new MemoryChunk() {
                @Override
                public MemorySegment memory() {
                    return memory;
                }

                @Override
                public void close() {
                    allocation.close();
                }
            };
        }

        @Override
        public String description() {
            return "cudaMalloc arenas";
        }
    }

    /** {@code cudaHostAlloc} pinned chunks. */
    private record PinnedChunks(CudaRuntime cuda) implements ChunkAllocator {
        @Override
        public MemoryChunk allocate(long bytes) throws IOException {
            PinnedAllocation allocation;
            try {
                allocation = cuda.allocatePinned(bytes);
            } catch (CudaException e) {
                throw asIo("cudaHostAlloc", bytes, e, "lower cpuBudgetBytes or raise the locked-memory limit (ulimit -l)");
            }
            MemorySegment memory = allocation.segment();
            return new MemoryChunk() {
                @Override
                public MemorySegment memory() {
                    return memory;
                }

                @Override
                public void close() {
                    allocation.close();
                }
            };
        }

        @Override
        public String description() {
            return "cudaHostAlloc pinned chunks";
        }
    }

    /** Mapped extents, each registered with {@code cudaHostRegister}; unregistered before unmapping. */
    private static final class RegisteredExtents implements ChunkAllocator {
        private final CudaRuntime cuda;
        private final MappedFileChunkAllocator files;
        private final boolean register;
        private final AtomicBoolean warned = new AtomicBoolean();

        RegisteredExtents(CudaRuntime cuda, MappedFileChunkAllocator files, boolean register) {
            this.cuda = cuda;
            this.files = files;
            this.register = register;
        }

        @Override
        public MemoryChunk allocate(long bytes) throws IOException {
            MemoryChunk extent = files.allocate(bytes);
            if (!register) {
                return extent;
            }
            HostRegistration registration;
            try {
                registration = cuda.registerHost(extent.memory(), false);
            } catch (CudaException e) {
                if (warned.compareAndSet(false, true)) {
                    LOG.log(System.Logger.Level.WARNING, "cudaHostRegister refused a DISK extent (" + e.getMessage()
                            + "); DISK copies use the driver's pageable path");
                }
                return extent;
            }
            return new MemoryChunk() {
                @Override
                public MemorySegment memory() {
                    return extent.memory();
                }

                @Override
                public void close() {
                    try {
                        registration.close();
                    } finally {
                        extent.close();
                    }
                }
            };
        }

        @Override
        public String description() {
            return (register ? "cudaHostRegister'ed " : "unregistered (device lacks cudaHostRegister; driver's pageable path) ")
                    + files.description();
        }
    }
}
