package dev.kvtier.bench.sim;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A snapshot of what the process has spent so far, taken on the playing thread at the edges of a phase of a
 * trace run (its quarters), so that the difference of two says where a phase's time went: the playing thread's
 * CPU time and page faults, the JIT compiler threads' and the GC threads' CPU time, the collections and their
 * pause time. The first quarter of a cold run is slower than the rest (issue 11); these are the figures that
 * say why, measured in the same run instead of guessed from a separate profile.
 *
 * <p>Page faults and per-thread CPU come from Linux's {@code /proc/thread-self/stat} and {@code /proc/self/task/}
 * (field 10 minflt, fields 14-15 utime and stime in clock ticks, taken as 10 ms: {@code USER_HZ} is 100 on every
 * Linux the JDK runs on); elsewhere they read -1 and the summary prints "-". A snapshot lists the process's
 * threads and reads the stat files of the playing thread, the process and the compiler and GC threads (see
 * {@link #kindOf}); the first call also loads the management beans and is made before a run's clocks start.
 * Immutable; {@link #now()} must be called on the playing thread (its figures for "this thread" are the caller's).
 *
 * @param wallNanos          {@link System#nanoTime()}
 * @param threadCpuNanos     the calling thread's CPU time, -1 when the JVM cannot measure it
 * @param threadMinorFaults  the calling thread's minor page faults, -1 off Linux
 * @param processMinorFaults the process's minor page faults (all threads), -1 off Linux
 * @param compilerCpuNanos   CPU time of the JIT compiler threads (C1 and C2), -1 off Linux
 * @param gcCpuNanos         CPU time of the garbage collector's threads, -1 off Linux
 * @param collections        collections of every collector so far
 * @param collectionMillis   their accumulated time as the collectors report it (pauses, for G1's young and mixed)
 * @param compileMillis      the JIT's accumulated compilation time as the JVM reports it, -1 when not reported
 */
record JvmActivity(long wallNanos, long threadCpuNanos, long threadMinorFaults, long processMinorFaults,
                   long compilerCpuNanos, long gcCpuNanos, long collections, long collectionMillis, long compileMillis) {

    /** Nanoseconds per clock tick of {@code /proc/.../stat}'s utime and stime ({@code USER_HZ} = 100). */
    static final long NANOS_PER_TICK = 10_000_000L;

    private static final Path THREAD_STAT = Path.of("/proc/thread-self/stat");
    private static final Path PROCESS_STAT = Path.of("/proc/self/stat");
    private static final Path TASKS = Path.of("/proc/self/task");

    /** What the process has spent up to now; see the class comment for where each figure comes from. */
    static JvmActivity now() {
        long wall = System.nanoTime();
        ThreadMXBean threads = Beans.THREADS;
        long cpu = threads.isCurrentThreadCpuTimeSupported() ? threads.getCurrentThreadCpuTime() : -1;
        long[] thread = stat(THREAD_STAT);
        long[] process = stat(PROCESS_STAT);
        long compiler = -1;
        long gc = -1;
        if (Files.isDirectory(TASKS)) {
            compiler = 0;
            gc = 0;
            try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
                for (Path task : tasks) {
                    Kind kind = kindOf(task);
                    if (kind == Kind.OTHER) {
                        continue;
                    }
                    String line = read(task.resolve("stat"));
                    if (line == null) {
                        continue; // the thread ended between the listing and the read
                    }
                    long[] fields = fields(line);
                    long nanos = (fields[UTIME] + fields[STIME]) * NANOS_PER_TICK;
                    if (kind == Kind.COMPILER) {
                        compiler += nanos;
                    } else {
                        gc += nanos;
                    }
                }
            } catch (IOException | RuntimeException e) {
                compiler = -1;
                gc = -1;
            }
        }
        long collections = 0;
        long collectionMillis = 0;
        for (GarbageCollectorMXBean collector : Beans.COLLECTORS) {
            collections += Math.max(0, collector.getCollectionCount());
            collectionMillis += Math.max(0, collector.getCollectionTime());
        }
        CompilationMXBean jit = Beans.JIT;
        long compileMillis = jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
        return new JvmActivity(wall, cpu, thread == null ? -1 : thread[MINFLT], process == null ? -1 : process[MINFLT],
                compiler, gc, collections, collectionMillis, compileMillis);
    }

    /** What was spent between {@code earlier} and this snapshot; a figure either side could not measure stays -1. */
    JvmActivity since(JvmActivity earlier) {
        return new JvmActivity(wallNanos - earlier.wallNanos, minus(threadCpuNanos, earlier.threadCpuNanos),
                minus(threadMinorFaults, earlier.threadMinorFaults), minus(processMinorFaults, earlier.processMinorFaults),
                minus(compilerCpuNanos, earlier.compilerCpuNanos), minus(gcCpuNanos, earlier.gcCpuNanos),
                collections - earlier.collections, collectionMillis - earlier.collectionMillis,
                minus(compileMillis, earlier.compileMillis));
    }

    /** The platform's beans, looked up once (a lookup per snapshot cost more than the rest of it). */
    private static final class Beans {
        static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
        static final java.util.List<GarbageCollectorMXBean> COLLECTORS = ManagementFactory.getGarbageCollectorMXBeans();
        static final CompilationMXBean JIT = ManagementFactory.getCompilationMXBean();
    }

    private enum Kind { COMPILER, COLLECTOR, OTHER }

    /**
     * Each thread's kind by its task id, read once from its {@code comm}: a snapshot then reads the stat files of
     * the compiler and GC threads only (a handful), not of every thread (~3 ms of wall time per snapshot when every
     * one was read on a busy 2-core machine). Task ids are not reused while the process runs long enough to matter.
     */
    private static final java.util.Map<String, Kind> KINDS = new java.util.concurrent.ConcurrentHashMap<>();

    private static Kind kindOf(Path task) {
        return KINDS.computeIfAbsent(task.getFileName().toString(), id -> {
            String comm = read(task.resolve("comm"));
            if (comm == null) {
                return Kind.OTHER;
            }
            String name = comm.strip();
            return isCompiler(name) ? Kind.COMPILER : isCollector(name) ? Kind.COLLECTOR : Kind.OTHER;
        });
    }

    /** HotSpot names its compiler threads "C1 CompilerThread0", "C2 CompilerThread1" (cut to 15 characters by Linux). */
    static boolean isCompiler(String threadName) {
        return threadName.startsWith("C1 CompilerThre") || threadName.startsWith("C2 CompilerThre");
    }

    /** G1's threads: "GC Thread#0", "G1 Conc#0", "G1 Refine#0", "G1 Main Marker", "G1 Service" (and other collectors' "GC ..."). */
    static boolean isCollector(String threadName) {
        return threadName.startsWith("GC Thread") || threadName.startsWith("G1 ");
    }

    private static long minus(long later, long earlier) {
        return later < 0 || earlier < 0 ? -1 : later - earlier;
    }

    // Indices into the fields after the command name's closing parenthesis (field 3, the state, is index 0).
    private static final int MINFLT = 7;
    private static final int UTIME = 11;
    private static final int STIME = 12;

    private static long[] stat(Path file) {
        String line = read(file);
        if (line == null) {
            return null;
        }
        try {
            return fields(line);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** The numeric fields after the command name, which may itself hold spaces and parentheses. */
    static long[] fields(String statLine) {
        String[] parts = statLine.substring(statLine.lastIndexOf(')') + 2).trim().split(" ");
        long[] values = new long[STIME + 1];
        for (int i = 1; i <= STIME; i++) {
            values[i] = Long.parseLong(parts[i]);
        }
        return values;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
