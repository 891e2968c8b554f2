package dev.kvtier.bench.soak;

import dev.kvtier.Backend;
import dev.kvtier.DiskTransferMode;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * One soak run: epochs until the duration is spent, each one cache opened with the epoch's fault kind (cycling
 * through {@link Fault#cycle}), {@code threads} {@link Worker}s operating on it while its {@link FaultInjector} fires,
 * then the injector stopped, the workers stopped, the cache closed and checked for leaks ({@link LeakCheck}) against
 * what the process held before it opened. Every open and close runs under the {@link HangWatch} too, on a helper
 * thread the soak stops waiting for after the hang bound, so a wedged close is reported and the run goes on.
 *
 * <p>Why epochs: a sticky context must end with close and reopen, tiny budgets need their own cache, and every close
 * is a chance to see a leak; so every kind gets the same treatment. The disk directory is fresh per epoch (under one
 * base directory, on a small tmpfs for the host backend when mounting is permitted) so files left are the epoch's.
 */
final class SoakRun {
    private static final int PAGE = Worker.PAGE;
    /** A tmpfs this small fills up quickly, yet holds a whole epoch's DISK segments when the ballast is gone. */
    private static final String TMPFS_SIZE = "8m";

    private final SoakOptions options;
    private final PrintStream out;
    private final PrintStream err;
    private final SoakReport report;
    private final SplittableRandom random;
    private final Content content;
    private Optional<FakeCudart> fake = Optional.empty();
    private Path base;
    private Path mountPoint;
    private HangWatch watch;
    private LeakCheck leakCheck;
    private final List<KvTierCache> abandoned = new ArrayList<>();

    SoakRun(SoakOptions options, PrintStream out, PrintStream err) {
        this.options = options;
        this.out = out;
        this.err = err;
        this.report = new SoakReport(options);
        this.random = new SplittableRandom(options.seed());
        this.content = new Content(options.seed());
    }

    /** Runs the soak and returns its report. */
    SoakReport run() throws IOException {
        // The library logs a warning for every fault it absorbs; tens of thousands of them would bury the summary.
        Logger library = Logger.getLogger("dev.kvtier");
        Level was = library.getLevel();
        library.setLevel(Level.SEVERE);
        try {
            return runQuietly();
        } finally {
            library.setLevel(was);
        }
    }

    private SoakReport runQuietly() throws IOException {
        long start = System.nanoTime();
        List<Fault> cycle = new ArrayList<>(options.faults().isEmpty() ? Fault.cycle(options.backend()) : options.faults());
        if (options.backend() == SoakOptions.BackendChoice.CUDA) {
            Path library = options.cudaLibrary();
            fake = FakeCudart.open(library);
            if (fake.isEmpty()) {
                for (Fault fault : cycle) {
                    if (fault.needsFake) {
                        report.skipped(fault, library + " is not the fake libcudart (no kvtierfake_configure)");
                    }
                }
                cycle.removeIf(fault -> fault.needsFake);
            }
        }
        base = Files.createTempDirectory("kvtier-soak-");
        watch = new HangWatch(options.hangBound(), err);
        try {
            if (options.backend() == SoakOptions.BackendChoice.HOST) {
                mountTmpfs();
                if (mountPoint == null) {
                    cycle.remove(Fault.DISK_FULL);
                }
            }
            if (cycle.isEmpty()) {
                throw new IllegalArgumentException("no fault kind of " + options.faults() + " can run on the "
                        + options.backend() + " backend here; see the skipped kinds");
            }
            leakCheck = new LeakCheck(fake);
            warmUp();
            LeakCheck.Snapshot first = leakCheck.snapshot();
            report.nativeChecked(first.nativeBytes() >= 0);
            long deadline = start + options.duration().toNanos();
            long lastProgress = System.nanoTime();
            int epoch = 0;
            while (System.nanoTime() < deadline - TimeUnit.MILLISECONDS.toNanos(500)) {
                Fault fault = cycle.get(epoch % cycle.size());
                Duration length = Duration.ofNanos(Math.min(options.epoch().toNanos(), deadline - System.nanoTime()));
                runEpoch(++epoch, fault, length);
                if (options.progress() && System.nanoTime() - lastProgress > TimeUnit.SECONDS.toNanos(10)) {
                    lastProgress = System.nanoTime();
                    err.printf(Locale.ROOT, "soak: %3d s, epoch %d (%s): %,d reads verified, %d wrong, %d hangs, %d leaks, %d unexpected%n",
                            TimeUnit.NANOSECONDS.toSeconds(lastProgress - start), epoch, fault, report.verifiedReads(),
                            report.wrongBytes() + report.wrongMetadata(), report.hangs(), report.leakCount(),
                            report.unexpectedFailures());
                }
            }
            if (options.backend() == SoakOptions.BackendChoice.CUDA) {
                report.note(LeakCheck.processWideCallbackThreads() + " thread(s) of the bindings' process-wide host-callback pool ("
                        + LeakCheck.PROCESS_WIDE_CALLBACKS + "*, idle ones end after 60 s) alive at the end; not counted as a"
                        + " cache's leak");
            }
            if (abandoned.isEmpty()) {
                LeakCheck.nativeLeak(first, leakCheck.snapshot()).ifPresent(leak -> report.runLeak("native memory bytes (NMT Other)", leak));
            } else {
                report.note(abandoned.size() + " cache(s) abandoned after a hung open or close: native memory not compared");
            }
        } finally {
            watch.close();
            cleanUp();
        }
        report.elapsed(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        return report;
    }

    /** One open, put, read, close before the baseline, so that class loading's descriptors and memory are not counted. */
    private void warmUp() throws IOException {
        Path directory = base.resolve("warm-up");
        try (KvTierCache cache = KvTierCache.open(config(directory, false, 0).build())) {
            report.backend(cache.backendDescription());
            byte[] data = content.bytes(999_999, 1, PAGE);
            cache.put("warm-up", PositionRange.of(0, 1), MemorySegment.ofArray(data), Tier.DISK);
            cache.read("warm-up", MemorySegment.ofArray(new byte[PAGE]));
            cache.ensureResident("warm-up", Tier.GPU);
        }
        deleteTree(directory);
    }

    private KvTierConfig.Builder config(Path directory, boolean tiny, int epoch) {
        long gpuPages = Math.max(8, options.threads() * options.keysPerThread() / 2);
        KvTierConfig.Builder builder = KvTierConfig.builder()
                .pageSizeBytes(PAGE)
                .gpuBudgetBytes(tiny ? 2L * PAGE : gpuPages * PAGE)
                .cpuBudgetBytes(tiny ? 3L * PAGE : 2 * gpuPages * PAGE)
                .diskDirectory(directory)
                .diskExtentBytes(16L * PAGE)
                .copyThreads(2)
                .transferTimeout(options.transferTimeout());
        if (options.backend() == SoakOptions.BackendChoice.HOST) {
            return builder.backend(Backend.HOST);
        }
        // Every other epoch stages DISK copies through small bounce buffers, so both DISK paths see every fault.
        return builder.backend(Backend.CUDA).cudaLibrary(options.cudaLibrary())
                .diskTransferMode(epoch % 2 == 0 ? DiskTransferMode.AUTO : DiskTransferMode.STAGED)
                .bounceBufferBytes(2L * PAGE).bounceBufferPairs(1);
    }

    private void runEpoch(int epoch, Fault fault, Duration length) throws IOException {
        EpochCounters counters = new EpochCounters(fault, epoch);
        watch.epoch(counters, options.hangBound());
        Path directory = base.resolve("epoch-" + epoch);
        Files.createDirectories(directory);
        LeakCheck.Snapshot before = leakCheck.snapshot();
        KvTierConfig config = config(directory, fault == Fault.TINY_BUDGETS, epoch).build();
        counters.op(Op.OPEN);
        Bounded<KvTierCache> opened = bounded(counters, Op.OPEN, () -> KvTierCache.open(config));
        if (opened.value() == null) {
            // A failed open must leave nothing behind either; one that never returned cannot be checked.
            finishEpoch(counters, before, directory, 0, !opened.timedOut());
            return;
        }
        KvTierCache cache = opened.value();
        AtomicBoolean stop = new AtomicBoolean();
        Worker.Board board = new Worker.Board(options.threads(), options.keysPerThread());
        boolean pagesReadable = options.backend() == SoakOptions.BackendChoice.HOST || fake.isPresent();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < options.threads(); t++) {
            Worker worker = new Worker(t, options.threads(), cache, counters, board, content, watch,
                    random.nextLong(), pagesReadable, stop);
            threads.add(Thread.ofPlatform().name("soak-worker-" + t).unstarted(worker));
        }
        FaultInjector injector = FaultInjector.of(fault, counters, random.split(), new FaultInjector.Target(fake,
                directory, Optional.ofNullable(mountPoint), List.copyOf(threads), length, options.transferTimeout()));
        threads.forEach(Thread::start);
        long epochStart = System.nanoTime();
        try {
            while (System.nanoTime() - epochStart < length.toNanos()) {
                if (injector.tick(System.nanoTime() - epochStart)) {
                    break;
                }
                TimeUnit.MILLISECONDS.sleep(2 + random.nextInt(8));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            injector.stop();
            stop.set(true);
        }
        long joinDeadline = System.nanoTime() + options.hangBound().plusSeconds(2).toNanos();
        boolean joined = true;
        for (Thread thread : threads) {
            try {
                thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(joinDeadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            joined &= !thread.isAlive();
        }
        if (!joined) {
            report.note("epoch " + epoch + " (" + fault + "): a worker did not stop within the hang bound; its cache was "
                    + "abandoned unclosed");
            abandoned.add(cache);
            finishEpoch(counters, before, directory, 0, false);
            return;
        }
        long closeStart = System.nanoTime();
        counters.op(Op.CLOSE);
        Bounded<KvTierCache> closed = bounded(counters, Op.CLOSE, () -> {
            cache.close();
            return cache;
        });
        long closeMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closeStart);
        if (closed.timedOut()) {
            report.note("epoch " + epoch + " (" + fault + "): close did not return within the hang bound; abandoned");
            abandoned.add(cache);
            finishEpoch(counters, before, directory, closeMillis, false);
            return;
        }
        injector.closed();
        finishEpoch(counters, before, directory, closeMillis, true);
    }

    /** Checks for leaks (when the cache was closed), resets the fake, merges the epoch, deletes its directory. */
    private void finishEpoch(EpochCounters counters, LeakCheck.Snapshot before, Path directory, long closeMillis,
                             boolean check) throws IOException {
        LeakCheck.Result left = new LeakCheck.Result(Map.of(), 0);
        if (check) {
            // A stream a timed-out copy still runs on is drained by a reaper thread after close returns, which frees
            // what the copy may touch once it has; the reaper gives up after 20 transfer timeouts
            // (CudaCopyEngine.REAPER_PATIENCE_TIMEOUTS). Only what is still there after that, and 2 s more, is a leak.
            Duration settle = options.transferTimeout().multipliedBy(20).plusSeconds(2);
            left = leakCheck.leaksAfterClose(before, directory, settle);
        }
        fake.ifPresent(FakeCudart::reset);
        report.merge(counters, left.leaks(), closeMillis, left.settledMillis());
        deleteTree(directory);
    }

    /** What {@link #bounded} got: the value (null when the action failed or did not return) and whether it timed out. */
    private record Bounded<T>(T value, boolean timedOut) {
    }

    /**
     * Runs {@code action} on a helper thread under the hang watch and waits up to the hang bound plus 2 s. A failure is
     * counted; an action that did not return in time was counted as a hang by the watch and is left to finish or not.
     */
    private <T> Bounded<T> bounded(EpochCounters counters, Op op, Callable<T> action) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread.ofPlatform().name("soak-" + op.name().toLowerCase(Locale.ROOT)).daemon().start(() -> {
            HangWatch.Slot slot = watch.slot();
            slot.begin(op.label + " of epoch " + counters.epoch + "'s cache");
            try {
                result.complete(action.call());
            } catch (Throwable t) {
                result.completeExceptionally(t);
            } finally {
                slot.end();
                watch.release(slot);
            }
        });
        try {
            return new Bounded<>(result.get(options.hangBound().plusSeconds(2).toMillis(), TimeUnit.MILLISECONDS), false);
        } catch (ExecutionException e) {
            counters.failed(op, "(cache)", e.getCause());
            return new Bounded<>(null, false);
        } catch (TimeoutException e) {
            return new Bounded<>(null, true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Bounded<>(null, true);
        }
    }

    // ------------------------------------------------------------------ the host backend's small tmpfs

    /** Mounts a small tmpfs under the base directory for the disk directories, or notes why not. */
    private void mountTmpfs() {
        Path point = base.resolve("tmpfs");
        String reason;
        try {
            Files.createDirectories(point);
            Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=" + TMPFS_SIZE, "soak-tmpfs",
                    point.toString()).redirectErrorStream(true).start();
            String output = new String(mount.getInputStream().readAllBytes()).strip();
            if (mount.waitFor() == 0) {
                mountPoint = point;
                base = point; // every epoch's disk directory on the tmpfs, the ballast beside them
                return;
            }
            reason = "mount -t tmpfs failed (needs root or CAP_SYS_ADMIN): " + output;
        } catch (IOException e) {
            reason = "cannot run mount: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            reason = "interrupted while mounting";
        }
        report.skipped(Fault.DISK_FULL, reason);
        err.println("soak: disk-full faults skipped: " + reason);
    }

    private void cleanUp() throws IOException {
        if (mountPoint != null) {
            try {
                Process umount = new ProcessBuilder("umount", mountPoint.toString()).redirectErrorStream(true).start();
                String output = new String(umount.getInputStream().readAllBytes()).strip();
                if (umount.waitFor() != 0) {
                    report.note("umount " + mountPoint + " failed: " + output);
                    return;
                }
                base = mountPoint.getParent();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        deleteTree(base);
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
