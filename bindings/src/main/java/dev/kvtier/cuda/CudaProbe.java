package dev.kvtier.cuda;

import java.util.List;
import java.util.Optional;

/**
 * What {@link CudaRuntime#probe()} found: a usable runtime, or why there is none. Never thrown, never null: "no GPU" is a
 * normal outcome the caller decides on (e.g. falls back to the host backend). Immutable.
 */
public sealed interface CudaProbe permits CudaProbe.Available, CudaProbe.Unavailable {

    /**
     * Whether a runtime with at least one device is available.
     *
     * @return {@code true} exactly for {@link Available}
     */
    boolean isUsable();

    /**
     * The runtime, when usable.
     *
     * @return the runtime for {@link Available}, empty for {@link Unavailable}
     */
    Optional<CudaRuntime> runtime();

    /**
     * One line (or a few) for logs and {@code backendDescription()}: the runtime, or the reason it is unusable.
     *
     * @return {@link CudaRuntime#description()} when usable, else the reason, never null
     */
    String describe();

    /**
     * A loaded runtime with at least one device.
     *
     * @param cuda the runtime the probe loaded, not null
     */
    record Available(CudaRuntime cuda) implements CudaProbe {
        /**
         * Wraps a usable runtime.
         *
         * @throws IllegalArgumentException if {@code cuda} is null
         */
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
        /**
         * Records why no runtime is usable; {@code attempts} is copied.
         *
         * @throws IllegalArgumentException if {@code reason} or {@code cudaError} is null
         * @throws NullPointerException     if {@code attempts} is or contains null ({@link List#copyOf})
         */
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
