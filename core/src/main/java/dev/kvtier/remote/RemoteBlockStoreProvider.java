package dev.kvtier.remote;

import java.net.URI;
import java.util.Map;

/**
 * Opens {@link RemoteBlockStore}s for the URI schemes it knows (a {@link java.util.ServiceLoader} service: an engine's
 * module {@code provides} it, so configuration names a store by URI alone, e.g. {@code redis://host:6379}).
 * Implementations are stateless and thread-safe.
 */
public interface RemoteBlockStoreProvider {

    /**
     * Whether this provider opens stores for {@code uri}'s scheme.
     *
     * @param uri the store's address as configured
     * @return true if {@link #open} accepts it
     */
    boolean supports(URI uri);

    /**
     * Opens a store at {@code uri}.
     *
     * @param uri the store's address as configured (credentials may be in it or in {@code settings})
     * @param settings engine-specific settings by name (for example a password or a TLS switch); unknown names are
     *     an {@link IllegalArgumentException} naming them
     * @return the open store, owned by the caller, who closes it
     * @throws IllegalArgumentException if {@code uri} or a setting is invalid, naming it
     */
    RemoteBlockStore open(URI uri, Map<String, String> settings);
}
