package dev.kvtier.redis;

import dev.kvtier.remote.RemoteBlockStoreProvider;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** URIs and settings: what is accepted, and every refusal naming the bad value but never the password. */
class RedisStoreSettingsTest {

    private static RedisStoreSettings parse(String uri, Map<String, String> settings) {
        return RedisStoreSettings.parse(URI.create(uri), settings);
    }

    private static String refusal(String uri, Map<String, String> settings) {
        return assertThrows(IllegalArgumentException.class, () -> parse(uri, settings)).getMessage();
    }

    @Test
    void aStandaloneUriWithUserAndPassword() {
        RedisStoreSettings settings = parse("redis://kvtier:s%40cret@10.0.0.5:6380", Map.of());
        assertEquals(List.of(new RedisStoreSettings.Endpoint("10.0.0.5", 6380)).toString(),
                settings.endpoints().toString());
        assertFalse(settings.cluster());
        assertFalse(settings.tls());
        assertEquals("kvtier", settings.user());
        assertArrayEquals("s@cret".toCharArray(), settings.password());
        assertEquals("redis://10.0.0.5:6380 (user kvtier)", settings.describe());
        assertEquals(RedisStoreSettings.DEFAULT_MAX_VALUE_BYTES, settings.maxValueBytes());
    }

    @Test
    void aClusterUriNamesItsSeedsAndTlsComesFromTheSchemeOrTheSetting() {
        RedisStoreSettings cluster = parse("rediss-cluster://h1:7000,h2:7001,h3:7002",
                Map.of("tlsVerify", "ca", "commandTimeoutMs", "250"));
        assertTrue(cluster.cluster());
        assertTrue(cluster.tls());
        assertEquals(RedisStoreSettings.TlsVerify.CA, cluster.tlsVerify());
        assertEquals("rediss-cluster://h1:7000,h2:7001,h3:7002", cluster.describe());
        assertEquals(250, cluster.commandTimeout().toMillis());
        assertTrue(parse("redis://h", Map.of("tls", "true")).tls());
        assertEquals(6379, parse("redis://h", Map.of()).endpoints().get(0).port());
    }

    @Test
    void everyRefusalNamesTheBadValueAndNeverThePassword() {
        String unknown = refusal("redis://h:1", Map.of("pasword", "x"));
        assertTrue(unknown.contains("pasword") && unknown.contains("password"), unknown);
        assertTrue(refusal("memcached://h:1", Map.of()).contains("memcached"));
        assertTrue(refusal("redis://h:99999", Map.of()).contains("99999"));
        assertTrue(refusal("redis://h1:1,h2:2", Map.of()).contains("redis-cluster://"));
        assertTrue(refusal("redis://h:1/3", Map.of()).contains("database"));
        assertTrue(refusal("redis://h:1", Map.of("maxValueBytes", "0")).contains("maxValueBytes"));
        assertTrue(refusal("redis://h:1", Map.of("commandTimeoutMs", "soon")).contains("soon"));
        assertTrue(refusal("redis://h:1", Map.of("tls", "yes")).contains("yes"));
        assertTrue(refusal("redis://h:1", Map.of("tlsVerify", "full")).contains("without TLS"));
        assertTrue(refusal("rediss://h:1", Map.of("tlsVerify", "loose")).contains("loose"));
        assertTrue(refusal("rediss://h:1", Map.of("tlsCaFile", "/no/such/ca.pem")).contains("/no/such/ca.pem"));
        assertTrue(refusal("redis://h:1", Map.of("user", "kvtier")).contains("without a password"));
        String withSecret = refusal("redis://kvtier:topsecret@h:1/2", Map.of());
        assertFalse(withSecret.contains("topsecret"), withSecret);
        assertTrue(withSecret.contains("***@h:1"), withSecret);
        assertFalse(parse("redis://kvtier:topsecret@h:1", Map.of()).toString().contains("topsecret"));
    }

    @Test
    void theProviderIsFoundByServiceLoaderAndSupportsTheFourSchemes() {
        RemoteBlockStoreProvider found = null;
        for (RemoteBlockStoreProvider provider : ServiceLoader.load(RemoteBlockStoreProvider.class)) {
            if (provider instanceof RedisRemoteBlockStoreProvider) {
                found = provider;
            }
        }
        assertTrue(found != null, "META-INF/services does not name RedisRemoteBlockStoreProvider");
        for (String uri : List.of("redis://h", "rediss://h", "redis-cluster://h1:1,h2:2", "REDISS-CLUSTER://h:1")) {
            assertTrue(found.supports(URI.create(uri)), uri);
        }
        assertFalse(found.supports(URI.create("inprocess:x")));
        RemoteBlockStoreProvider provider = found;
        assertThrows(IllegalArgumentException.class, () -> provider.open(URI.create("redis://h:1"),
                Map.of("nonsense", "1")));
    }
}
