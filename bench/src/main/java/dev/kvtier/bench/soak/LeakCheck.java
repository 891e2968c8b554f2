package dev.kvtier.bench.soak;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a closed cache must not leave behind, measured from outside the library: live threads named {@code kvtier-*},
 * open file descriptors ({@code /proc/self/fd}, with their targets), the fake libcudart's live objects, files in the
 * disk directory, and the JVM's native memory (Native Memory Tracking's "Other", where FFM's malloc-backed arenas are
 * counted) when the JVM runs with {@code -XX:NativeMemoryTracking=summary}.
 */
final class LeakCheck {
    /** Native memory growth over a whole run above which it counts as a leak (see {@link #nativeLeak}). */
    static final long NATIVE_TOLERANCE = 1L << 20;

    /**
     * The bindings' one pool that completes host-function callbacks for every CUDA runtime of the process
     * ({@code dev.kvtier.cuda.HostCallbacks}: a cached pool, idle threads end after 60 s). It belongs to no cache, so
     * its threads are not a cache's leak; {@link #processWideCallbackThreads} counts them for the report.
     */
    static final String PROCESS_WIDE_CALLBACKS = "kvtier-cuda-callback-";

    private static final Pattern NMT_OTHER = Pattern.compile("Other \\(reserved=(\\d+)(\\w*), committed=(\\d+)(\\w*)\\)");
    private static final Path FDS = Path.of("/proc/self/fd");

    private final Optional<FakeCudart> fake;

    LeakCheck(Optional<FakeCudart> fake) {
        this.fake = fake;
    }

    /**
     * The measurements at one moment.
     *
     * @param threads     names of live {@code kvtier-*} threads
     * @param fds         open descriptors by target (-1 count: no /proc here)
     * @param fake        the fake's live counts (empty off the fake)
     * @param nativeBytes NMT "Other" committed bytes, or -1 without NMT
     */
    record Snapshot(List<String> threads, Map<String, Integer> fds, Map<String, Long> fake, long nativeBytes) {
        int fdCount() {
            return fds.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    Snapshot snapshot() {
        List<String> threads = new ArrayList<>();
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (thread.getName().startsWith("kvtier-") && !thread.getName().startsWith(PROCESS_WIDE_CALLBACKS)
                    && thread.isAlive()) {
                threads.add(thread.getName());
            }
        }
        threads.sort(null);
        return new Snapshot(threads, fds(), fake.map(FakeCudart::liveCounts).orElse(Map.of()), nativeBytes());
    }

