package dev.kvtier;

import dev.kvtier.store.DemotionPolicy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * How a {@link KvTierCache} is built: budgets, where DISK extents go, page size, demotion policy,
 * backend and the bound on bytes in flight. Immutable and thread-safe; build with {@link #builder()},
 * or read from settings a person writes ({@link #from(Map)}, {@link #from(Properties)},
 * {@link #fromEnvironment()}).
 *
 * <h2>Settings</h2>
 * Each setting has one key; in a {@code Map} or {@code Properties} it is written as below, in the
 * environment in capitals with {@code _} for {@code .} ({@code kvtier.gpu.budget} is
 * {@code KVTIER_GPU_BUDGET}). Sizes take units ({@code 64GiB}, {@code 512MiB}, {@code 4096}; binary
 * units, except kB, MB, GB, TB which are powers of 1000: {@link ByteSizes#parse}); where a share is
 * allowed it is written {@code 25%}.
 * <table>
 *   <caption>Keys</caption>
 *   <tr><th>key</th><th>value</th><th>default</th></tr>
 *   <tr><td>{@code kvtier.gpu.budget}</td><td>size</td><td>none: required</td></tr>
 *   <tr><td>{@code kvtier.cpu.budget}</td><td>size, or share of physical memory</td><td>{@value #DEFAULT_CPU_BUDGET_SHARE_PERCENT}%</td></tr>
 *   <tr><td>{@code kvtier.disk.budget}</td><td>size, or share of the disk directory's file system</td><td>unbounded</td></tr>
 *   <tr><td>{@code kvtier.disk.directory}</td><td>path</td><td>a temporary directory, deleted on close</td></tr>
 *   <tr><td>{@code kvtier.page.size}</td><td>size</td><td>64KiB</td></tr>
 *   <tr><td>{@code kvtier.policy}</td><td>a built-in policy name ({@link DemotionPolicy#named})</td><td>{@link DemotionPolicy#defaultPolicy()}</td></tr>
 *   <tr><td>{@code kvtier.backend}</td><td>{@code auto}, {@code cuda}, {@code host}</td><td>auto</td></tr>
 *   <tr><td>{@code kvtier.max.bytes.in.flight}</td><td>size</td><td>256MiB</td></tr>
 *   <tr><td>{@code kvtier.transfer.timeout}</td><td>duration: {@code 30s}, {@code 500ms}, {@code 2m}, or ISO-8601 {@code PT30S}</td><td>30s</td></tr>
 *   <tr><td>{@code kvtier.disk.extent.size}</td><td>size</td><td>64MiB</td></tr>
 *   <tr><td>{@code kvtier.copy.threads}</td><td>integer</td><td>cores, between 2 and 4</td></tr>
 *   <tr><td>{@code kvtier.cuda.library}</td><td>path</td><td>the default search</td></tr>
 *   <tr><td>{@code kvtier.disk.transfer.mode}</td><td>{@code auto}, {@code registered}, {@code staged}</td><td>auto</td></tr>
 *   <tr><td>{@code kvtier.bounce.buffer.size}</td><td>size</td><td>8MiB</td></tr>
 *   <tr><td>{@code kvtier.bounce.buffer.pairs}</td><td>integer</td><td>2</td></tr>
 *   <tr><td>{@code kvtier.room.batch.fraction}</td><td>fraction or share ({@code 0.004}, {@code 0.4%})</td><td>0.004</td></tr>
 *   <tr><td>{@code kvtier.persistence.namespace}</td><td>a namespace ({@link DiskPersistence#of}, its other defaults)</td><td>none: not persistent</td></tr>
 *   <tr><td>{@code kvtier.remote.store}</td><td>a remote block store's URI ({@link RemoteStoreConfig}): {@code inprocess:name}, {@code redis://host:6379}</td><td>none: no remote store</td></tr>
 *   <tr><td>{@code kvtier.remote.key}</td><td>the HMAC-SHA256 key (its UTF-8 bytes, at least 16; never printed)</td><td>none: required with a store</td></tr>
 *   <tr><td>{@code kvtier.remote.namespace}</td><td>1 to 128 of {@code [A-Za-z0-9._-]}</td><td>{@value RemoteStoreConfig#DEFAULT_NAMESPACE}</td></tr>
 *   <tr><td>{@code kvtier.remote.write.through}</td><td>{@code on-store}, {@code on-demotion-to-disk}, {@code never}</td><td>on-store</td></tr>
 *   <tr><td>{@code kvtier.remote.max.bytes.in.flight}</td><td>size</td><td>64MiB</td></tr>
 *   <tr><td>{@code kvtier.remote.max.value.bytes}</td><td>size</td><td>64MiB</td></tr>
 *   <tr><td>{@code kvtier.remote.prefill.tokens.per.second}</td><td>number, 0 for no cost gate</td><td>0</td></tr>
 *   <tr><td>{@code kvtier.remote.setting.<name>}</td><td>the store engine's setting {@code <name>} (e.g. a password; never printed)</td><td>none</td></tr>
 * </table>
 * A key that starts with {@code kvtier.} and is not in this table is refused, naming it (a misspelt
 * setting never goes unnoticed); other keys are ignored, so a whole {@code System.getProperties()} may be
 * passed. A bad value is refused with an {@link IllegalArgumentException} naming the key and the value.
 */
public final class KvTierConfig {
    /**
     * Default page size: 64 KiB. Why: large enough that a segment of a few MiB costs few pages (the page
     * tables and the copies' per-page work stay small), small enough that a segment's last page wastes at
     * most 64 KiB, a few KV blocks of a typical model; a multiple of 4096, so every page lies on OS-page
     * boundaries in the mapped DISK extents. Caches of small blocks should use a page of one block.
     */
    public static final int DEFAULT_PAGE_SIZE = 64 << 10;
    /** The smallest page size: pages below 512 bytes cost more metadata than the bytes they hold. */
    public static final int MIN_PAGE_SIZE = 512;
    /**
     * Default CPU budget as a percentage of physical memory: 25%. Why: the CPU tier is pinned host memory on
     * the CUDA backend (never swapped out), so it must leave most of the machine to what else needs memory:
     * the runtime's own heap and loading of model weights, and the page cache through which the DISK tier's
     * mapped extents are read. A quarter holds several times a typical GPU's KV and leaves three quarters.
     * Set {@code cpuBudgetBytes} when the machine is shared or larger offload is wanted.
     */
    public static final int DEFAULT_CPU_BUDGET_SHARE_PERCENT = 25;
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
    private final long diskBudgetBytes;
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
    private final RemoteStoreConfig remote;

    private KvTierConfig(Builder b, long cpuBudgetBytes, long diskBudgetBytes) {
        this.gpuBudgetBytes = b.gpuBudgetBytes;
        this.cpuBudgetBytes = cpuBudgetBytes;
        this.diskBudgetBytes = diskBudgetBytes;
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
        this.remote = b.remote;
    }

    /**
     * A builder with the defaults: no GPU budget (set it), a CPU budget of
     * {@value #DEFAULT_CPU_BUDGET_SHARE_PERCENT}% of physical memory, an unbounded DISK tier in a fresh temporary
     * directory, 64 KiB pages, {@link DemotionPolicy#defaultPolicy()}, AUTO, room made in batches of
     * {@value #DEFAULT_ROOM_BATCH_FRACTION} of a tier.
     *
     * @return a new builder holding the defaults; not thread-safe
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The configuration {@code settings} describe (keys and values in the class comment); unset settings keep
     * their defaults.
     *
     * @param settings {@code kvtier.*} keys and their values, such as {@code kvtier.gpu.budget=64GiB}; not kept
     * @return the configuration built from the settings and the defaults
     * @throws IllegalArgumentException naming the key and the value if one is bad, a {@code kvtier.} key is
     *                                  unknown, or the GPU budget is missing
     */
    public static KvTierConfig from(Map<String, String> settings) {
        return builder().apply(settings).build();
    }

    /**
     * {@link #from(Map)} of {@code properties} (their string keys and values; defaults included).
     *
     * @param properties the properties to read, their defaults included; keys outside {@code kvtier.} are ignored
     * @return the configuration built from the properties and the defaults
     */
    public static KvTierConfig from(Properties properties) {
        return builder().apply(Settings.of(properties)).build();
    }

    /**
     * {@link #from(Map)} of the {@code KVTIER_*} environment variables ({@code KVTIER_GPU_BUDGET=64GiB}).
     *
     * @return the configuration built from the process environment and the defaults
     */
    public static KvTierConfig fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    /**
     * {@link #from(Map)} of the {@code KVTIER_*} variables of {@code environment}: {@code KVTIER_GPU_BUDGET} is
     * {@code kvtier.gpu.budget}. Other variables are ignored, those of other tools that share the prefix (such as
     * {@code KVTIER_CUDART}, which the CUDA probe reads) included, except one whose name is a near miss of a
     * setting's, which is refused naming the setting it looks like.
     *
     * @param environment variable names and values, such as {@link System#getenv()}; not kept
     * @return the configuration built from the {@code KVTIER_*} variables and the defaults
     */
    public static KvTierConfig fromEnvironment(Map<String, String> environment) {
        return builder().apply(Settings.ofEnvironment(environment)).build();
    }

    /**
     * Bytes of segments the GPU tier may hold.
     *
     * @return the GPU budget in bytes, {@code >= 0}
     */
    public long gpuBudgetBytes() {
        return gpuBudgetBytes;
    }

    /**
     * Bytes of segments the CPU (pinned host) tier may hold.
     *
     * @return the CPU budget in bytes, {@code >= 0}, a share already resolved
     */
    public long cpuBudgetBytes() {
        return cpuBudgetBytes;
    }

    /**
     * Bytes of segments the DISK tier may hold; {@link Long#MAX_VALUE} (the default) when unbounded, until the file
     * system is full. When it is full, making room there evicts the policy's candidates from the cache (see
     * {@link KvTierCache}).
     *
     * @return the DISK budget in bytes, {@code > 0}, or {@link Long#MAX_VALUE} when unbounded
     */
    public long diskBudgetBytes() {
        return diskBudgetBytes;
    }

    /**
     * Whether the DISK tier has a budget ({@link #diskBudgetBytes()} is not {@link Long#MAX_VALUE}).
     *
     * @return true when the DISK tier has a budget
     */
    public boolean diskBounded() {
        return diskBudgetBytes != Long.MAX_VALUE;
    }

    /**
     * Where DISK extents are created; empty means a fresh temporary directory, deleted on close.
     *
     * @return the directory given, or empty for a temporary one
     */
    public Optional<Path> diskDirectory() {
        return Optional.ofNullable(diskDirectory);
    }

    /**
     * Page size of every tier.
     *
     * @return the page size in bytes: a multiple of 4096, or a power of two below it
     */
    public int pageSizeBytes() {
        return pageSizeBytes;
    }

    /**
     * Which segments are demoted first to make room.
     *
     * @return the demotion policy, never null
     */
    public DemotionPolicy policy() {
        return policy;
    }

    /**
     * Which backend moves the bytes.
     *
     * @return the backend asked for; {@link Backend#AUTO} lets the open choose
     */
    public Backend backend() {
        return backend;
    }

    /**
     * Bound on bytes of copies started and not finished.
     *
     * @return the bound in bytes, {@code > 0}
     */
    public long maxBytesInFlight() {
        return maxBytesInFlight;
    }

    /**
     * How long one copy (or one batch of copies) may take before it fails; see {@link Builder#transferTimeout}.
     *
     * @return the timeout, positive
     */
    public Duration transferTimeout() {
        return transferTimeout;
    }

    /**
     * Size of each DISK extent file (rounded up to whole pages).
     *
     * @return the extent size in bytes, {@code > 0}
     */
    public long diskExtentBytes() {
        return diskExtentBytes;
    }

    /**
     * Threads copying host memory (the host backend's copies, host-to-host copies of the CUDA backend).
     *
     * @return the number of host copy threads, {@code >= 1}
     */
    public int copyThreads() {
        return copyThreads;
    }

    /**
     * The libcudart to load, if one was given; empty means the default search of {@code CudaRuntime.probe()}.
     *
     * @return the library file given, or empty for the default search
     */
    public Optional<Path> cudaLibrary() {
        return Optional.ofNullable(cudaLibrary);
    }

    /**
     * How the CUDA backend moves DISK bytes to and from the device (ignored by the host backend).
     *
     * @return the mode, never null; {@link DiskTransferMode#AUTO} by default
     */
    public DiskTransferMode diskTransferMode() {
        return diskTransferMode;
    }

    /**
     * Bytes per pinned bounce buffer the CUDA backend stages DISK copies through (ignored by the host backend).
     *
     * @return the size of one bounce buffer in bytes, {@code > 0}
     */
    public long bounceBufferBytes() {
        return bounceBufferBytes;
    }

    /**
     * Pairs of bounce buffers: how many staged copies run at once (ignored by the host backend).
     *
     * @return the number of pairs, {@code >= 1}
     */
    public int bounceBufferPairs() {
        return bounceBufferPairs;
    }

    /**
     * Whether and how the DISK tier outlives the process; empty (the default): it is deleted on close.
     *
     * @return the persistence settings, or empty when the DISK tier lasts only as long as the cache
     */
    public Optional<DiskPersistence> persistence() {
        return Optional.ofNullable(persistence);
    }

    /**
     * The share of a GPU or CPU budget one round of making room frees at least; see {@link
     * Builder#roomBatchFraction}.
     *
     * @return the share, in {@code [0, 0.5]}
     */
    public double roomBatchFraction() {
        return roomBatchFraction;
    }

    /**
     * The remote block store prefix blocks are shared through; empty (the default): none.
     *
     * @return the remote store's settings, or empty when the cache shares no blocks beyond its own tiers
     */
    public Optional<RemoteStoreConfig> remote() {
        return Optional.ofNullable(remote);
    }

    @Override
    public String toString() {
        return "KvTierConfig[gpuBudget=" + gpuBudgetBytes + ", cpuBudget=" + cpuBudgetBytes + ", diskBudget="
                + (diskBounded() ? String.valueOf(diskBudgetBytes) : "unbounded") + ", diskDirectory="
                + (diskDirectory == null ? "(temporary)" : diskDirectory) + ", pageSize=" + pageSizeBytes
                + ", policy=" + policy.name() + ", backend=" + backend + ", maxBytesInFlight=" + maxBytesInFlight
                + ", transferTimeout=" + transferTimeout
                + ", diskExtent=" + diskExtentBytes + ", copyThreads=" + copyThreads
                + ", diskTransferMode=" + diskTransferMode + ", bounceBuffers=" + bounceBufferPairs + "x2x" + bounceBufferBytes
                + ", roomBatchFraction=" + roomBatchFraction
                + (cudaLibrary == null ? "" : ", cudaLibrary=" + cudaLibrary)
                + (persistence == null ? "" : ", persistence=" + persistence)
                + (remote == null ? "" : ", remote=" + remote) + "]";
    }

    /** Mutable builder; not thread-safe. Every setter checks its argument and names it when it is bad. */
    public static final class Builder {
        private long gpuBudgetBytes = -1;
        private long cpuBudgetBytes = -1;
        private double cpuBudgetShare = DEFAULT_CPU_BUDGET_SHARE_PERCENT / 100.0;
        private long diskBudgetBytes = Long.MAX_VALUE;
        private double diskBudgetShare;
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
        private RemoteStoreConfig remote;
        /** The {@code kvtier.remote.*} settings applied so far, built by {@link #build()}. */
        private RemoteStoreConfig.Builder remoteSettings;

        private Builder() {
        }

        /**
         * Shares prefix blocks' bytes through a remote block store (see {@link RemoteStoreConfig}). Replaces the
         * {@code kvtier.remote.*} settings applied before. Default: none.
         *
         * @param remote the remote store's configuration (its store, key and write-through mode)
         * @return this builder
         */
        public Builder remote(RemoteStoreConfig remote) {
            if (remote == null) {
                throw new IllegalArgumentException("remote must not be null");
            }
            this.remote = remote;
            this.remoteSettings = null;
            return this;
        }

        /** The builder the {@code kvtier.remote.*} settings go to. */
        RemoteStoreConfig.Builder remoteSettings() {
            if (remoteSettings == null) {
                remoteSettings = RemoteStoreConfig.builder();
            }
            return remoteSettings;
        }

        /**
         * Bytes of segments the GPU tier may hold, {@code >= 0}; required.
         *
         * @param bytes the GPU budget in bytes, {@code >= 0}
         * @return this builder
         */
        public Builder gpuBudgetBytes(long bytes) {
            this.gpuBudgetBytes = nonNegative(bytes, "gpuBudgetBytes");
            return this;
        }

        /**
         * Bytes of segments the CPU tier may hold, {@code >= 0}. Default {@value #DEFAULT_CPU_BUDGET_SHARE_PERCENT}%
         * of physical memory ({@link #DEFAULT_CPU_BUDGET_SHARE_PERCENT} says why).
         *
         * @param bytes the CPU budget in bytes, {@code >= 0}; replaces a share set before
         * @return this builder
         */
        public Builder cpuBudgetBytes(long bytes) {
            this.cpuBudgetBytes = nonNegative(bytes, "cpuBudgetBytes");
            this.cpuBudgetShare = 0;
            return this;
        }

        /**
         * The CPU budget as a share of the machine's physical memory, in {@code (0, 1]}, resolved by
         * {@link #build()}.
         *
         * @param share the share of physical memory, in {@code (0, 1]}; replaces a byte budget set before
         * @return this builder
         */
        public Builder cpuBudgetShare(double share) {
            this.cpuBudgetShare = share(share, "cpuBudgetShare");
            this.cpuBudgetBytes = -1;
            return this;
        }

        /**
         * Bytes of segments the DISK tier may hold, {@code > 0}. Default: unbounded, until the file system is full.
         * With a budget, a full DISK tier makes room as the faster ones do, except that its victims leave the
         * cache (the policy's order; a prefix chain from its tail).
         *
         * @param bytes the DISK budget in bytes, {@code > 0}; replaces a share set before
         * @return this builder
         */
        public Builder diskBudgetBytes(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("diskBudgetBytes must be > 0, was " + bytes);
            }
            this.diskBudgetBytes = bytes;
            this.diskBudgetShare = 0;
            return this;
        }

        /**
         * The DISK budget as a share, in {@code (0, 1]}, of the total size of the file system that holds the disk
         * directory (of the temporary directory when none is set), resolved by {@link #build()}.
         *
         * @param share the share of the file system's size, in {@code (0, 1]}; replaces a byte budget set before
         * @return this builder
         */
        public Builder diskBudgetShare(double share) {
            this.diskBudgetShare = share(share, "diskBudgetShare");
            this.diskBudgetBytes = Long.MAX_VALUE;
            return this;
        }

        /**
         * Where DISK extents go (created if missing); unset: a fresh temporary directory deleted on close.
         *
         * @param directory the directory, not null; created when the cache opens if missing
         * @return this builder
         */
        public Builder diskDirectory(Path directory) {
            if (directory == null) {
                throw new IllegalArgumentException("diskDirectory must not be null");
            }
            this.diskDirectory = directory;
            return this;
        }

        /**
         * Page size of every tier: a multiple of 4096, or a power of two from {@value #MIN_PAGE_SIZE} to 2048.
         * Why: a multiple of 4096 lies on OS-page boundaries in the mapped DISK extents, and a smaller power of two
         * tiles an OS page exactly (a choice for caches of small blocks, a page per block); any other size would
         * make pages straddle OS pages, so one page read from DISK could cost two page faults. Default
         * {@link #DEFAULT_PAGE_SIZE} (its Javadoc says why).
         *
         * @param bytes the page size in bytes, one of the sizes above
         * @return this builder
         * @throws IllegalArgumentException naming the value and the nearest allowed sizes otherwise
         */
        public Builder pageSizeBytes(int bytes) {
            boolean smallPowerOfTwo = bytes >= MIN_PAGE_SIZE && bytes < 4096 && Integer.bitCount(bytes) == 1;
            if (bytes <= 0 || bytes % 4096 != 0 && !smallPowerOfTwo) {
                throw new IllegalArgumentException("pageSizeBytes must be a multiple of 4096 or a power of two from "
                        + MIN_PAGE_SIZE + " to 2048, was " + bytes + (bytes > 4096 ? " (nearest: " + bytes / 4096 * 4096
                        + " or " + (bytes / 4096 + 1) * 4096 + ")" : ""));
            }
            this.pageSizeBytes = bytes;
            return this;
        }

        /**
         * Which segments are demoted first. Default {@link DemotionPolicy#defaultPolicy()}.
         *
         * @param policy the policy, not null; it may be shared with other caches
         * @return this builder
         */
        public Builder policy(DemotionPolicy policy) {
            if (policy == null) {
                throw new IllegalArgumentException("policy must not be null");
            }
            this.policy = policy;
            return this;
        }

        /**
         * Which backend moves bytes. Default {@link Backend#AUTO}.
         *
         * @param backend the backend, not null
         * @return this builder
         */
        public Builder backend(Backend backend) {
            if (backend == null) {
                throw new IllegalArgumentException("backend must not be null");
            }
            this.backend = backend;
            return this;
        }

        /**
         * Bound on bytes of unfinished copies, {@code > 0}. Default 256 MiB.
         *
         * @param bytes the bound in bytes, {@code > 0}
         * @return this builder
         */
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
         *
         * @param timeout the timeout, positive, not null
         * @return this builder
         */
        public Builder transferTimeout(Duration timeout) {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("transferTimeout must be > 0, was " + timeout);
            }
            this.transferTimeout = timeout;
            return this;
        }

        /**
         * Size of each DISK extent file, {@code > 0}. Default 64 MiB.
         *
         * @param bytes the extent size in bytes, {@code > 0}
         * @return this builder
         */
        public Builder diskExtentBytes(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("diskExtentBytes must be > 0, was " + bytes);
            }
            this.diskExtentBytes = bytes;
            return this;
        }

        /**
         * Host copy threads, {@code >= 1}. Default: the number of cores, between 2 and 4.
         *
         * @param threads the number of threads, {@code >= 1}
         * @return this builder
         */
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
         *
         * @param library the path of the library file, not null; checked when the cache opens
         * @return this builder
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
         *
         * @param mode the mode, not null
         * @return this builder
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
         *
         * @param bytes the size of one bounce buffer in bytes, {@code > 0}
         * @return this builder
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
         *
         * @param pairs the number of pairs, {@code >= 1}
         * @return this builder
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
         *
         * @param persistence the namespace, fsync policy and mismatch choice, not null
         * @return this builder
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
         *
         * @param fraction the share of the budget, in {@code [0, 0.5]}
         * @return this builder
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
         * Applies {@code settings} (keys and values in {@link KvTierConfig}'s class comment) over what this builder
         * holds; unset keys change nothing.
         *
         * @param settings {@code kvtier.*} keys and their values; not kept
         * @return this builder
         * @throws IllegalArgumentException naming the key and the value if one is bad, or a {@code kvtier.} key is
         *                                  unknown (nothing is applied then)
         */
        public Builder apply(Map<String, String> settings) {
            if (settings == null) {
                throw new IllegalArgumentException("settings must not be null");
            }
            Settings.apply(settings, this);
            return this;
        }

        /**
         * The configuration, shares resolved: the CPU budget against the machine's physical memory, the DISK budget
         * against the disk directory's file system.
         *
         * @return a new, immutable configuration; the builder can go on being used
         * @throws IllegalArgumentException if the GPU budget was not set, or persistence was asked without a disk
         *                                  directory
         */
        public KvTierConfig build() {
            if (persistence != null && diskDirectory == null) {
                throw new IllegalArgumentException("persistence " + persistence.namespace() + " needs a diskDirectory:"
                        + " a temporary one is deleted on close");
            }
            if (gpuBudgetBytes < 0) {
                throw new IllegalArgumentException("gpuBudgetBytes must be set");
            }
            if (remoteSettings != null) {
                remote = remoteSettings.build();
                remoteSettings = null;
            }
            long cpuBudget = cpuBudgetBytes >= 0 ? cpuBudgetBytes
                    : (long) (cpuBudgetShare * Settings.physicalMemoryBytes());
            long diskBudget = diskBudgetShare > 0
                    ? Math.max(1, (long) (diskBudgetShare * Settings.fileSystemBytes(diskDirectory))) : diskBudgetBytes;
            return new KvTierConfig(this, cpuBudget, diskBudget);
        }

        private static double share(double share, String name) {
            if (!(share > 0 && share <= 1)) {
                throw new IllegalArgumentException(name + " must be in (0, 1], was " + share);
            }
            return share;
        }

        private static long nonNegative(long value, String name) {
            if (value < 0) {
                throw new IllegalArgumentException(name + " must be >= 0, was " + value);
            }
            return value;
        }
    }
}
