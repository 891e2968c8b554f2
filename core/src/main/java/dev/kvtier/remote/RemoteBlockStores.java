package dev.kvtier.remote;

import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeSet;

/**
 * Opens a {@link RemoteBlockStore} by URI: {@code inprocess:<name>} (built in: an {@link InProcessRemoteBlockStore}
 * shared by name within the JVM, optionally {@code inprocess:<name>?maxBytes=<n>}), or any scheme a
 * {@link RemoteBlockStoreProvider} found by {@link ServiceLoader} supports (on the module path through its
 * {@code provides}, on the class path through {@code META-INF/services}), for example {@code redis://host:6379}
 * with the Redis module present. Stateless and thread-safe.
 */
public final class RemoteBlockStores {
    private RemoteBlockStores() {
    }

    /**
     * Opens the store at {@code uri}.
     *
     * @param uri the store's address
     * @param settings engine settings by name (an in-process store accepts {@code maxBytes}); may be empty
     * @return the open store, owned by the caller
     * @throws IllegalArgumentException if {@code uri} is null, its scheme is one no provider supports (naming the
     *     scheme and the schemes found), or the provider refuses it or a setting
     */
    public static RemoteBlockStore open(URI uri, Map<String, String> settings) {
        if (uri == null) {
            throw new IllegalArgumentException("remote store URI must not be null");
        }
        if (settings == null) {
            throw new IllegalArgumentException("remote store settings must not be null (pass an empty map)");
        }
        if (InProcessRemoteBlockStore.SCHEME.equalsIgnoreCase(uri.getScheme())) {
            return openInProcess(uri, settings);
        }
        List<String> found = new ArrayList<>();
        for (RemoteBlockStoreProvider provider : providers()) {
            if (provider.supports(uri)) {
                return provider.open(uri, settings);
            }
            found.add(provider.getClass().getName());
        }
        throw new IllegalArgumentException("no remote block store supports the scheme '" + uri.getScheme()
                + "' of " + redacted(uri) + "; built in: " + InProcessRemoteBlockStore.SCHEME
                + ", providers found: " + (found.isEmpty() ? "none (add a store module, e.g. kvtier-redis)" : found));
    }

    private static Iterable<RemoteBlockStoreProvider> providers() {
        // The module layer's providers, then the class path's seen through the context loader (an application that
        // is not modular puts the store module on the class path).
        var seen = new TreeSet<String>();
        List<RemoteBlockStoreProvider> all = new ArrayList<>();
        for (ServiceLoader<RemoteBlockStoreProvider> loader : List.of(
                ServiceLoader.load(RemoteBlockStoreProvider.class, RemoteBlockStores.class.getClassLoader()),
                ServiceLoader.load(RemoteBlockStoreProvider.class,
                        Thread.currentThread().getContextClassLoader()))) {
            for (RemoteBlockStoreProvider provider : loader) {
                if (seen.add(provider.getClass().getName())) {
                    all.add(provider);
                }
            }
        }
        return all;
    }

    private static RemoteBlockStore openInProcess(URI uri, Map<String, String> settings) {
        String name = uri.getSchemeSpecificPart();
        Map<String, String> all = new HashMap<>(settings);
        int query = name.indexOf('?');
        if (query >= 0) {
            for (String pair : name.substring(query + 1).split("&")) {
                int equals = pair.indexOf('=');
                if (equals <= 0) {
                    throw new IllegalArgumentException("in-process store URI " + uri
                            + ": query part '" + pair + "' is not name=value");
                }
                all.put(pair.substring(0, equals), pair.substring(equals + 1));
            }
            name = name.substring(0, query);
        }
        long maxBytes = InProcessRemoteBlockStore.UNBOUNDED;
        for (Map.Entry<String, String> setting : all.entrySet()) {
            if (!setting.getKey().equals("maxBytes")) {
                throw new IllegalArgumentException("in-process store " + uri + ": unknown setting '"
                        + setting.getKey() + "' (known: maxBytes)");
            }
            try {
                maxBytes = Long.parseLong(setting.getValue().trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("in-process store " + uri + ": maxBytes must be a whole number"
                        + " of bytes, was '" + setting.getValue() + "'", e);
            }
        }
        return InProcessRemoteBlockStore.named(name, maxBytes);
    }

    /** The longest namespace of block keys, in characters (each one UTF-8 byte). */
    public static final int MAX_NAMESPACE_LENGTH = 128;

    /**
     * What every block key of {@code namespace} starts with, {@code kvtier:<namespace>:} (for {@link #blockKey}: a
     * caller making many keys checks the namespace once). A block's key is at most 168 bytes, far below the SPI's
     * 512.
     *
     * @param namespace the keys' namespace, 1 to {@value #MAX_NAMESPACE_LENGTH} of {@code [A-Za-z0-9._-]}
     * @return {@code kvtier:<namespace>:}, to pass to {@link #blockKey}
     * @throws IllegalArgumentException if {@code namespace} is not valid ({@link #checkNamespace})
     */
    public static String blockKeyPrefix(String namespace) {
        return "kvtier:" + checkNamespace(namespace) + ":";
    }

    /**
     * The key caches store block {@code high}, {@code low} under: {@code prefix} (from {@link #blockKeyPrefix}) and the
     * hash's 32 hex digits.
     *
     * @param prefix what {@link #blockKeyPrefix} returned for the namespace; not checked again here
     * @param high   the high 64 bits of the block's hash
     * @param low    the low 64 bits of the block's hash
     * @return {@code prefix} followed by 32 lowercase hex digits, {@code high}'s then {@code low}'s, each zero-padded
     */
    public static String blockKey(String prefix, long high, long low) {
        return prefix + java.util.HexFormat.of().toHexDigits(high) + java.util.HexFormat.of().toHexDigits(low);
    }

    /**
     * Checks that {@code namespace} can be a namespace of block keys, and hands it back for use in an assignment.
     *
     * @param namespace the namespace to check; null is refused
     * @return {@code namespace}, unchanged
     * @throws IllegalArgumentException naming it unless it is 1 to {@value #MAX_NAMESPACE_LENGTH} of
     *                                  {@code [A-Za-z0-9._-]} (no {@code :}, so keys of two namespaces never meet)
     */
    public static String checkNamespace(String namespace) {
        if (namespace == null || !namespace.matches("[A-Za-z0-9._-]{1," + MAX_NAMESPACE_LENGTH + "}")) {
            throw new IllegalArgumentException("remote namespace must be 1 to " + MAX_NAMESPACE_LENGTH
                    + " of [A-Za-z0-9._-], was " + namespace);
        }
        return namespace;
    }

    /** {@code uri} without its user info, for error messages (a password may be in it). */
    static String redacted(URI uri) {
        if (uri.getRawUserInfo() == null) {
            return uri.toString();
        }
        return uri.toString().replace(uri.getRawUserInfo() + "@", "***@");
    }
}
