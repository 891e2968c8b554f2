package dev.kvtier.cuda;

import java.util.List;
import java.util.Optional;

/**
 * What {@link CudaRuntime#probe()} found: a usable runtime, or why there is none. Never thrown, never null: "no GPU" is a
 * normal outcome the caller decides on (e.g. falls back to the host backend). Immutable.
 */
public sealed interface CudaProbe permits CudaProbe.Available, CudaProbe.Unavailable {

    /** Whether a runtime with at least one device is available. */
    boolean isUsable();

    /** The runtime, when usable. */
    Optional<CudaRuntime> runtime();

    /** One line (or a few) for logs and {@code backendDescription()}: the runtime, or the reason it is unusable. */
    String describe();

    /** A loaded runtime with at least one device. */
    record Available(CudaRuntime cuda) implements CudaProbe {
        public Available {
            Arguments.requireNonNull(cuda, "cuda");
        }

        @Override
        public boolean isUsable() {
            return true;
        }

        @Override
        public Optional<CudaRuntime> runtime() {
            return Optional.of(cuda);
        }

        @Override
        public String describe() {
            return cuda.description();
        }
    }

    /**
     * No usable runtime.
     *
     * @param reason    why, in a sentence that names the fix where there is one
     * @param attempts  every place the loader tried, with why each failed (the last one succeeded when a library loaded
     *                  but is unusable)
     * @param cudaError the CUDA error that made a loaded runtime unusable (no driver, no device), if that was the reason
     */
    record Unavailable(String reason, List<CudaLibraryLoader.LoadAttempt> attempts, Optional<CudaException> cudaError)
            implements CudaProbe {
        public Unavailable {
            Arguments.requireNonNull(reason, "reason");
            attempts = List.copyOf(attempts);
            Arguments.requireNonNull(cudaError, "cudaError");
        }

        @Override
        public boolean isUsable() {
            return false;
        }

        @Override
        public Optional<CudaRuntime> runtime() {
            return Optional.empty();
        }

        @Override
        public String describe() {
            return reason;
        }
    }
}
