package dev.kvtier.bench.soak;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * One soak run's settings, checked: each bad value is named in the exception.
 *
 * @param duration        how long to run (the last epoch is cut to fit)
 * @param epoch           how long one epoch (one cache, one fault kind) runs
 * @param threads         operating threads, each owning {@code keysPerThread} keys
 * @param keysPerThread   keys each thread puts and removes
 * @param backend         host or cuda
 * @param cudart          the libcudart for cuda (default: the fake under {@code kvtier.native.dir})
 * @param seed            seeds every thread's operations, the fault schedule and the bytes
 * @param transferTimeout the caches' transfer timeout; short, so that slow copies time out
 * @param progress        print a progress line every few seconds
 * @param out             where the Markdown summary is written (a file), or empty for none
 * @param faults          the fault kinds to cycle through, or empty for every kind of the backend
 */
record SoakOptions(Duration duration, Duration epoch, int threads, int keysPerThread, BackendChoice backend,
                   Optional<Path> cudart, long seed, Duration transferTimeout, boolean progress, Optional<Path> out,
                   List<Fault> faults) {

    /** The backend the caches run on. */
    enum BackendChoice {
        /** The host backend (native memory for GPU and CPU, mapped files for DISK). */
        HOST,
        /** The CUDA backend, over the fake libcudart unless {@code --cudart} names another. */
        CUDA
    }

    SoakOptions {
        requirePositive(duration, "duration");
        requirePositive(epoch, "epoch");
        requirePositive(transferTimeout, "transferTimeout");
        if (threads < 1 || threads > 256) {
            throw new IllegalArgumentException("threads must be in 1..256, was " + threads);
        }
        if (keysPerThread < 1 || keysPerThread > 1000) {
            throw new IllegalArgumentException("keysPerThread must be in 1..1000, was " + keysPerThread);
        }
        if (backend == null) {
            throw new IllegalArgumentException("backend must not be null");
        }
        if (cudart == null || out == null) {
            throw new IllegalArgumentException("cudart and out must not be null (use Optional.empty())");
        }
        faults = List.copyOf(faults);
        for (Fault fault : faults) {
            if (backend == BackendChoice.HOST && fault.needsFake) {
                throw new IllegalArgumentException("fault " + fault + " needs the fake libcudart (--backend cuda)");
            }
            if (backend == BackendChoice.CUDA && (fault == Fault.DISK_FULL || fault == Fault.TRUNCATE_EXTENT)) {
                throw new IllegalArgumentException("fault " + fault + " runs on the host backend only (see Fault)");
            }
        }
    }

    /**
     * The bound past which one operation counts as a hang: three transfer timeouts (a move may wait for the copies
     * that make room, its own copy and a clean-up) plus 10 s for a machine shared with other work.
     */
    Duration hangBound() {
        return transferTimeout.multipliedBy(3).plusSeconds(10);
    }

    /** The libcudart to load for {@link BackendChoice#CUDA}: {@code --cudart}, else {@code -Dkvtier.cudart}, else the fake. */
    Path cudaLibrary() {
        if (cudart.isPresent()) {
            return cudart.get();
        }
        String property = System.getProperty("kvtier.cudart");
        if (property != null && !property.isBlank()) {
            return Path.of(property);
        }
        return Path.of(System.getProperty("kvtier.native.dir", "native/build"), "fakecudart", "libcudart.so");
    }

    private static void requirePositive(Duration value, String name) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be > 0, was " + value);
        }
    }
}
