package dev.kvtier.redis;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a {@link RedisRemoteBlockStore} connects to and how, parsed and checked from a URI and settings by name. Every
 * refusal is an {@link IllegalArgumentException} naming the bad value (never the password). Immutable.
 *
 * <p>URIs: {@code redis://[user[:password]@]host[:port]}, {@code rediss://...} (TLS), {@code redis-cluster://
 * [user[:password]@]host1:port1,host2:port2,...} and {@code rediss-cluster://...} (seed nodes of a Redis Cluster).
 * Settings (all optional; a setting wins over the URI): see the constants below.
 */
final class RedisStoreSettings {
    private final List<Endpoint> endpoints;
    private final boolean cluster;
    private final boolean tls;
    private final TlsVerify tlsVerify;
    private final Path tlsCaFile;
    private final String user;
    private final char[] password;
    private final Duration commandTimeout;
    private final Duration connectTimeout;
    private final long maxValueBytes;
    private final int ioThreads;

    static final String USER = "user";
    static final String PASSWORD = "password";
    static final String TLS = "tls";
    static final String TLS_VERIFY = "tlsVerify";
    static final String TLS_CA_FILE = "tlsCaFile";
    static final String COMMAND_TIMEOUT_MS = "commandTimeoutMs";
    static final String CONNECT_TIMEOUT_MS = "connectTimeoutMs";
    static final String MAX_VALUE_BYTES = "maxValueBytes";
    static final String IO_THREADS = "ioThreads";
    static final Set<String> KNOWN = Set.of(USER, PASSWORD, TLS, TLS_VERIFY, TLS_CA_FILE, COMMAND_TIMEOUT_MS,
            CONNECT_TIMEOUT_MS, MAX_VALUE_BYTES, IO_THREADS);

    static final int DEFAULT_PORT = 6379;
    static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(1);
    static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);
    /** 64 MiB: above any block kvtier stores (4 MiB blocks and their header are far below). */
    static final long DEFAULT_MAX_VALUE_BYTES = 64L << 20;
    /** Redis refuses strings above 512 MiB; GETRANGE's end index is an int on the server. */
    static final long LARGEST_MAX_VALUE_BYTES = 512L << 20;

    /** The URI schemes this module opens. */
    static final Set<String> SCHEMES = Set.of("redis", "rediss", "redis-cluster", "rediss-cluster");

    /** How a TLS connection checks the server: host name and chain ({@code full}), chain only, or not at all. */
    enum TlsVerify { FULL, CA, NONE }

    /** One server address. */
    static final class Endpoint {
        private final String host;
        private final int port;

        Endpoint(String host, int port) {
            this.host = host;
            this.port = port;
        }

        String host() {
            return host;
        }

        int port() {
            return port;
        }

        @Override
        public String toString() {
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        }
    }

    // Java 11 syntax in this file, RedisRemoteBlockStore and the provider: the module descriptor compiles for release
    // 11 with the sources patched in, and its "provides" makes javac read these three.
    private RedisStoreSettings(List<Endpoint> endpoints, boolean cluster, boolean tls, TlsVerify tlsVerify,
                               Path tlsCaFile, String user, char[] password, Duration commandTimeout,
                               Duration connectTimeout, long maxValueBytes, int ioThreads) {
        this.endpoints = endpoints;
        this.cluster = cluster;
        this.tls = tls;
        this.tlsVerify = tlsVerify;
        this.tlsCaFile = tlsCaFile;
        this.user = user;
        this.password = password;
        this.commandTimeout = commandTimeout;
        this.connectTimeout = connectTimeout;
        this.maxValueBytes = maxValueBytes;
        this.ioThreads = ioThreads;
    }

    List<Endpoint> endpoints() {
        return endpoints;
    }

    boolean cluster() {
        return cluster;
    }

    boolean tls() {
        return tls;
    }

    TlsVerify tlsVerify() {
        return tlsVerify;
    }

    Path tlsCaFile() {
        return tlsCaFile;
    }

    String user() {
        return user;
    }

    char[] password() {
        return password;
    }

    Duration commandTimeout() {
        return commandTimeout;
    }

    Duration connectTimeout() {
        return connectTimeout;
    }

    long maxValueBytes() {
        return maxValueBytes;
    }

    int ioThreads() {
        return ioThreads;
    }

    static RedisStoreSettings parse(URI uri, Map<String, String> settings) {
        if (uri == null) {
            throw new IllegalArgumentException("Redis store URI must not be null");
        }
        if (settings == null) {
            throw new IllegalArgumentException("Redis store settings must not be null (pass an empty map)");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!SCHEMES.contains(scheme)) {
            throw new IllegalArgumentException("Redis store URI " + redacted(uri) + ": scheme '" + uri.getScheme()
                    + "' is not one of " + new TreeSet<>(SCHEMES));
        }
        Set<String> unknown = new TreeSet<>(settings.keySet());
        unknown.removeAll(KNOWN);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown Redis store setting(s) " + unknown + "; known: "
                    + new TreeSet<>(KNOWN));
        }
        boolean cluster = scheme.endsWith("-cluster");
        String authority = uri.getRawAuthority();
        if (authority == null || authority.isEmpty()) {
            throw new IllegalArgumentException("Redis store URI " + redacted(uri) + " names no host");
        }
        String path = uri.getRawPath();
        if ((path != null && !path.isEmpty() && !path.equals("/")) || uri.getRawQuery() != null
                || uri.getRawFragment() != null) {
            throw new IllegalArgumentException("Redis store URI " + redacted(uri)
                    + ": a database number, query or fragment is not supported (keys are namespaced by kvtier; put"
                    + " settings in the settings map)");
        }
        String user = null;
        char[] password = null;
        int at = authority.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = authority.substring(0, at);
            authority = authority.substring(at + 1);
            int colon = userInfo.indexOf(':');
            if (colon < 0) {
                password = decode(userInfo).toCharArray(); // redis://secret@host: a password, as redis-cli takes it
            } else {
                String name = decode(userInfo.substring(0, colon));
                user = name.isEmpty() ? null : name;
                password = decode(userInfo.substring(colon + 1)).toCharArray();
            }
        }
        List<Endpoint> endpoints = new ArrayList<>();
        for (String hostPort : authority.split(",", -1)) {
            endpoints.add(endpoint(uri, hostPort));
        }
        if (!cluster && endpoints.size() != 1) {
            throw new IllegalArgumentException("Redis store URI " + redacted(uri) + " names " + endpoints.size()
                    + " hosts; a standalone server has one (use redis-cluster:// for a Redis Cluster's seed nodes)");
        }
        if (settings.containsKey(USER)) {
            user = settings.get(USER).isEmpty() ? null : settings.get(USER);
        }
        if (settings.containsKey(PASSWORD)) {
            password = settings.get(PASSWORD).toCharArray();
        }
        if (user != null && password == null) {
            throw new IllegalArgumentException("Redis store setting " + USER + "='" + user + "' without a password");
        }
        boolean tls = scheme.startsWith("rediss");
        if (settings.containsKey(TLS)) {
            tls = bool(TLS, settings.get(TLS));
        }
        TlsVerify verify = TlsVerify.FULL;
        if (settings.containsKey(TLS_VERIFY)) {
            try {
                verify = TlsVerify.valueOf(settings.get(TLS_VERIFY).toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("Redis store setting " + TLS_VERIFY + "='" + settings.get(TLS_VERIFY)
                        + "' is not one of full, ca, none", e);
            }
        }
        Path caFile = null;
        if (settings.containsKey(TLS_CA_FILE)) {
            caFile = Path.of(settings.get(TLS_CA_FILE));
            if (!Files.isReadable(caFile)) {
                throw new IllegalArgumentException("Redis store setting " + TLS_CA_FILE + "='" + caFile
                        + "' is not a readable file");
            }
        }
        if (!tls && (settings.containsKey(TLS_VERIFY) || caFile != null)) {
            throw new IllegalArgumentException("Redis store settings " + TLS_VERIFY + "/" + TLS_CA_FILE
                    + " given without TLS (use rediss:// or " + TLS + "=true)");
        }
        Duration commandTimeout = millis(settings, COMMAND_TIMEOUT_MS, DEFAULT_COMMAND_TIMEOUT);
        Duration connectTimeout = millis(settings, CONNECT_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT);
        long maxValueBytes = number(settings, MAX_VALUE_BYTES, DEFAULT_MAX_VALUE_BYTES, 1, LARGEST_MAX_VALUE_BYTES);
        int ioThreads = (int) number(settings, IO_THREADS, 2, 1, 64);
        return new RedisStoreSettings(List.copyOf(endpoints), cluster, tls, verify, caFile, user, password,
                commandTimeout, connectTimeout, maxValueBytes, ioThreads);
    }

    /** Where the store is, without credentials: {@code redis://host:port} or {@code redis-cluster://h1:p1,h2:p2}. */
    String describe() {
        StringBuilder text = new StringBuilder(tls ? "rediss" : "redis").append(cluster ? "-cluster://" : "://");
        for (int i = 0; i < endpoints.size(); i++) {
            text.append(i == 0 ? "" : ",").append(endpoints.get(i));
        }
        return user == null ? text.toString() : text + " (user " + user + ")";
    }

    /** {@code uri} without its user information, for messages. */
    static String redacted(URI uri) {
        String text = uri.toString();
        String authority = uri.getRawAuthority();
        if (authority != null && authority.indexOf('@') >= 0) {
            text = text.replace(authority, "***@" + authority.substring(authority.lastIndexOf('@') + 1));
        }
        return text;
    }

    private static Endpoint endpoint(URI uri, String hostPort) {
        String host;
        String port = null;
        if (hostPort.startsWith("[")) {
            int close = hostPort.indexOf(']');
            if (close < 0) {
                throw new IllegalArgumentException("Redis store URI " + redacted(uri) + ": bad host '" + hostPort
                        + "'");
            }
            host = hostPort.substring(1, close);
            if (close + 1 < hostPort.length()) {
                if (hostPort.charAt(close + 1) != ':') {
                    throw new IllegalArgumentException("Redis store URI " + redacted(uri) + ": bad host '" + hostPort
                            + "'");
                }
                port = hostPort.substring(close + 2);
            }
        } else {
            int colon = hostPort.lastIndexOf(':');
            host = colon < 0 ? hostPort : hostPort.substring(0, colon);
            port = colon < 0 ? null : hostPort.substring(colon + 1);
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("Redis store URI " + redacted(uri) + ": empty host in '" + hostPort
                    + "'");
        }
        int number = DEFAULT_PORT;
        if (port != null) {
            try {
                number = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                number = -1;
            }
            if (number < 1 || number > 65535) {
                throw new IllegalArgumentException("Redis store URI " + redacted(uri) + ": port '" + port + "' of '"
                        + hostPort + "' is not in 1..65535");
            }
        }
        return new Endpoint(host, number);
    }

    private static String decode(String text) {
        return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    private static boolean bool(String name, String value) {
        if ("true".equalsIgnoreCase(value)) {
            return true;
        }
        if ("false".equalsIgnoreCase(value)) {
            return false;
        }
        throw new IllegalArgumentException("Redis store setting " + name + "='" + value + "' is not true or false");
    }

    private static Duration millis(Map<String, String> settings, String name, Duration otherwise) {
        return settings.containsKey(name)
                ? Duration.ofMillis(number(settings, name, 0, 1, Duration.ofHours(1).toMillis())) : otherwise;
    }

    private static long number(Map<String, String> settings, String name, long otherwise, long least, long most) {
        String text = settings.get(name);
        if (text == null) {
            return otherwise;
        }
        long value;
        try {
            value = Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Redis store setting " + name + "='" + text + "' is not a number", e);
        }
        if (value < least || value > most) {
            throw new IllegalArgumentException("Redis store setting " + name + "=" + value + " is not in " + least
                    + ".." + most);
        }
        return value;
    }

    @Override
    public String toString() {
        return describe(); // never the password
    }
}
