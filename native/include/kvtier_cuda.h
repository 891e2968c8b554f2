/*
 * kvtier_cuda.h -- the one header the kvtier CUDA bindings are generated from.
 *
 * jextract reads this file with the @argfile native/jextract/cudart.args, which names every symbol kvtier binds
 * (that file is THE list: the Java bindings, the ABI printer native/abi and the fake libcudart native/fakecudart
 * all cover exactly it, and a JUnit test checks that they do). Everything here is plain CUDA runtime API: kvtier
 * adds no C code of its own to the bound surface.
 *
 * ABI facts the Java side must honour (checked by native/abi/cudart_abi against the installed headers/library):
 *
 *  - cudaMemcpyBatchAsync changed ABI between CUDA 12 and 13. The symbol name is the same in both:
 *      12.8, 12.9 (runtime version 12080..12099), 9 arguments:
 *        cudaError_t cudaMemcpyBatchAsync(void **dsts, void **srcs, size_t *sizes, size_t count,
 *                                         struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
 *                                         size_t *failIdx, cudaStream_t stream);
 *      13.x (runtime version >= 13000), 8 arguments (failIdx removed):
 *        cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs, const size_t *sizes,
 *                                         size_t count, struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs,
 *                                         size_t numAttrs, cudaStream_t stream);
 *      before 12.8 the symbol does not exist. The header we generate from is 13.x, so jextract emits the 8-argument
 *      descriptor; the 9-argument one is hand-maintained on the Java side and chosen by cudaRuntimeGetVersion().
 *      Calling with the wrong descriptor is undefined behaviour (on x86-64 the stream lands in failIdx), never
 *      "an error code": choose by version, and for a version below 12080 do not call it at all.
 *    The batch API also rejects the legacy NULL stream (cudaErrorInvalidValue): use a created stream.
 *  - struct cudaMemcpyAttributes (12.8 and 13.0 identical): srcAccessOrder (enum, 4 bytes), srcLocHint and dstLocHint
 *    (struct cudaMemLocation {enum type; int id;}, 8 bytes each), flags (unsigned int); 24 bytes, alignment 4.
 *  - Enums are C `int` (4 bytes); cudaError_t is `enum cudaError`; cudaStream_t, cudaEvent_t are opaque pointers;
 *    cudaHostFn_t is `void (*)(void *userData)` called on a runtime thread (no CUDA calls from inside it).
 *  - cudaGetErrorName/cudaGetErrorString never fail; for a code the library does not know, both return the text
 *    "unrecognized error code" (measured on libcudart 13.0).
 *  - Without a driver, libcudart 13.0 still answers cudaRuntimeGetVersion (13000), cudaDriverGetVersion
 *    (cudaSuccess, 0) and the error-text functions; everything that needs the device returns
 *    cudaErrorInsufficientDriver (35), sticky: cudaGetLastError keeps returning it.
 *  - Symbols in the real libcudart.so.13 carry the ELF version node "libcudart.so.13"; dlsym finds them by plain name.
 */
#ifndef KVTIER_CUDA_H
#define KVTIER_CUDA_H

#include <cuda_runtime_api.h>

#endif /* KVTIER_CUDA_H */
