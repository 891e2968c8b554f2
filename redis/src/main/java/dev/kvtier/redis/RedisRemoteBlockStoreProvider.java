package dev.kvtier.redis;

import dev.kvtier.remote.RemoteBlockStore;
import dev.kvtier.remote.RemoteBlockStoreProvider;

import java.net.URI;
import java.util.Locale;
import java.util.Map;

/**
 * Opens a {@link RedisRemoteBlockStore} for {@code redis://}, {@code rediss://}, {@code redis-cluster://} and
 * {@code rediss-cluster://} URIs: found by core's {@code RemoteBlockStores} through {@link java.util.ServiceLoader}
 * (this module's {@code provides} on the module path, {@code META-INF/services} on the class path). Stateless and
 * thread-safe.
 */
public final class RedisRemoteBlockStoreProvider implements RemoteBlockStoreProvider {

    /** The instance {@link java.util.ServiceLoader} makes; holds nothing. */
    public RedisRemoteBlockStoreProvider() {
    }

    @Override
    public boolean supports(URI uri) {
        return uri != null && uri.getScheme() != null
                && RedisStoreSettings.SCHEMES.contains(uri.getScheme().toLowerCase(Locale.ROOT));
    }

    /** {@link RedisRemoteBlockStore#open(URI, Map)}. */
    @Override
    public RemoteBlockStore open(URI uri, Map<String, String> settings) {
        return RedisRemoteBlockStore.open(uri, settings);
    }
}
