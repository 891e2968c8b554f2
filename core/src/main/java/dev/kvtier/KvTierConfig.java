package dev.kvtier;

import dev.kvtier.store.DemotionPolicy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * How a {@link KvTierCache} is built: budgets, where DISK extents go, page size, demotion policy,
 * backend and the bound on bytes in flight. Immutable and thread-safe; build with {@link #builder()}.
 */
public final class KvTierConfig {
    /** Default page size: 64 KiB, a few KV blocks of a typical model. */
    public static final int DEFAULT_PAGE_SIZE = 64 << 10;
    /** Default bound on bytes of unfinished copies: 256 MiB. */
    public static final long DEFAULT_MAX_BYTES_IN_FLIGHT = 256L << 20;
    /** Default bytes per pinned bounce buffer (CUDA, staged DISK copies): 8 MiB, large enough that the per-copy cost is noise. */
    public static final long DEFAULT_BOUNCE_BUFFER_BYTES = 8L << 20;
    /** Default pairs of bounce buffers: two staged copies at once, 32 MiB pinned in all. */
    public static final int DEFAULT_BOUNCE_BUFFER_PAIRS = 2;
    /**
     * Default transfer timeout: 30 s. A timeout only has to tell "slow" from "never": the largest
     * single copy a cache makes (a segment of a few GiB, or one batch of victims) takes seconds even
     * from a cold disk at a few hundred MB/s, while a copy whose completion never comes (a wedged
     * device, a host function that never runs after a device error) would otherwise hold its locks,
     * and {@code close()}, forever. Raise it for very large segments on slow storage.
     */
    public static final Duration DEFAULT_TRANSFER_TIMEOUT = Duration.ofSeconds(30);
    /** Default size of one DISK extent file: 64 MiB. */
    public static final long DEFAULT_DISK_EXTENT_BYTES = 64L << 20;
    /** Default share of a full tier's budget one round of making room frees; see {@link Builder#roomBatchFraction}. */
    public static final double DEFAULT_ROOM_BATCH_FRACTION = 0.004;
    /** The largest {@link Builder#roomBatchFraction}: beyond half its budget, a tier would mostly stand empty. */
    public static final double MAX_ROOM_BATCH_FRACTION = 0.5;

    private final long gpuBudgetBytes;
    private final long cpuBudgetBytes;
    private final Path diskDirectory;
    private final int pageSizeBytes;
    private final DemotionPolicy policy;
    private final Backend backend;
    private final long maxBytesInFlight;
    private final Duration transferTimeout;
    private final long diskExtentBytes;
    private final int copyThreads;
    private final Path cudaLibrary;
    private final DiskTransferMode diskTransferMode;
    private final long bounceBufferBytes;
    private final int bounceBufferPairs;
    private final DiskPersistence persistence;
    private final double roomBatchFraction;

    private KvTierConfig(Builder b) {
        this.gpuBudgetBytes = b.gpuBudgetBytes;
        this.cpuBudgetBytes = b.cpuBudgetBytes;
        this.diskDirectory = b.diskDirectory;
        this.pageSizeBytes = b.pageSizeBytes;
        this.policy = b.policy;
        this.backend = b.backend;
        this.maxBytesInFlight = b.maxBytesInFlight;
        this.transferTimeout = b.transferTimeout;
        this.diskExtentBytes = b.diskExtentBytes;
        this.copyThreads = b.copyThreads;
        this.cudaLibrary = b.cudaLibrary;
        this.diskTransferMode = b.diskTransferMode;
        this.bounceBufferBytes = b.bounceBufferBytes;
        this.bounceBufferPairs = b.bounceBufferPairs;
        this.persistence = b.persistence;
        this.roomBatchFraction = b.roomBatchFraction;
    }

    /**
     * A builder with the defaults: no budgets (set both), a fresh temporary disk directory, 64 KiB pages,
     * {@link DemotionPolicy#defaultPolicy()}, AUTO, room made in batches of {@value #DEFAULT_ROOM_BATCH_FRACTION} of
     * a tier.
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Bytes of segments the GPU tier may hold. */
    public long gpuBudgetBytes() {
        return gpuBudgetBytes;
    }

    /** Bytes of segments the CPU (pinned host) tier may hold. */
    public long cpuBudgetBytes() {
        return cpuBudgetBytes;
    }

    /** Where DISK extents are created; empty means a fresh temporary directory, deleted on close. */
    public Optional<Path> diskDirectory() {
        return Optional.ofNullable(diskDirectory);
    }

    /** Page size of every tier. */
    public int pageSizeBytes() {
        return pageSizeBytes;
    }

    /** Which segments are demoted first to make room. */
    public DemotionPolicy policy() {
        return policy;
    }

    /** Which backend moves the bytes. */
    public Backend backend() {
        return backend;
    }

    /** Bound on bytes of copies started and not finished. */
    public long maxBytesInFlight() {
        return maxBytesInFlight;
    }

    /** How long one copy (or one batch of copies) may take before it fails; see {@link Builder#transferTimeout}. */
    public Duration transferTimeout() {
        return transferTimeout;
    }

    /** Size of each DISK extent file (rounded up to whole pages). */
    public long diskExtentBytes() {
        return diskExtentBytes;
    }

    /** Threads copying host memory (the host backend's copies, host-to-host copies of the CUDA backend). */
    public int copyThreads() {
        return copyThreads;
    }

    /** The libcudart to load, if one was given; empty means the default search of {@code CudaRuntime.probe()}. */
    public Optional<Path> cudaLibrary() {
        return Optional.ofNullable(cudaLibrary);
    }

    /** How the CUDA backend moves DISK bytes to and from the device (ignored by the host backend). */
    public DiskTransferMode diskTransferMode() {
        return diskTransferMode;
    }

    /** Bytes per pinned bounce buffer the CUDA backend stages DISK copies through (ignored by the host backend). */
    public long bounceBufferBytes() {
        return bounceBufferBytes;
    }

    /** Pairs of bounce buffers: how many staged copies run at once (ignored by the host backend). */
    public int bounceBufferPairs() {
        return bounceBufferPairs;
    }

    /** Whether and how the DISK tier outlives the process; empty (the default): it is deleted on close. */
    public Optional<DiskPersistence> persistence() {
        return Optional.ofNullable(persistence);
    }

    /** The share of a GPU or CPU budget one round of making room frees at least; see {@link Builder#roomBatchFraction}. */
    public double roomBatchFraction() {
        return roomBatchFraction;
    }

    @Override
    public String toString() {
        return "KvTierConfig[gpuBudget=" + gpuBudgetBytes + ", cpuBudget=" + cpuBudgetBytes + ", diskDirectory="
                + (diskDirectory == null ? "(temporary)" : diskDirectory) + ", pageSize=" + pageSizeBytes
                + ", policy=" + policy.name() + ", backend=" + backend + ", maxBytesInFlight=" + maxBytesInFlight
                + ", transferTimeout=" + transferTimeout
                + ", diskExtent=" + diskExtentBytes + ", copyThreads=" + copyThreads
                + ", diskTransferMode=" + diskTransferMode + ", bounceBuffers=" + bounceBufferPairs + "x2x" + bounceBufferBytes
                + ", roomBatchFraction=" + roomBatchFraction
                + (cudaLibrary == null ? "" : ", cudaLibrary=" + cudaLibrary)
                + (persistence == null ? "" : ", persistence=" + persistence) + "]";
    }

    /** Mutable builder; not thread-safe. Every setter checks its argument and names it when it is bad. */
    public static final class Builder {
        private long gpuBudgetBytes = -1;
        private long cpuBudgetBytes = -1;
        private Path diskDirectory;
        private int pageSizeBytes = DEFAULT_PAGE_SIZE;
        private DemotionPolicy policy = DemotionPolicy.defaultPolicy();
        private Backend backend = Backend.AUTO;
        private long maxBytesInFlight = DEFAULT_MAX_BYTES_IN_FLIGHT;
        private Duration transferTimeout = DEFAULT_TRANSFER_TIMEOUT;
        private long diskExtentBytes = DEFAULT_DISK_EXTENT_BYTES;
        private int copyThreads = Math.max(2, Math.min(4, Runtime.getRuntime().availableProcessors()));
        private Path cudaLibrary;
        private DiskTransferMode diskTransferMode = DiskTransferMode.AUTO;
        private long bounceBufferBytes = DEFAULT_BOUNCE_BUFFER_BYTES;
        private int bounceBufferPairs = DEFAULT_BOUNCE_BUFFER_PAIRS;
        private DiskPersistence persistence;
        private double roomBatchFraction = DEFAULT_ROOM_BATCH_FRACTION;

        private Builder() {
        }

        /** Bytes of segments the GPU tier may hold, {@code >= 0}; required. */
        public Builder gpuBudgetBytes(long bytes) {
            this.gpuBudgetBytes = nonNegative(bytes, "gpuBudgetBytes");
            return this;
        }

        /** Bytes of segments the CPU tier may hold, {@code >= 0}; required. */
        public Builder cpuBudgetBytes(long bytes) {
            this.cpuBudgetBytes = nonNegative(bytes, "cpuBudgetBytes");
            return this;
        }

        /** Where DISK extents go (created if missing); unset: a fresh temporary directory deleted on close. */
        public Builder diskDirectory(Path directory) {
            if (directory == null) {
                throw new IllegalArgumentException("diskDirectory must not be null");
            }
            this.diskDirectory = directory;
            return this;
        }

        /** Page size of every tier, {@code > 0}; a multiple of 4096 keeps pages aligned. Default 64 KiB. */
        public Builder pageSizeBytes(int bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("pageSizeBytes must be > 0, was " + bytes);
            }
            this.pageSizeBytes = bytes;
            return this;
        }

        /** Which segments are demoted first. Default {@link DemotionPolicy#defaultPolicy()}. */
        public Builder policy(DemotionPolicy policy) {
            if (policy == null) {
                throw new IllegalArgumentException("policy must not be null");
            }
            this.policy = policy;
            return this;
        }

        /** Which backend moves bytes. Default {@link Backend#AUTO}. */
        public Builder backend(Backend backend) {
            if (backend == null) {
                throw new IllegalArgumentException("backend must not be null");
            }
            this.backend = backend;
            return this;
        }

        /** Bound on bytes of unfinished copies, {@code > 0}. Default 256 MiB. */
        public Builder maxBytesInFlight(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("maxBytesInFlight must be > 0, was " + bytes);
            }
            this.maxBytesInFlight = bytes;
            return this;
        }

        /**
         * How long one copy, or one batch of copies, may take, {@code > 0}. A copy that has not
         * completed by then fails with {@link TransferFailedException} naming the timeout; the
         * segment stays readable where it was, its locks are released, and the memory the copy may
         * still write is quarantined (never reused or freed). Default
         * {@link #DEFAULT_TRANSFER_TIMEOUT} (30 s; its Javadoc says why).
         */
        public Builder transferTimeout(Duration timeout) {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("transferTimeout must be > 0, was " + timeout);
            }
            this.transferTimeout = timeout;
            return this;
        }

        /** Size of each DISK extent file, {@code > 0}. Default 64 MiB. */
        public Builder diskExtentBytes(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("diskExtentBytes must be > 0, was " + bytes);
            }
            this.diskExtentBytes = bytes;
            return this;
        }

        /** Host copy threads, {@code >= 1}. Default: the number of cores, between 2 and 4. */
        public Builder copyThreads(int threads) {
            if (threads < 1) {
                throw new IllegalArgumentException("copyThreads must be >= 1, was " + threads);
            }
            this.copyThreads = threads;
            return this;
        }

        /**
         * The libcudart file to load instead of the default search (system property {@code kvtier.cudart},
         * env {@code KVTIER_CUDART}, {@code CUDA_HOME}, /usr/local/cuda, the loader's names).
         */
        public Builder cudaLibrary(Path library) {
            if (library == null) {
                throw new IllegalArgumentException("cudaLibrary must not be null");
            }
            this.cudaLibrary = library;
            return this;
        }

        /**
         * How the CUDA backend moves DISK bytes to and from the device: registered mappings, or staged
         * through pinned bounce buffers. Default {@link DiskTransferMode#AUTO} (registered where the
         * device supports {@code cudaHostRegister}, else staged; see {@link DiskTransferMode} for why).
         */
        public Builder diskTransferMode(DiskTransferMode mode) {
            if (mode == null) {
                throw new IllegalArgumentException("diskTransferMode must not be null");
            }
            this.diskTransferMode = mode;
            return this;
        }

        /**
         * Bytes per pinned bounce buffer for staged DISK copies on the CUDA backend, {@code > 0}. Pinned
         * up front when the cache opens ({@code 2 x pairs x bytes} in all). Default
         * {@value #DEFAULT_BOUNCE_BUFFER_BYTES}: large enough that the per-copy cost is noise.
         */
        public Builder bounceBufferBytes(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("bounceBufferBytes must be > 0, was " + bytes);
            }
            this.bounceBufferBytes = bytes;
            return this;
        }

        /**
         * Pairs of bounce buffers, {@code >= 1}: how many staged copies run at once (each pair double-buffers
         * one). Default {@value #DEFAULT_BOUNCE_BUFFER_PAIRS}.
         */
        public Builder bounceBufferPairs(int pairs) {
            if (pairs < 1) {
                throw new IllegalArgumentException("bounceBufferPairs must be >= 1, was " + pairs);
            }
            this.bounceBufferPairs = pairs;
            return this;
        }

        /**
         * Keeps the DISK tier across restarts and crashes under {@code persistence}'s namespace (see
         * {@link DiskPersistence}); needs an explicit {@link #diskDirectory}. Default: none, the DISK
         * tier starts empty and its files are deleted on close.
         */
        public Builder persistence(DiskPersistence persistence) {
            if (persistence == null) {
                throw new IllegalArgumentException("persistence must not be null");
            }
            this.persistence = persistence;
            return this;
        }

        /**
         * How much room a full GPU or CPU tier makes at once, as a share of its budget, in {@code [0, 0.5]}: when an
         * arrival finds the tier full, its victims are demoted until this share of the budget is free (or what the
         * arrival needs, when that is more), in one round: one candidates query, one booking pass and one batched
         * copy per tier pair (one {@code cudaMemcpyBatchAsync} and one wait on the CUDA backend), the room the
         * victims need below (CPU to DISK) made the same way. The next arrivals then find room with no round at all.
         *
         * <p>What it trades: a little capacity for fewer, larger rounds. Right after a round up to this share of the
         * tier stands empty (the arrivals refill it), so the hit rate drops a little as the share grows; the round's
         * fixed costs (the wait for a batch of copies above all) are paid once per batch instead of once per
         * arrival. The caller whose arrival starts a round waits for the whole batch's copies: at large budgets pick
         * a share whose bytes copy quickly enough (0.004 of 80 GiB is 328 MiB). {@code 0}: only the bytes needed,
         * one arrival at a time. Default {@value #DEFAULT_ROOM_BATCH_FRACTION}.
         */
        public Builder roomBatchFraction(double fraction) {
            if (!(fraction >= 0 && fraction <= MAX_ROOM_BATCH_FRACTION)) {
                throw new IllegalArgumentException("roomBatchFraction must be in [0, " + MAX_ROOM_BATCH_FRACTION
                        + "], was " + fraction);
            }
            this.roomBatchFraction = fraction;
            return this;
        }

        /**
         * The configuration.
         *
         * @throws IllegalArgumentException if a budget was not set, or persistence was asked without a disk directory
         */
        public KvTierConfig build() {
            if (persistence != null && diskDirectory == null) {
                throw new IllegalArgumentException("persistence " + persistence.namespace() + " needs a diskDirectory:"
                        + " a temporary one is deleted on close");
            }
            if (gpuBudgetBytes < 0) {
                throw new IllegalArgumentException("gpuBudgetBytes must be set");
            }
            if (cpuBudgetBytes < 0) {
                throw new IllegalArgumentException("cpuBudgetBytes must be set");
            }
            return new KvTierConfig(this);
        }

        private static long nonNegative(long value, String name) {
            if (value < 0) {
                throw new IllegalArgumentException(name + " must be >= 0, was " + value);
            }
            return value;
        }
    }
}
