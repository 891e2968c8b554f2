package dev.kvtier.cuda;

import dev.kvtier.cuda.runtime.CudartDescriptors;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The downcall handles of one loaded libcudart: the descriptors of {@link CudartDescriptors} (the same ones
 * {@code cudart_h} uses) linked against that library's own lookup, so several libraries can live in one JVM.
 * Immutable after construction, thread-safe.
 */
@SuppressWarnings("restricted") // binding native code is this class's job; run with --enable-native-access
final class BoundCudart {

    final MethodHandle cudaGetDeviceCount;
    final MethodHandle cudaSetDevice;
    final MethodHandle cudaGetDevice;
    final MethodHandle cudaDeviceGetAttribute;
    final MethodHandle cudaMemGetInfo;
    final MethodHandle cudaRuntimeGetVersion;
    final MethodHandle cudaDriverGetVersion;
    final MethodHandle cudaDeviceSynchronize;
    final MethodHandle cudaDeviceCanAccessPeer;
    final MethodHandle cudaGetErrorName;
    final MethodHandle cudaGetErrorString;
    final MethodHandle cudaGetLastError;
    final MethodHandle cudaPeekAtLastError;
    final MethodHandle cudaMalloc;
    final MethodHandle cudaFree;
    final MethodHandle cudaHostAlloc;
    final MethodHandle cudaFreeHost;
    final MethodHandle cudaHostRegister;
    final MethodHandle cudaHostUnregister;
    final MethodHandle cudaHostGetDevicePointer;
    final MethodHandle cudaMemsetAsync;
    final MethodHandle cudaMemcpyAsync;
    final MethodHandle cudaMemcpyPeerAsync;
    final MethodHandle cudaStreamCreateWithFlags;
    final MethodHandle cudaStreamDestroy;
    final MethodHandle cudaStreamSynchronize;
    final MethodHandle cudaStreamQuery;
    final MethodHandle cudaStreamWaitEvent;
    final MethodHandle cudaLaunchHostFunc;
    final MethodHandle cudaEventCreateWithFlags;
    final MethodHandle cudaEventRecord;
    final MethodHandle cudaEventQuery;
    final MethodHandle cudaEventSynchronize;
    final MethodHandle cudaEventElapsedTime;
    final MethodHandle cudaEventDestroy;

    /**
     * Links every bound function except the batch copy, whose ABI depends on the runtime version
     * ({@link CudaRuntime} links it).
     *
     * @throws IllegalStateException naming every missing symbol when the library lacks some
     */
    BoundCudart(SymbolLookup library) {
        List<String> missing = new ArrayList<>();
        cudaGetDeviceCount = link(library, "cudaGetDeviceCount", missing);
        cudaSetDevice = link(library, "cudaSetDevice", missing);
        cudaGetDevice = link(library, "cudaGetDevice", missing);
        cudaDeviceGetAttribute = link(library, "cudaDeviceGetAttribute", missing);
        cudaMemGetInfo = link(library, "cudaMemGetInfo", missing);
        cudaRuntimeGetVersion = link(library, "cudaRuntimeGetVersion", missing);
        cudaDriverGetVersion = link(library, "cudaDriverGetVersion", missing);
        cudaDeviceSynchronize = link(library, "cudaDeviceSynchronize", missing);
        cudaDeviceCanAccessPeer = link(library, "cudaDeviceCanAccessPeer", missing);
        cudaGetErrorName = link(library, "cudaGetErrorName", missing);
        cudaGetErrorString = link(library, "cudaGetErrorString", missing);
        cudaGetLastError = link(library, "cudaGetLastError", missing);
        cudaPeekAtLastError = link(library, "cudaPeekAtLastError", missing);
        cudaMalloc = link(library, "cudaMalloc", missing);
        cudaFree = link(library, "cudaFree", missing);
        cudaHostAlloc = link(library, "cudaHostAlloc", missing);
        cudaFreeHost = link(library, "cudaFreeHost", missing);
        cudaHostRegister = link(library, "cudaHostRegister", missing);
        cudaHostUnregister = link(library, "cudaHostUnregister", missing);
        cudaHostGetDevicePointer = link(library, "cudaHostGetDevicePointer", missing);
        cudaMemsetAsync = link(library, "cudaMemsetAsync", missing);
        cudaMemcpyAsync = link(library, "cudaMemcpyAsync", missing);
        cudaMemcpyPeerAsync = link(library, "cudaMemcpyPeerAsync", missing);
        cudaStreamCreateWithFlags = link(library, "cudaStreamCreateWithFlags", missing);
        cudaStreamDestroy = link(library, "cudaStreamDestroy", missing);
        cudaStreamSynchronize = link(library, "cudaStreamSynchronize", missing);
        cudaStreamQuery = link(library, "cudaStreamQuery", missing);
        cudaStreamWaitEvent = link(library, "cudaStreamWaitEvent", missing);
        cudaLaunchHostFunc = link(library, "cudaLaunchHostFunc", missing);
        cudaEventCreateWithFlags = link(library, "cudaEventCreateWithFlags", missing);
        cudaEventRecord = link(library, "cudaEventRecord", missing);
        cudaEventQuery = link(library, "cudaEventQuery", missing);
        cudaEventSynchronize = link(library, "cudaEventSynchronize", missing);
        cudaEventElapsedTime = link(library, "cudaEventElapsedTime", missing);
        cudaEventDestroy = link(library, "cudaEventDestroy", missing);
        if (!missing.isEmpty()) {
            throw new IllegalStateException("not a usable libcudart: it does not export " + missing);
        }
    }

    private static MethodHandle link(SymbolLookup library, String bindingName, List<String> missing) {
        String symbol = CudartDescriptors.symbolOf(bindingName);
        Optional<MemorySegment> address = library.find(symbol);
        if (address.isEmpty()) {
            missing.add(symbol);
            return null;
        }
        return downcall(address.get(), CudartDescriptors.byBindingName().get(bindingName),
                CudartDescriptors.NEVER_BLOCKING.contains(bindingName));
    }

    static MethodHandle downcall(MemorySegment address, FunctionDescriptor descriptor, boolean neverBlocks) {
        return neverBlocks
                ? Linker.nativeLinker().downcallHandle(address, descriptor, Linker.Option.critical(false))
                : Linker.nativeLinker().downcallHandle(address, descriptor);
    }
}