    /** Live threads of the process-wide callback pool (see {@link #PROCESS_WIDE_CALLBACKS}). */
    static long processWideCallbackThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(PROCESS_WIDE_CALLBACKS)).count();
    }

    /**
     * The leaks of a closed cache against {@code before} (taken before it opened): polls until nothing is left or
     * {@code settle} has passed, because some clean-up legitimately finishes after {@code close()} returns (memory a
     * timed-out copy may still write is freed once the device is quiescent).
     *
     * @param diskDirectory the closed cache's disk directory: nothing may be left in it
     * @return what is left, by kind (only kinds with something left), each with its details, and the time it took
     */
    Result leaksAfterClose(Snapshot before, Path diskDirectory, Duration settle) {
        long start = System.nanoTime();
        long deadline = start + settle.toNanos();
        while (true) {
            Map<String, Leak> leaks = compare(before, snapshot(), diskDirectory);
            if (leaks.isEmpty() || System.nanoTime() > deadline) {
                return new Result(leaks, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
            }
            try {
                TimeUnit.MILLISECONDS.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Result(leaks, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
            }
        }
    }

    /**
     * What a close left behind once it settled (empty: nothing), and how long after {@code close()} returned the last
     * of its clean-up finished (or the check gave up).
     */
    record Result(Map<String, Leak> leaks, long settledMillis) {
    }

    /** Something left behind: how many, and what (thread names, descriptor targets, file names). */
    record Leak(long count, String details) {
    }

    private static Map<String, Leak> compare(Snapshot before, Snapshot after, Path diskDirectory) {
        Map<String, Leak> leaks = new LinkedHashMap<>();
        if (!after.threads().isEmpty()) {
            leaks.put("kvtier threads", new Leak(after.threads().size(), String.join(", ", after.threads())));
        }
        int fdGrowth = after.fdCount() - before.fdCount();
        if (fdGrowth > 0) {
            Map<String, Integer> grown = new TreeMap<>();
            after.fds().forEach((target, n) -> {
                int was = before.fds().getOrDefault(target, 0);
                if (n > was) {
                    grown.put(target, n - was);
                }
            });
            leaks.put("file descriptors", new Leak(fdGrowth, grown.toString()));
        }
        after.fake().forEach((kind, n) -> {
            long grown = n - before.fake().getOrDefault(kind, 0L);
            if (grown > 0) {
                leaks.put("fake " + kind, new Leak(grown, kind + ": " + before.fake().get(kind) + " -> " + n));
            }
        });
        List<String> files = filesIn(diskDirectory);
        if (!files.isEmpty()) {
            leaks.put("files in disk directory", new Leak(files.size(), String.join(", ", files)));
        }
        return leaks;
    }

    /**
     * Native memory growth from {@code first} to {@code last} when it exceeds {@link #NATIVE_TOLERANCE}, or empty.
     * Measured over the whole run, not per epoch: the JVM's own use of "Other" (NIO's per-thread temporary buffers,
     * for one) moves by some KiB either way, while a cache that leaked its memory would grow it by a whole cache's
     * budgets per epoch, tens of epochs over.
     */
    static Optional<Leak> nativeLeak(Snapshot first, Snapshot last) {
        if (first.nativeBytes() < 0 || last.nativeBytes() < 0) {
            return Optional.empty();
        }
        long growth = last.nativeBytes() - first.nativeBytes();
        return growth > NATIVE_TOLERANCE
                ? Optional.of(new Leak(growth, "NMT Other committed " + first.nativeBytes() + " -> " + last.nativeBytes() + " bytes"))
                : Optional.empty();
    }

    /** Names of the entries in {@code directory}; none when it does not exist. */
    static List<String> filesIn(Path directory) {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
            for (Path entry : entries) {
                names.add(entry.getFileName().toString());
            }
        } catch (NoSuchFileException e) {
            return names;
        } catch (IOException e) {
            names.add("(cannot list " + directory + ": " + e + ")");
        }
        names.sort(null);
        return names;
    }

    /** Open descriptors of this process by target; the one used to list them is not counted. */
    private static Map<String, Integer> fds() {
        Map<String, Integer> targets = new TreeMap<>();
        if (!Files.isDirectory(FDS)) {
            return targets;
        }
        List<Path> entries = new ArrayList<>();
        try (DirectoryStream<Path> listing = Files.newDirectoryStream(FDS)) {
            listing.forEach(entries::add);
        } catch (IOException e) {
            return targets;
        }
        for (Path entry : entries) {
            String target;
            try {
                target = Files.readSymbolicLink(entry).toString();
            } catch (IOException e) {
                continue; // the listing's own descriptor, closed by now
            }
            targets.merge(target, 1, Integer::sum);
        }
        return targets;
    }

    /** NMT's committed bytes for "Other" (FFM's native allocations among them), or -1 when NMT is off. */
    private static long nativeBytes() {
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            Object text = server.invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"), "vmNativeMemory",
                    new Object[] {new String[] {"summary", "scale=b"}}, new String[] {String[].class.getName()});
            Matcher m = NMT_OTHER.matcher(String.valueOf(text));
            return m.find() ? Long.parseLong(m.group(3)) * scale(m.group(4)) : -1;
        } catch (Exception | LinkageError e) {
            return -1;
        }
    }

    private static long scale(String unit) {
        return switch (unit.toUpperCase(java.util.Locale.ROOT)) {
            case "KB" -> 1L << 10;
            case "MB" -> 1L << 20;
            case "GB" -> 1L << 30;
            default -> 1;
        };
    }
}
