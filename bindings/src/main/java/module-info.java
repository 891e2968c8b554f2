/**
 * FFM bindings to the CUDA runtime. Exports the thin safe layer ({@code dev.kvtier.cuda}: the loader, the probe,
 * {@code CudaException}, streams, events and allocations, each with one owner); the raw jextract-layout bindings
 * ({@code dev.kvtier.cuda.runtime}) stay inside. This is the module that calls the restricted FFM methods (linker
 * downcalls and upcalls, library lookup, {@code reinterpret}): run applications with
 * {@code --enable-native-access=dev.kvtier.bindings} on the module path ({@code ALL-UNNAMED} on the class path).
 */
module dev.kvtier.bindings {
    exports dev.kvtier.cuda;
}
