package dev.kvtier.bench.soak;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Injects one {@link Fault} kind while an epoch runs. The soak calls {@link #tick} every few milliseconds from one
 * thread (the epoch's driver), and {@link #stop} once before the workers stop; a tick arms, starts or ends a fault,
 * and counts it in the epoch's counters as armed and, once it is known to have taken effect, as fired. Not
 * thread-safe: one driver thread.
 */
abstract class FaultInjector {
    protected final EpochCounters counters;
    protected final SplittableRandom random;

    /** Everything an injector may act on. */
    record Target(Optional<FakeCudart> fake, Path diskDirectory, Optional<Path> ballastDirectory,
                  List<Thread> workers, Duration epochLength, Duration transferTimeout) {
    }

    FaultInjector(EpochCounters counters, SplittableRandom random) {
        this.counters = counters;
        this.random = random;
    }

    /** Acts if it is time; returns true to end the epoch now (a sticky episode has run its course). */
    abstract boolean tick(long elapsedNanos);

    /** Ends whatever fault is in progress (the workers still run, so the cache can be closed cleanly). */
    void stop() {
    }

    /** After the cache closed, before the fake is reset: count the rules that fired meanwhile. */
    void closed() {
    }

    /** The injector for {@code fault} against {@code target}. */
    static FaultInjector of(Fault fault, EpochCounters counters, SplittableRandom random, Target target) {
        return switch (fault) {
            case SYNC_FAIL -> new Rules(counters, random, target.fake().orElseThrow(), "fail", Map.of(
                    "cudaMemcpyAsync", "cudaErrorLaunchFailure", "cudaMemcpyBatchAsync", "cudaErrorLaunchFailure",
                    "cudaMalloc", "cudaErrorMemoryAllocation", "cudaHostAlloc", "cudaErrorMemoryAllocation"));
            case ASYNC_FAIL -> new Rules(counters, random, target.fake().orElseThrow(), "failasync", Map.of(
                    "cudaMemcpyAsync", "cudaErrorLaunchFailure", "cudaMemcpyBatchAsync", "cudaErrorLaunchFailure"));
            case HOST_FUNC_NEVER -> new Rules(counters, random, target.fake().orElseThrow(), "failasync",
                    Map.of("cudaLaunchHostFunc", "cudaErrorLaunchFailure"));
            case COPY_DELAY -> new CopyDelay(counters, random, target.fake().orElseThrow(), target.transferTimeout());
            case STICKY -> new Sticky(counters, random, target.fake().orElseThrow(), target.epochLength());
            case DISK_FULL -> new DiskFull(counters, random, target.ballastDirectory().orElseThrow());
            case TRUNCATE_EXTENT -> new Truncate(counters, random, target.diskDirectory());
            case INTERRUPTS -> new Interrupts(counters, random, target.workers());
            case TINY_BUDGETS -> new TinyBudgets(counters, random);
        };
    }

    /** The copy functions: their calls say whether copies ran. */
    static final List<String> COPIES = List.of("cudaMemcpyAsync", "cudaMemcpyBatchAsync");

    static long copyCalls(FakeCudart fake) {
        long calls = 0;
        for (String function : COPIES) {
            calls += Math.max(0, fake.callCount(function));
        }
        return calls;
    }

    /**
     * {@code fail=} or {@code failasync=} rules, at most one armed per function at a time (the fake holds 64), each
     * on the N-th call from now (N random in 1..8). A rule counts as fired once the function has been called N times
     * since it was armed (its call count, read after arming: so a rule is never counted early, at worst late).
     */
    static final class Rules extends FaultInjector {
        private final FakeCudart fake;
        private final String item;
        private final Map<String, String> errors;
        private final List<String> functions;
        private final Map<String, Long> firesAt = new HashMap<>();

        Rules(EpochCounters counters, SplittableRandom random, FakeCudart fake, String item, Map<String, String> errors) {
            super(counters, random);
            this.fake = fake;
            this.item = item;
            this.errors = errors;
            this.functions = errors.keySet().stream().sorted().toList();
        }

        @Override
        boolean tick(long elapsedNanos) {
            poll();
            String function = functions.get(random.nextInt(functions.size()));
            if (!firesAt.containsKey(function)) {
                int n = 1 + random.nextInt(8);
                fake.configure(item + "=" + function + ":" + n + ":" + errors.get(function));
                firesAt.put(function, fake.callCount(function) + n);
                counters.armed(item + "=" + function);
            }
            return false;
        }

        private void poll() {
            firesAt.entrySet().removeIf(rule -> {
                if (fake.callCount(rule.getKey()) >= rule.getValue()) {
                    counters.fired(item + "=" + rule.getKey());
                    return true;
                }
                return false;
            });
        }

        @Override
        void closed() {
            poll(); // rules still armed now never fired; the reset drops them
        }
    }

    /**
     * Bursts of {@code copydelayus} at twice the transfer timeout (each copy sleeps that long on its stream before it
     * runs, so every copy of a burst times out), 200-700 ms on, 300-1300 ms off. Fired: a burst during which copies
     * were made.
     */
    static final class CopyDelay extends FaultInjector {
        private final FakeCudart fake;
        private final long delayMicros;
        private boolean on;
        private long switchAt;
        private long copiesAtStart;

        CopyDelay(EpochCounters counters, SplittableRandom random, FakeCudart fake, Duration transferTimeout) {
            super(counters, random);
            this.fake = fake;
            this.delayMicros = transferTimeout.toNanos() * 2 / 1000;
            this.switchAt = TimeUnit.MILLISECONDS.toNanos(300);
        }

        @Override
        boolean tick(long elapsedNanos) {
            if (elapsedNanos < switchAt) {
                return false;
            }
            if (on) {
                end();
                switchAt = elapsedNanos + TimeUnit.MILLISECONDS.toNanos(300 + random.nextInt(1000));
            } else {
                fake.configure("copydelayus=" + delayMicros);
                on = true;
                copiesAtStart = copyCalls(fake);
                counters.armed("copydelayus=" + delayMicros + " burst");
                switchAt = elapsedNanos + TimeUnit.MILLISECONDS.toNanos(200 + random.nextInt(500));
            }
            return false;
        }

        private void end() {
            fake.configure("copydelayus=0");
            on = false;
            if (copyCalls(fake) > copiesAtStart) {
                counters.fired("copydelayus=" + delayMicros + " burst");
            }
        }

        @Override
        void stop() {
            if (on) {
                end();
            }
        }
    }

    /**
     * One sticky episode: after 30% of the epoch, {@code stickyasync=1} with an async fault on the next copy of
     * either kind; once a copy has been made (the context is dead from then on), the workers go on failing for one
     * more second and the epoch ends: the soak closes the cache in the dead context, checks what is left, resets the
     * fake and opens a new cache, as a runtime restarts its worker after a device error.
     */
    static final class Sticky extends FaultInjector {
        private static final String LABEL = "stickyasync=1 + failasync on the next copy";
        private final FakeCudart fake;
        private final long armAt;
        private boolean armed;
        private long copiesAtArm;
        private long firedAt = -1;

        Sticky(EpochCounters counters, SplittableRandom random, FakeCudart fake, Duration epochLength) {
            super(counters, random);
            this.fake = fake;
            this.armAt = epochLength.toNanos() * 3 / 10;
        }

        @Override
        boolean tick(long elapsedNanos) {
            if (!armed && elapsedNanos >= armAt) {
                fake.configure("stickyasync=1;failasync=cudaMemcpyAsync:1:cudaErrorLaunchFailure;"
                        + "failasync=cudaMemcpyBatchAsync:1:cudaErrorLaunchFailure");
                copiesAtArm = copyCalls(fake);
                armed = true;
                counters.armed(LABEL);
            } else if (armed && firedAt < 0 && copyCalls(fake) > copiesAtArm) {
                firedAt = elapsedNanos;
                counters.fired(LABEL);
            }
            return firedAt >= 0 && elapsedNanos - firedAt > TimeUnit.SECONDS.toNanos(1);
        }
    }

    /**
     * Disk full in bursts: a ballast file beside the disk directory on the small tmpfs takes all but 0, 1 or 4 pages
     * of its free space for 200-700 ms, then is deleted for 300-1300 ms. Fired: the free space was down to the reserve.
     */
    static final class DiskFull extends FaultInjector {
        private static final String LABEL = "tmpfs filled by a ballast file";
        private final Path ballast;
        private boolean on;
        private long switchAt = TimeUnit.MILLISECONDS.toNanos(300);

        DiskFull(EpochCounters counters, SplittableRandom random, Path ballastDirectory) {
            super(counters, random);
            this.ballast = ballastDirectory.resolve("soak-ballast");
        }

        @Override
        boolean tick(long elapsedNanos) {
            if (elapsedNanos < switchAt) {
                return false;
            }
            if (on) {
                end();
                switchAt = elapsedNanos + TimeUnit.MILLISECONDS.toNanos(300 + random.nextInt(1000));
            } else {
                on = true;
                counters.armed(LABEL);
                long reserve = new long[] {0, Worker.PAGE, 4L * Worker.PAGE}[random.nextInt(3)];
                try {
                    if (fill(reserve)) {
                        counters.fired(LABEL);
                    }
                } catch (IOException e) {
                    counters.fired(LABEL); // ENOSPC before the target: full anyway
                }
                switchAt = elapsedNanos + TimeUnit.MILLISECONDS.toNanos(200 + random.nextInt(500));
            }
            return false;
        }

        /** Writes zeros (tmpfs allocates on write; a sparse file would take nothing) until {@code reserve} is left. */
        private boolean fill(long reserve) throws IOException {
            ByteBuffer zeros = ByteBuffer.allocate(64 << 10);
            try (FileChannel channel = FileChannel.open(ballast, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.APPEND)) {
                long free;
                while ((free = Files.getFileStore(ballast).getUsableSpace()) > reserve) {
                    zeros.clear().limit((int) Math.min(zeros.capacity(), free - reserve));
                    channel.write(zeros);
                }
                return true;
            }
        }

        private void end() {
            on = false;
            try {
                Files.deleteIfExists(ballast);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException("cannot delete the ballast " + ballast, e);
            }
        }

        @Override
        void stop() {
            end();
        }
    }

    /**
     * An extent file truncated behind the cache's back to a random page boundary, every 300-1300 ms, and grown back
     * to its size 20-220 ms later. While it is short, touching the lost pages raises SIGBUS (the cache must turn that
     * into an exception); once it is grown back they read as zeros (the DISK checksum must catch that). Host backend
     * only: on the CUDA backend the fake's copy threads would take the SIGBUS in C, which nothing can turn into an
     * exception. Fired: a file was truncated.
     */
    static final class Truncate extends FaultInjector {
        private static final String LABEL = "extent truncated and grown back";
        private final Path directory;
        private FileChannel truncated;
        private long originalSize;
        private long switchAt = TimeUnit.MILLISECONDS.toNanos(500);

        Truncate(EpochCounters counters, SplittableRandom random, Path directory) {
            super(counters, random);
            this.directory = directory;
        }

        @Override
        boolean tick(long elapsedNanos) {
            if (elapsedNanos < switchAt) {
                return false;
            }
            if (truncated != null) {
                restore();
                switchAt = elapsedNanos + TimeUnit.MILLISECONDS.toNanos(300 + random.nextInt(1000));
                return false;
            }
            List<Path> extents = new ArrayList<>();
            try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, "*.extent")) {
                files.forEach(extents::add);
            } catch (IOException e) {
                return false; // not created yet
            }
            if (extents.isEmpty()) {
                return false;
            }
            extents.sort(null);
            Path extent = extents.get(random.nextInt(extents.size()));
            counters.armed(LABEL);
            try {
                // WRITE without CREATE: never make a file the cache did not (it may have deleted this one just now)
                FileChannel channel = FileChannel.open(extent, StandardOpenOption.WRITE);
                try {
                    originalSize = channel.size();
                    long pages = originalSize / Worker.PAGE;
                    channel.truncate(pages == 0 ? 0 : random.nextLong(pages) * Worker.PAGE);
                } catch (IOException e) {
                    channel.close();
                    throw e;
                }
                truncated = channel;
                counters.fired(LABEL);
            } catch (NoSuchFileException e) {
                // deleted meanwhile: nothing truncated
            } catch (IOException e) {
                throw new java.io.UncheckedIOException("cannot truncate " + extent, e);
            }
            switchAt = elapsedNanos + TimeUnit.MILLISECONDS.toNanos(20 + random.nextInt(200));
            return false;
        }

        /** Grows the file back by writing its last byte (a zero: everything past the cut reads as zeros anyway). */
        private void restore() {
            try (FileChannel channel = truncated) {
                if (originalSize > 0) {
                    channel.write(ByteBuffer.allocate(1), originalSize - 1);
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException("cannot grow an extent back to " + originalSize + " bytes", e);
            } finally {
                truncated = null;
            }
        }

        @Override
        void stop() {
            if (truncated != null) {
                restore();
            }
        }
    }

    /** Interrupts a random worker on most ticks (a few hundred a second). Fired: it was alive to take it. */
    static final class Interrupts extends FaultInjector {
        private static final String LABEL = "interrupt of an operating thread";
        private final List<Thread> workers;

        Interrupts(EpochCounters counters, SplittableRandom random, List<Thread> workers) {
            super(counters, random);
            this.workers = workers;
        }

        @Override
        boolean tick(long elapsedNanos) {
            if (workers.isEmpty() || random.nextInt(3) == 0) {
                return false;
            }
            Thread worker = workers.get(random.nextInt(workers.size()));
            counters.armed(LABEL);
            if (worker.isAlive()) {
                worker.interrupt();
                counters.fired(LABEL);
            }
            return false;
        }
    }

    /** The budgets are the fault (the soak opens the epoch's cache with them); nothing to do while it runs. */
    static final class TinyBudgets extends FaultInjector {
        private static final String LABEL = "cache opened with GPU 2 pages, CPU 3 pages";

        TinyBudgets(EpochCounters counters, SplittableRandom random) {
            super(counters, random);
            counters.armed(LABEL);
            counters.fired(LABEL);
        }

        @Override
        boolean tick(long elapsedNanos) {
            return false;
        }
    }
}
