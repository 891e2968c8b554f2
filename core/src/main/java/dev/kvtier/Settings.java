package dev.kvtier;

import dev.kvtier.store.DemotionPolicy;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The settings of {@link KvTierConfig#from(Map)}: one key per builder setter, each with the parser of its
 * value, and the lookups of what shares are shares of. Stateless.
 */
final class Settings {
    /** The prefix every setting's key has; the environment's spelling of it is {@code KVTIER_}. */
    static final String PREFIX = "kvtier.";
    private static final String ENVIRONMENT_PREFIX = "KVTIER_";
    /** The remote store's HMAC key: never printed, not even in the message refusing it. */
    static final String REMOTE_KEY = "kvtier.remote.key";
    /** {@code kvtier.remote.setting.<name>} passes {@code <name>} to the remote store's provider (values never printed). */
    static final String REMOTE_SETTING_PREFIX = "kvtier.remote.setting.";
    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h)");

    /** Every key and how its value is applied to a builder, in the order of the class comment's table. */
    private static final Map<String, BiConsumer<KvTierConfig.Builder, String>> KEYS = keys();

    private Settings() {
    }

    private static Map<String, BiConsumer<KvTierConfig.Builder, String>> keys() {
        Map<String, BiConsumer<KvTierConfig.Builder, String>> keys = new LinkedHashMap<>();
        keys.put("kvtier.gpu.budget", (b, v) -> {
            if (ByteSizes.isShare(v)) {
                throw new IllegalArgumentException("a GPU budget must be a size: the device's memory is known only once"
                        + " it is opened, and what the runtime's weights and activations leave free only the runtime knows");
            }
            b.gpuBudgetBytes(ByteSizes.parse(v));
        });
        keys.put("kvtier.cpu.budget", (b, v) -> {
            if (ByteSizes.isShare(v)) {
                b.cpuBudgetShare(ByteSizes.parseShare(v));
            } else {
                b.cpuBudgetBytes(ByteSizes.parse(v));
            }
        });
        keys.put("kvtier.disk.budget", (b, v) -> {
            if (ByteSizes.isShare(v)) {
                b.diskBudgetShare(ByteSizes.parseShare(v));
            } else {
                b.diskBudgetBytes(ByteSizes.parse(v));
            }
        });
        keys.put("kvtier.disk.directory", (b, v) -> b.diskDirectory(path(v)));
        keys.put("kvtier.page.size", (b, v) -> b.pageSizeBytes(intSize(v)));
        keys.put("kvtier.policy", (b, v) -> b.policy(DemotionPolicy.named(v.strip())));
        keys.put("kvtier.backend", (b, v) -> b.backend(choice(Backend.class, v)));
        keys.put("kvtier.max.bytes.in.flight", (b, v) -> b.maxBytesInFlight(ByteSizes.parse(v)));
        keys.put("kvtier.transfer.timeout", (b, v) -> b.transferTimeout(duration(v)));
        keys.put("kvtier.disk.extent.size", (b, v) -> b.diskExtentBytes(ByteSizes.parse(v)));
        keys.put("kvtier.copy.threads", (b, v) -> b.copyThreads(integer(v)));
        keys.put("kvtier.cuda.library", (b, v) -> b.cudaLibrary(path(v)));
        keys.put("kvtier.disk.transfer.mode", (b, v) -> b.diskTransferMode(choice(DiskTransferMode.class, v)));
        keys.put("kvtier.bounce.buffer.size", (b, v) -> b.bounceBufferBytes(ByteSizes.parse(v)));
        keys.put("kvtier.bounce.buffer.pairs", (b, v) -> b.bounceBufferPairs(integer(v)));
        keys.put("kvtier.room.batch.fraction", (b, v) -> b.roomBatchFraction(
                ByteSizes.isShare(v) ? ByteSizes.parseShare(v) : fraction(v)));
        keys.put("kvtier.persistence.namespace", (b, v) -> b.persistence(DiskPersistence.of(v)));
        keys.put("kvtier.remote.store", (b, v) -> b.remoteSettings().store(uri(v)));
        keys.put("kvtier.remote.write.through", (b, v) -> b.remoteSettings().writeThrough(
                choice(RemoteStoreConfig.WriteThrough.class, v.strip().replace('-', '_'))));
        keys.put(REMOTE_KEY, (b, v) -> b.remoteSettings().key(v.getBytes(StandardCharsets.UTF_8)));
        keys.put("kvtier.remote.namespace", (b, v) -> b.remoteSettings().namespace(v.strip()));
        keys.put("kvtier.remote.max.bytes.in.flight", (b, v) -> b.remoteSettings().maxBytesInFlight(ByteSizes.parse(v)));
        keys.put("kvtier.remote.max.value.bytes", (b, v) -> b.remoteSettings().maxValueBytes(ByteSizes.parse(v)));
        keys.put("kvtier.remote.prefill.tokens.per.second", (b, v) -> b.remoteSettings().prefillTokensPerSecond(
                fraction(v)));
        return keys;
    }

    /**
     * Applies {@code settings} to {@code builder}: all of them to a fresh builder first, so that a bad one leaves
     * {@code builder} as it was, then to {@code builder}.
     *
     * @throws IllegalArgumentException naming the key and the value
     */
    static void apply(Map<String, String> settings, KvTierConfig.Builder builder) {
        Map<String, String> ours = new TreeMap<>();
        settings.forEach((key, value) -> {
            if (key != null && key.startsWith(PREFIX)) {
                if (!KEYS.containsKey(key) && !isRemoteSetting(key)) {
                    String nearest = nearest(key);
                    throw new IllegalArgumentException("unknown setting " + key
                            + (nearest == null ? "" : " (did you mean " + nearest + "?)")
                            + " (the settings are listed in KvTierConfig's class comment)");
                }
                if (value == null) {
                    throw new IllegalArgumentException("setting " + key + " has no value");
                }
                ours.put(key, value);
            }
        });
        for (KvTierConfig.Builder target : new KvTierConfig.Builder[] {KvTierConfig.builder(), builder}) {
            ours.forEach((key, value) -> {
                try {
                    if (isRemoteSetting(key)) {
                        target.remoteSettings().storeSetting(key.substring(REMOTE_SETTING_PREFIX.length()), value);
                    } else {
                        KEYS.get(key).accept(target, value);
                    }
                } catch (IllegalArgumentException e) {
                    boolean secret = key.equals(REMOTE_KEY) || isRemoteSetting(key);
                    throw new IllegalArgumentException("bad value for " + key + ": "
                            + (secret ? "(not shown)" : "'" + value + "'") + ": " + e.getMessage(), e);
                }
            });
        }
    }

    /** The string settings of {@code properties}, defaults included. */
    static Map<String, String> of(Properties properties) {
        if (properties == null) {
            throw new IllegalArgumentException("properties must not be null");
        }
        Map<String, String> settings = new TreeMap<>();
        for (String name : properties.stringPropertyNames()) {
            settings.put(name, properties.getProperty(name));
        }
        return settings;
    }

    /**
     * The {@code KVTIER_*} variables of {@code environment} as settings: {@code KVTIER_GPU_BUDGET} is
     * {@code kvtier.gpu.budget}. Other variables are ignored, except a near miss of a setting's name.
     *
     * @throws IllegalArgumentException naming a variable that looks like a misspelt setting, and the setting
     */
    static Map<String, String> ofEnvironment(Map<String, String> environment) {
        if (environment == null) {
            throw new IllegalArgumentException("environment must not be null");
        }
        Map<String, String> settings = new TreeMap<>();
        environment.forEach((name, value) -> {
            if (name.startsWith(ENVIRONMENT_PREFIX)) {
                String key = name.toLowerCase(Locale.ROOT).replace('_', '.');
                if (name.startsWith(ENVIRONMENT_PREFIX + "REMOTE_SETTING_")) {
                    // An engine's setting keeps its own spelling after the prefix (KVTIER_REMOTE_SETTING_PASSWORD).
                    key = REMOTE_SETTING_PREFIX + name.substring((ENVIRONMENT_PREFIX + "REMOTE_SETTING_").length())
                            .toLowerCase(Locale.ROOT);
                } else if (!KEYS.containsKey(key)) {
                    // Other variables share the prefix (KVTIER_CUDART, read by the CUDA probe; tools' own): only a
                    // near miss of a setting's name is taken for a misspelling of it.
                    String nearest = nearest(key);
                    if (nearest == null) {
                        return;
                    }
                    throw new IllegalArgumentException("unknown environment variable " + name + " (did you mean "
                            + environmentName(nearest) + "?; the settings are listed in KvTierConfig's class comment)");
                }
                settings.put(key, value);
            }
        });
        return settings;
    }

    /** The known key nearest to {@code key} (a likely misspelling of it), or null when none is near. */
    private static String nearest(String key) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String known : KEYS.keySet()) {
            int distance = distance(key, known);
            if (distance < bestDistance) {
                best = known;
                bestDistance = distance;
            }
        }
        return bestDistance <= Math.max(3, key.length() / 4) ? best : null;
    }

    /** {@code kvtier.gpu.budget} as an environment variable: {@code KVTIER_GPU_BUDGET}. */
    static String environmentName(String key) {
        return key.toUpperCase(Locale.ROOT).replace('.', '_');
    }

    /** Levenshtein distance. */
    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    private static boolean isRemoteSetting(String key) {
        return key.startsWith(REMOTE_SETTING_PREFIX) && key.length() > REMOTE_SETTING_PREFIX.length();
    }

    private static URI uri(String value) {
        try {
            return new URI(value.strip());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("not a URI: " + e.getMessage(), e);
        }
    }

    private static Path path(String value) {
        if (value.isBlank()) {
            throw new IllegalArgumentException("expected a path, was blank");
        }
        try {
            return Path.of(value.strip());
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("not a path: " + e.getMessage(), e);
        }
    }

    private static int intSize(String value) {
        long bytes = ByteSizes.parse(value);
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("at most " + ByteSizes.format(Integer.MAX_VALUE) + ", was " + bytes);
        }
        return (int) bytes;
    }

    private static int integer(String value) {
        try {
            return Integer.parseInt(value.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected an integer");
        }
    }

    private static double fraction(String value) {
        try {
            return Double.parseDouble(value.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected a fraction such as 0.004, or a share such as 0.4%");
        }
    }

    private static <E extends Enum<E>> E choice(Class<E> type, String value) {
        StringBuilder names = new StringBuilder();
        for (E constant : type.getEnumConstants()) {
            if (constant.name().equalsIgnoreCase(value.strip())) {
                return constant;
            }
            names.append(names.isEmpty() ? "" : ", ").append(constant.name().toLowerCase(Locale.ROOT));
        }
        throw new IllegalArgumentException("expected one of " + names);
    }

    /** {@code 30s}, {@code 500ms}, {@code 2m}, {@code 1h}, or ISO-8601 ({@code PT30S}). */
    private static Duration duration(String value) {
        String text = value.strip();
        Matcher m = DURATION.matcher(text);
        if (m.matches()) {
            long amount = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                default -> Duration.ofHours(amount);
            };
        }
        try {
            return Duration.parse(text);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("expected a duration such as 30s, 500ms, 2m or PT30S");
        }
    }

    /** The machine's physical memory, what a CPU budget's share is of. */
    static long physicalMemoryBytes() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            return sun.getTotalMemorySize();
        }
        throw new IllegalArgumentException("this JVM does not report the physical memory size: set cpuBudgetBytes");
    }

    /**
     * The total size of the file system holding {@code directory} (its nearest existing ancestor, as it may not be
     * made yet), or the temporary directory's when null: what a DISK budget's share is of.
     */
    static long fileSystemBytes(Path directory) {
        Path at = directory == null ? Path.of(System.getProperty("java.io.tmpdir")) : directory.toAbsolutePath();
        while (at != null && !Files.exists(at)) {
            at = at.getParent();
        }
        if (at == null) {
            throw new IllegalArgumentException("no part of the disk directory " + directory + " exists to measure its"
                    + " file system: set diskBudgetBytes");
        }
        try {
            return Files.getFileStore(at).getTotalSpace();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot measure the file system of " + at + " for a DISK budget share: "
                    + e.getMessage() + " (set diskBudgetBytes)", e);
        }
    }
}
