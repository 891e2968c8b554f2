/**
 * Loader for libcudart and a thin, checked, owner-visible layer over the raw bindings of
 * {@code dev.kvtier.cuda.runtime} (internal to this module).
 *
 * <ul>
 *   <li>{@link dev.kvtier.cuda.CudaRuntime#probe()} finds a libcudart ({@link dev.kvtier.cuda.CudaLibraryLoader}: system
 *       property {@code kvtier.cudart}, env {@code KVTIER_CUDART}, {@code $CUDA_HOME}/{@code $CUDA_PATH}, /usr/local/cuda,
 *       then the loader names) and returns a {@link dev.kvtier.cuda.CudaProbe}: a usable runtime with at least one
 *       device, or the reason there is none (every place tried, the CUDA error such as no driver or no device). It never
 *       throws for "no GPU".</li>
 *   <li>Every {@code cudaError_t} is checked: failures throw {@link dev.kvtier.cuda.CudaException} with the call, code,
 *       name and text.</li>
 *   <li>Streams, events, device and pinned allocations and host registrations are {@code AutoCloseable} with idempotent
 *       close; device memory is a sized {@code MemorySegment} the host never dereferences; out-parameters live in
 *       confined arenas for the duration of one call.</li>
 *   <li>Host callbacks: one upcall stub for the process; futures are completed on kvtier's executor, never on the CUDA
 *       callback thread.</li>
 * </ul>
 *
 * <p>Native access must be enabled for this code: on the class path run with
 * {@code --enable-native-access=ALL-UNNAMED} (or, in a named module, {@code --enable-native-access=<module>}); without it
 * JDK 22-23 warn and later JDKs may refuse.
 */
package dev.kvtier.cuda;
