package dev.kvtier;

import dev.kvtier.remote.RemoteBlockStore;
import dev.kvtier.remote.RemoteBlockStores;

import java.net.URI;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * How a cache shares its prefix blocks' bytes through a {@link RemoteBlockStore} ({@link KvTierConfig#remote()}):
 * which store, when blocks are written to it, the key values are signed with, the namespace keys are in, and the
 * bounds of the traffic. Immutable and thread-safe; build with {@link #builder()} or through the
 * {@code kvtier.remote.*} settings of {@link KvTierConfig#from(Map)}. The HMAC key and the engine settings (which may
 * hold a password) are never printed: {@link #toString()} shows neither.
 */
public final class RemoteStoreConfig {
    /** Default bound on bytes queued or in flight to the store: 64 MiB. */
    public static final long DEFAULT_MAX_BYTES_IN_FLIGHT = 64L << 20;
    /** Default largest value accepted from the store: 64 MiB (a block, its header and signature). */
    public static final long DEFAULT_MAX_VALUE_BYTES = 64L << 20;
    /** Default namespace of the keys. */
    public static final String DEFAULT_NAMESPACE = "default";
    /** The shortest HMAC key, in bytes: 128 bits. */
    public static final int MIN_KEY_BYTES = 16;

    /** When a block's bytes are written to the store. */
    public enum WriteThrough {
        /** When the block is stored ({@code PrefixBlockCache.storeBlocks}): every block is shared at once. */
        ON_STORE,
        /** When the block is demoted to DISK: only blocks about to leave the fast tiers are shared. */
        ON_DEMOTION_TO_DISK,
        /** Never: the cache only reads the store (other caches write it). */
        NEVER
    }

    private final RemoteBlockStore store;
    private final URI storeUri;
    private final Map<String, String> storeSettings;
    private final WriteThrough writeThrough;
    private final byte[] key;
    private final String namespace;
    private final long maxBytesInFlight;
    private final long maxValueBytes;
    private final double prefillTokensPerSecond;

    private RemoteStoreConfig(Builder b) {
        this.store = b.store;
        this.storeUri = b.storeUri;
        this.storeSettings = Map.copyOf(b.storeSettings);
        this.writeThrough = b.writeThrough;
        this.key = b.key.clone();
        this.namespace = b.namespace;
        this.maxBytesInFlight = b.maxBytesInFlight;
        this.maxValueBytes = b.maxValueBytes;
        this.prefillTokensPerSecond = b.prefillTokensPerSecond;
    }

    /**
     * A builder: no store and no key (set both), write-through on store, the defaults above, no cost gate.
     *
     * @return a new builder, owned by the caller (not thread-safe)
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The store given as an instance (the caller's: the cache never closes it); empty when given by URI.
     *
     * @return the caller's open store, or empty when {@link #storeUri()} is set instead; exactly one of the two is
     *     present
     */
    public Optional<RemoteBlockStore> store() {
        return Optional.ofNullable(store);
    }

    /**
     * The store's URI, opened by the cache (and closed with it); empty when given as an instance.
     *
     * @return the URI, with a scheme, that the cache opens through {@link RemoteBlockStores#open}, or empty when
     *     {@link #store()} is set instead
     */
    public Optional<URI> storeUri() {
        return Optional.ofNullable(storeUri);
    }

    /**
     * The engine's settings passed to its provider when the store is opened by URI (may hold secrets).
     *
     * @return an unmodifiable map of setting name to value, never null; empty when none were set (and unused when
     *     the store is given as an instance)
     */
    public Map<String, String> storeSettings() {
        return storeSettings;
    }

    /**
     * When blocks are written to the store.
     *
     * @return the write-through mode, never null; {@link WriteThrough#ON_STORE} unless set
     */
    public WriteThrough writeThrough() {
        return writeThrough;
    }

    /**
     * A copy of the HMAC-SHA256 key values are signed and checked with.
     *
     * @return a fresh copy of the key, at least {@value #MIN_KEY_BYTES} bytes, the caller's to keep or wipe
     *     (changing it changes nothing here)
     */
    public byte[] key() {
        return key.clone();
    }

    /**
     * The namespace the keys are in: caches of one model and deployment share it, others never see its blocks.
     *
     * @return the namespace, 1 to {@value RemoteBlockStores#MAX_NAMESPACE_LENGTH} of {@code [A-Za-z0-9._-]};
     *     {@value #DEFAULT_NAMESPACE} unless set
     */
    public String namespace() {
        return namespace;
    }

    /**
     * Bound on bytes of writes queued or in flight; a write past it is dropped (counted).
     *
     * @return the bound in bytes, {@code > 0}; {@link #DEFAULT_MAX_BYTES_IN_FLIGHT} unless set
     */
    public long maxBytesInFlight() {
        return maxBytesInFlight;
    }

    /**
     * The largest value accepted from the store; a larger one is rejected unread.
     *
     * @return the limit in bytes, in {@code (0, Integer.MAX_VALUE]}; {@link #DEFAULT_MAX_VALUE_BYTES} unless set
     */
    public long maxValueBytes() {
        return maxValueBytes;
    }

    /**
     * Tokens per second the runtime prefills, for the cost gate: remote blocks are fetched only when fetching them is
     * estimated faster than recomputing them at this rate. 0: no gate, remote blocks are always fetched.
     *
     * @return the rate in tokens per second, finite and {@code >= 0}; 0 unless set
     */
    public double prefillTokensPerSecond() {
        return prefillTokensPerSecond;
    }

    @Override
    public String toString() {
        return "RemoteStoreConfig[store=" + (store != null ? store.describe() : redacted(storeUri))
                + (storeSettings.isEmpty() ? "" : ", settings=" + new TreeMap<>(storeSettings).keySet())
                + ", writeThrough=" + writeThrough + ", namespace=" + namespace
                + ", maxBytesInFlight=" + maxBytesInFlight + ", maxValueBytes=" + maxValueBytes
                + ", prefillTokensPerSecond=" + prefillTokensPerSecond + ", key=(" + key.length + " bytes)]";
    }

    private static String redacted(URI uri) {
        return uri.getRawUserInfo() == null ? uri.toString() : uri.toString().replace(uri.getRawUserInfo() + "@", "***@");
    }

    /** Mutable builder; not thread-safe. Every setter checks its argument and names it when it is bad. */
    public static final class Builder {
        private RemoteBlockStore store;
        private URI storeUri;
        private final Map<String, String> storeSettings = new TreeMap<>();
        private WriteThrough writeThrough = WriteThrough.ON_STORE;
        private byte[] key;
        private String namespace = DEFAULT_NAMESPACE;
        private long maxBytesInFlight = DEFAULT_MAX_BYTES_IN_FLIGHT;
        private long maxValueBytes = DEFAULT_MAX_VALUE_BYTES;
        private double prefillTokensPerSecond;

        private Builder() {
        }

        /**
         * The store, opened by the caller, who closes it after the cache. Replaces a URI set before.
         *
         * @param store the open store; stays the caller's (the cache never closes it); not null
         * @return this builder
         * @throws IllegalArgumentException if {@code store} is null
         */
        public Builder store(RemoteBlockStore store) {
            if (store == null) {
                throw new IllegalArgumentException("store must not be null");
            }
            this.store = store;
            this.storeUri = null;
            return this;
        }

        /**
         * The store's URI ({@code redis://host:6379}, {@code inprocess:name}; see
         * {@link dev.kvtier.remote.RemoteBlockStores#open}), opened when the cache opens and closed with it. Replaces
         * an instance set before.
         *
         * @param uri the store's address; must have a scheme (its provider is looked up only when the cache opens)
         * @return this builder
         * @throws IllegalArgumentException if {@code uri} is null or has no scheme
         */
        public Builder store(URI uri) {
            if (uri == null || uri.getScheme() == null) {
                throw new IllegalArgumentException("store URI must have a scheme, was " + uri);
            }
            this.storeUri = uri;
            this.store = null;
            return this;
        }

        /**
         * One engine setting passed to the store's provider (for example a password). Replaces a value set before
         * under {@code name}; used only when the store is given by URI.
         *
         * @param name  the setting's name, as the provider knows it; not null or blank
         * @param value its value, kept as given and never printed; not null (may be empty)
         * @return this builder
         * @throws IllegalArgumentException if {@code name} is null or blank, or {@code value} is null
         */
        public Builder storeSetting(String name, String value) {
            if (name == null || name.isBlank() || value == null) {
                throw new IllegalArgumentException("store setting name and value must not be null or blank, was "
                        + name);
            }
            storeSettings.put(name, value);
            return this;
        }

        /**
         * When blocks are written to the store. Default {@link WriteThrough#ON_STORE}.
         *
         * @param mode the write-through mode; not null
         * @return this builder
         * @throws IllegalArgumentException if {@code mode} is null
         */
        public Builder writeThrough(WriteThrough mode) {
            if (mode == null) {
                throw new IllegalArgumentException("writeThrough must not be null");
            }
            this.writeThrough = mode;
            return this;
        }

        /**
         * The deployment's HMAC-SHA256 key, at least {@value #MIN_KEY_BYTES} bytes (copied); required. Every cache
         * sharing a namespace uses the same key; a value signed with another is never served.
         *
         * @param key the key's bytes; copied, so the caller may wipe its array afterwards
         * @return this builder
         * @throws IllegalArgumentException if {@code key} is null or shorter than {@value #MIN_KEY_BYTES} bytes (the
         *                                  message gives the length, never the key)
         */
        public Builder key(byte[] key) {
            if (key == null || key.length < MIN_KEY_BYTES) {
                // The length only: the key itself is never printed.
                throw new IllegalArgumentException("the remote store's HMAC key must have at least " + MIN_KEY_BYTES
                        + " bytes, had " + (key == null ? "none" : key.length));
            }
            this.key = key.clone();
            return this;
        }

        /**
         * The keys' namespace: 1 to 128 of {@code [A-Za-z0-9._-]}. Default {@value #DEFAULT_NAMESPACE}.
         *
         * @param namespace the namespace every cache of one model and deployment shares
         * @return this builder
         * @throws IllegalArgumentException naming {@code namespace} if it is null or not 1 to
         *                                  {@value RemoteBlockStores#MAX_NAMESPACE_LENGTH} of {@code [A-Za-z0-9._-]}
         */
        public Builder namespace(String namespace) {
            this.namespace = RemoteBlockStores.checkNamespace(namespace);
            return this;
        }

        /**
         * Bound on bytes of queued and unfinished writes, {@code > 0}. Default 64 MiB.
         *
         * @param bytes the bound in bytes; a write that would pass it is dropped and counted
         *              ({@link RemoteStoreStats#writesDropped()})
         * @return this builder
         * @throws IllegalArgumentException if {@code bytes <= 0}
         */
        public Builder maxBytesInFlight(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("remote maxBytesInFlight must be > 0, was " + bytes);
            }
            this.maxBytesInFlight = bytes;
            return this;
        }

        /**
         * The largest value accepted, {@code > 0} (at most 2 GiB). Default 64 MiB.
         *
         * @param bytes the limit in bytes on one value read from the store (a block, its header and signature)
         * @return this builder
         * @throws IllegalArgumentException if {@code bytes} is not in {@code (0, Integer.MAX_VALUE]}
         */
        public Builder maxValueBytes(long bytes) {
            if (bytes <= 0 || bytes > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("remote maxValueBytes must be in (0, 2 GiB), was " + bytes);
            }
            this.maxValueBytes = bytes;
            return this;
        }

        /**
         * The runtime's prefill rate in tokens per second for the cost gate, {@code >= 0}; 0 (default): no gate.
         *
         * @param tokensPerSecond how many tokens per second the runtime prefills; the gate fetches remote blocks only
         *                        when that is estimated faster than recomputing them at this rate
         * @return this builder
         * @throws IllegalArgumentException if {@code tokensPerSecond} is negative, NaN or infinite
         */
        public Builder prefillTokensPerSecond(double tokensPerSecond) {
            if (!(tokensPerSecond >= 0) || Double.isInfinite(tokensPerSecond)) {
                throw new IllegalArgumentException("prefillTokensPerSecond must be >= 0 and finite, was "
                        + tokensPerSecond);
            }
            this.prefillTokensPerSecond = tokensPerSecond;
            return this;
        }

        /**
         * Builds the configuration from the values set so far; the builder can be changed and built again.
         *
         * @return an immutable configuration, holding its own copies of the key and settings
         * @throws IllegalArgumentException if no store or no key was set: a shared store without a key would serve
         *                                  whatever anyone wrote there
         */
        public RemoteStoreConfig build() {
            if (store == null && storeUri == null) {
                throw new IllegalArgumentException("a remote store must be set (kvtier.remote.store)");
            }
            if (key == null) {
                throw new IllegalArgumentException("a remote store needs an HMAC key (kvtier.remote.key): values are"
                        + " signed so that none written without it is ever served");
            }
            return new RemoteStoreConfig(this);
        }
    }
}
