// Written by hand in exactly the shape jextract 22+ generates from native/jextract/cudart.args (jextract is not
// installable from the registries here); native/jextract/regenerate.sh runs the real jextract where one exists, so the
// two can be diffed. Deviations from jextract's output are marked "kvtier:" below and listed in package-info.java.

package dev.kvtier.cuda.runtime;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.util.Arrays;
import java.util.stream.Collectors;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.OfInt;
import static java.lang.foreign.ValueLayout.OfLong;

/**
 * Raw CUDA runtime bindings, one static method per bound function of {@code cuda_runtime_api.h}, in the shape jextract
 * generates: {@code f(...)}, {@code f$descriptor()}, {@code f$handle()}, {@code f$address()}, constants as static getters
 * and typedef layouts.
 *
 * <p>Every function returns the raw {@code cudaError_t} (or {@code const char *}); nothing is checked here, and pointers
 * are plain {@link MemorySegment}s. Use {@code dev.kvtier.cuda.CudaRuntime} for checked calls and owned resources.
 *
 * <p>Symbols are resolved lazily, per function, on first use, in the libcudart that
 * {@code dev.kvtier.cuda.CudaLibraryLoader} selects for the whole process (see {@link #SYMBOL_LOOKUP}); an unresolved symbol
 * throws {@link UnsatisfiedLinkError} on first use of that function, as with jextract. Thread-safe: all state is final.
 */
@SuppressWarnings({"unused", "restricted"}) // kvtier: restricted added; binding native code is this class's job
public class cudart_h {

    cudart_h() {
        // Should not be called directly
    }

    static final Arena LIBRARY_ARENA = Arena.ofAuto();
    static final boolean TRACE_DOWNCALLS = Boolean.getBoolean("jextract.trace.downcalls");

    static void traceDowncall(String name, Object... args) {
         String traceArgs = Arrays.stream(args)
                       .map(Object::toString)
                       .collect(Collectors.joining(", "));
         System.out.printf("%s(%s)\n", name, traceArgs);
    }

    static MemorySegment findOrThrow(String symbol) {
        return SYMBOL_LOOKUP.find(symbol)
            .orElseThrow(() -> new UnsatisfiedLinkError("unresolved symbol: " + symbol));
    }

    static MethodHandle upcallHandle(Class<?> fi, String name, FunctionDescriptor fdesc) {
        try {
            return MethodHandles.lookup().findVirtual(fi, name, fdesc.toMethodType());
        } catch (ReflectiveOperationException ex) {
            throw new AssertionError(ex);
        }
    }

    static MemoryLayout align(MemoryLayout layout, long align) {
        return switch (layout) {
            case java.lang.foreign.PaddingLayout p -> p;
            case ValueLayout v -> v.withByteAlignment(align);
            case java.lang.foreign.GroupLayout g -> {
                MemoryLayout[] alignedMembers = g.memberLayouts().stream()
                        .map(m -> align(m, align)).toArray(MemoryLayout[]::new);
                yield g instanceof java.lang.foreign.StructLayout ?
                        MemoryLayout.structLayout(alignedMembers) : MemoryLayout.unionLayout(alignedMembers);
            }
            case java.lang.foreign.SequenceLayout s -> MemoryLayout.sequenceLayout(s.elementCount(), align(s.elementLayout(), align));
        };
    }

    /**
     * kvtier: jextract would build this from its fixed {@code -l} library
     * ({@code SymbolLookup.libraryLookup(System.mapLibraryName("cudart"), LIBRARY_ARENA).or(loaderLookup()).or(defaultLookup())}).
     * We resolve instead in the libcudart chosen by our loader (system property {@code kvtier.cudart}, env
     * {@code KVTIER_CUDART}, {@code $CUDA_HOME}/{@code $CUDA_PATH}, /usr/local/cuda, then the loader names), because the
     * library file differs per machine (CUDA 12 vs 13, a host-emulated fake in CI) and a fixed name finds the wrong one or
     * none. The choice is process-wide and made at the first symbol resolution: these static bindings can serve one library
     * per JVM. Code that needs another library in the same JVM (tests against the fake and the real runtime) goes through
     * {@code dev.kvtier.cuda.CudaRuntime} instances, which link the same descriptors against their own lookup.
     */
    static final SymbolLookup SYMBOL_LOOKUP = name -> dev.kvtier.cuda.CudaLibraryLoader.processWideLookup().find(name);

    public static final ValueLayout.OfBoolean C_BOOL = ValueLayout.JAVA_BOOLEAN;
    public static final ValueLayout.OfByte C_CHAR = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfShort C_SHORT = ValueLayout.JAVA_SHORT;
    public static final ValueLayout.OfInt C_INT = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong C_LONG_LONG = ValueLayout.JAVA_LONG;
    public static final ValueLayout.OfFloat C_FLOAT = ValueLayout.JAVA_FLOAT;
    public static final ValueLayout.OfDouble C_DOUBLE = ValueLayout.JAVA_DOUBLE;
    public static final AddressLayout C_POINTER = ValueLayout.ADDRESS
            .withTargetLayout(MemoryLayout.sequenceLayout(java.lang.Long.MAX_VALUE, JAVA_BYTE));
    public static final ValueLayout.OfLong C_LONG = ValueLayout.JAVA_LONG;

    private static final int CUDART_VERSION = (int)13000L;
    /**
     * {@snippet lang=c :
     * CUDART_VERSION = 13000
     * }
     */
    public static int CUDART_VERSION() {
        return CUDART_VERSION;
    }
    private static final int cudaMemcpyHostToHost = (int)0L;
    /**
     * {@snippet lang=c :
     * cudaMemcpyHostToHost = 0
     * }
     */
    public static int cudaMemcpyHostToHost() {
        return cudaMemcpyHostToHost;
    }
    private static final int cudaMemcpyHostToDevice = (int)1L;
    /**
     * {@snippet lang=c :
     * cudaMemcpyHostToDevice = 1
     * }
     */
    public static int cudaMemcpyHostToDevice() {
        return cudaMemcpyHostToDevice;
    }
    private static final int cudaMemcpyDeviceToHost = (int)2L;
    /**
     * {@snippet lang=c :
     * cudaMemcpyDeviceToHost = 2
     * }
     */
    public static int cudaMemcpyDeviceToHost() {
        return cudaMemcpyDeviceToHost;
    }
    private static final int cudaMemcpyDeviceToDevice = (int)3L;
    /**
     * {@snippet lang=c :
     * cudaMemcpyDeviceToDevice = 3
     * }
     */
    public static int cudaMemcpyDeviceToDevice() {
        return cudaMemcpyDeviceToDevice;
    }
    private static final int cudaMemcpyDefault = (int)4L;
    /**
     * {@snippet lang=c :
     * cudaMemcpyDefault = 4
     * }
     */
    public static int cudaMemcpyDefault() {
        return cudaMemcpyDefault;
    }
    private static final int cudaHostAllocDefault = (int)0L;
    /**
     * {@snippet lang=c :
     * cudaHostAllocDefault = 0
     * }
     */
    public static int cudaHostAllocDefault() {
        return cudaHostAllocDefault;
    }
    private static final int cudaHostAllocPortable = (int)1L;
    /**
     * {@snippet lang=c :
     * cudaHostAllocPortable = 1
     * }
     */
    public static int cudaHostAllocPortable() {
        return cudaHostAllocPortable;
    }
    private static final int cudaHostAllocMapped = (int)2L;
    /**
     * {@snippet lang=c :
     * cudaHostAllocMapped = 2
     * }
     */
    public static int cudaHostAllocMapped() {
        return cudaHostAllocMapped;
    }
    private static final int cudaHostAllocWriteCombined = (int)4L;
    /**
     * {@snippet lang=c :
     * cudaHostAllocWriteCombined = 4
     * }
     */
    public static int cudaHostAllocWriteCombined() {
        return cudaHostAllocWriteCombined;
    }
    private static final int cudaHostRegisterDefault = (int)0L;
    /**
     * {@snippet lang=c :
     * cudaHostRegisterDefault = 0
     * }
     */
    public static int cudaHostRegisterDefault() {
        return cudaHostRegisterDefault;
    }
    private static final int cudaHostRegisterPortable = (int)1L;
    /**
     * {@snippet lang=c :
     * cudaHostRegisterPortable = 1
     * }
     */
    public static int cudaHostRegisterPortable() {
        return cudaHostRegisterPortable;
    }
    private static final int cudaHostRegisterMapped = (int)2L;
    /**
     * {@snippet lang=c :
     * cudaHostRegisterMapped = 2
     * }
     */
    public static int cudaHostRegisterMapped() {
        return cudaHostRegisterMapped;
    }
    private static final int cudaHostRegisterIoMemory = (int)4L;
    /**
     * {@snippet lang=c :
     * cudaHostRegisterIoMemory = 4
     * }
     */
    public static int cudaHostRegisterIoMemory() {
        return cudaHostRegisterIoMemory;
    }
    private static final int cudaHostRegisterReadOnly = (int)8L;
    /**
     * {@snippet lang=c :
     * cudaHostRegisterReadOnly = 8
     * }
     */
    public static int cudaHostRegisterReadOnly() {
        return cudaHostRegisterReadOnly;
    }
    private static final int cudaStreamDefault = (int)0L;
    /**
     * {@snippet lang=c :
     * cudaStreamDefault = 0
     * }
     */
    public static int cudaStreamDefault() {
        return cudaStreamDefault;
    }
    private static final int cudaStreamNonBlocking = (int)1L;
    /**
     * {@snippet lang=c :
     * cudaStreamNonBlocking = 1
     * }
     */
    public static int cudaStreamNonBlocking() {
        return cudaStreamNonBlocking;
    }
    private static final int cudaEventDefault = (int)0L;
    /**
     * {@snippet lang=c :
     * cudaEventDefault = 0
     * }
     */
    public static int cudaEventDefault() {
        return cudaEventDefault;
    }
    private static final int cudaEventBlockingSync = (int)1L;
    /**
     * {@snippet lang=c :
     * cudaEventBlockingSync = 1
     * }
     */
    public static int cudaEventBlockingSync() {
        return cudaEventBlockingSync;
    }
    private static final int cudaEventDisableTiming = (int)2L;
    /**
     * {@snippet lang=c :
     * cudaEventDisableTiming = 2
     * }
     */
    public static int cudaEventDisableTiming() {
        return cudaEventDisableTiming;
    }
    private static final int cudaEventInterprocess = (int)4L;
    /**
     * {@snippet lang=c :
     * cudaEventInterprocess = 4
     * }
     */
    public static int cudaEventInterprocess() {
        return cudaEventInterprocess;
    }
    private static final int cudaEventWaitDefault = (int)0L;
    /**
     * {@snippet lang=c :
     * cudaEventWaitDefault = 0
     * }
     */
    public static int cudaEventWaitDefault() {
        return cudaEventWaitDefault;
    }
    private static final int cudaSuccess = (int)0L;
    /**
     * {@snippet lang=c :
     * cudaSuccess = 0
     * }
     */
    public static int cudaSuccess() {
        return cudaSuccess;
    }
    private static final int cudaErrorInvalidValue = (int)1L;
    /**
     * {@snippet lang=c :
     * cudaErrorInvalidValue = 1
     * }
     */
    public static int cudaErrorInvalidValue() {
        return cudaErrorInvalidValue;
    }
    private static final int cudaErrorMemoryAllocation = (int)2L;
    /**
     * {@snippet lang=c :
     * cudaErrorMemoryAllocation = 2
     * }
     */
    public static int cudaErrorMemoryAllocation() {
        return cudaErrorMemoryAllocation;
    }
    private static final int cudaErrorInitializationError = (int)3L;
    /**
     * {@snippet lang=c :
     * cudaErrorInitializationError = 3
     * }
     */
    public static int cudaErrorInitializationError() {
        return cudaErrorInitializationError;
    }
    private static final int cudaErrorCudartUnloading = (int)4L;
    /**
     * {@snippet lang=c :
     * cudaErrorCudartUnloading = 4
     * }
     */
    public static int cudaErrorCudartUnloading() {
        return cudaErrorCudartUnloading;
    }
    private static final int cudaErrorInvalidDevicePointer = (int)17L;
    /**
     * {@snippet lang=c :
     * cudaErrorInvalidDevicePointer = 17
     * }
     */
    public static int cudaErrorInvalidDevicePointer() {
        return cudaErrorInvalidDevicePointer;
    }
    private static final int cudaErrorInvalidMemcpyDirection = (int)21L;
    /**
     * {@snippet lang=c :
     * cudaErrorInvalidMemcpyDirection = 21
     * }
     */
    public static int cudaErrorInvalidMemcpyDirection() {
        return cudaErrorInvalidMemcpyDirection;
    }
    private static final int cudaErrorStubLibrary = (int)34L;
    /**
     * {@snippet lang=c :
     * cudaErrorStubLibrary = 34
     * }
     */
    public static int cudaErrorStubLibrary() {
        return cudaErrorStubLibrary;
    }
    private static final int cudaErrorInsufficientDriver = (int)35L;
    /**
     * {@snippet lang=c :
     * cudaErrorInsufficientDriver = 35
     * }
     */
    public static int cudaErrorInsufficientDriver() {
        return cudaErrorInsufficientDriver;
    }
    private static final int cudaErrorCallRequiresNewerDriver = (int)36L;
    /**
     * {@snippet lang=c :
     * cudaErrorCallRequiresNewerDriver = 36
     * }
     */
    public static int cudaErrorCallRequiresNewerDriver() {
        return cudaErrorCallRequiresNewerDriver;
    }
    private static final int cudaErrorDevicesUnavailable = (int)46L;
    /**
     * {@snippet lang=c :
     * cudaErrorDevicesUnavailable = 46
     * }
     */
    public static int cudaErrorDevicesUnavailable() {
        return cudaErrorDevicesUnavailable;
    }
    private static final int cudaErrorNoDevice = (int)100L;
    /**
     * {@snippet lang=c :
     * cudaErrorNoDevice = 100
     * }
     */
    public static int cudaErrorNoDevice() {
        return cudaErrorNoDevice;
    }
    private static final int cudaErrorInvalidDevice = (int)101L;
    /**
     * {@snippet lang=c :
     * cudaErrorInvalidDevice = 101
     * }
     */
    public static int cudaErrorInvalidDevice() {
        return cudaErrorInvalidDevice;
    }
    private static final int cudaErrorPeerAccessUnsupported = (int)217L;
    /**
     * {@snippet lang=c :
     * cudaErrorPeerAccessUnsupported = 217
     * }
     */
    public static int cudaErrorPeerAccessUnsupported() {
        return cudaErrorPeerAccessUnsupported;
    }
    private static final int cudaErrorInvalidResourceHandle = (int)400L;
    /**
     * {@snippet lang=c :
     * cudaErrorInvalidResourceHandle = 400
     * }
     */
    public static int cudaErrorInvalidResourceHandle() {
        return cudaErrorInvalidResourceHandle;
    }
    private static final int cudaErrorIllegalState = (int)401L;
    /**
     * {@snippet lang=c :
     * cudaErrorIllegalState = 401
     * }
     */
    public static int cudaErrorIllegalState() {
        return cudaErrorIllegalState;
    }
    private static final int cudaErrorNotReady = (int)600L;
    /**
     * {@snippet lang=c :
     * cudaErrorNotReady = 600
     * }
     */
    public static int cudaErrorNotReady() {
        return cudaErrorNotReady;
    }
    private static final int cudaErrorIllegalAddress = (int)700L;
    /**
     * {@snippet lang=c :
     * cudaErrorIllegalAddress = 700
     * }
     */
    public static int cudaErrorIllegalAddress() {
        return cudaErrorIllegalAddress;
    }
    private static final int cudaErrorHostMemoryAlreadyRegistered = (int)712L;
    /**
     * {@snippet lang=c :
     * cudaErrorHostMemoryAlreadyRegistered = 712
     * }
     */
    public static int cudaErrorHostMemoryAlreadyRegistered() {
        return cudaErrorHostMemoryAlreadyRegistered;
    }
    private static final int cudaErrorHostMemoryNotRegistered = (int)713L;
    /**
     * {@snippet lang=c :
     * cudaErrorHostMemoryNotRegistered = 713
     * }
     */
    public static int cudaErrorHostMemoryNotRegistered() {
        return cudaErrorHostMemoryNotRegistered;
    }
    private static final int cudaErrorLaunchFailure = (int)719L;
    /**
     * {@snippet lang=c :
     * cudaErrorLaunchFailure = 719
     * }
     */
    public static int cudaErrorLaunchFailure() {
        return cudaErrorLaunchFailure;
    }
    private static final int cudaErrorNotPermitted = (int)800L;
    /**
     * {@snippet lang=c :
     * cudaErrorNotPermitted = 800
     * }
     */
    public static int cudaErrorNotPermitted() {
        return cudaErrorNotPermitted;
    }
    private static final int cudaErrorNotSupported = (int)801L;
    /**
     * {@snippet lang=c :
     * cudaErrorNotSupported = 801
     * }
     */
    public static int cudaErrorNotSupported() {
        return cudaErrorNotSupported;
    }
    private static final int cudaErrorSystemDriverMismatch = (int)803L;
    /**
     * {@snippet lang=c :
     * cudaErrorSystemDriverMismatch = 803
     * }
     */
    public static int cudaErrorSystemDriverMismatch() {
        return cudaErrorSystemDriverMismatch;
    }
    private static final int cudaErrorUnknown = (int)999L;
    /**
     * {@snippet lang=c :
     * cudaErrorUnknown = 999
     * }
     */
    public static int cudaErrorUnknown() {
        return cudaErrorUnknown;
    }
    private static final int cudaDevAttrAsyncEngineCount = (int)40L;
    /**
     * {@snippet lang=c :
     * cudaDevAttrAsyncEngineCount = 40
     * }
     */
    public static int cudaDevAttrAsyncEngineCount() {
        return cudaDevAttrAsyncEngineCount;
    }
    private static final int cudaDevAttrUnifiedAddressing = (int)41L;
    /**
     * {@snippet lang=c :
     * cudaDevAttrUnifiedAddressing = 41
     * }
     */
    public static int cudaDevAttrUnifiedAddressing() {
        return cudaDevAttrUnifiedAddressing;
    }
    private static final int cudaDevAttrPageableMemoryAccess = (int)88L;
    /**
     * {@snippet lang=c :
     * cudaDevAttrPageableMemoryAccess = 88
     * }
     */
    public static int cudaDevAttrPageableMemoryAccess() {
        return cudaDevAttrPageableMemoryAccess;
    }
    private static final int cudaDevAttrConcurrentManagedAccess = (int)89L;
    /**
     * {@snippet lang=c :
     * cudaDevAttrConcurrentManagedAccess = 89
     * }
     */
    public static int cudaDevAttrConcurrentManagedAccess() {
        return cudaDevAttrConcurrentManagedAccess;
    }
    private static final int cudaDevAttrCanUseHostPointerForRegisteredMem = (int)91L;
    /**
     * {@snippet lang=c :
     * cudaDevAttrCanUseHostPointerForRegisteredMem = 91
     * }
     */
    public static int cudaDevAttrCanUseHostPointerForRegisteredMem() {
        return cudaDevAttrCanUseHostPointerForRegisteredMem;
    }
    private static final int cudaDevAttrHostRegisterSupported = (int)99L;
    /**
     * {@snippet lang=c :
     * cudaDevAttrHostRegisterSupported = 99
     * }
     */
    public static int cudaDevAttrHostRegisterSupported() {
        return cudaDevAttrHostRegisterSupported;
    }
    private static final int cudaDevAttrHostRegisterReadOnlySupported = (int)113L;
    /**
     * {@snippet lang=c :
     * cudaDevAttrHostRegisterReadOnlySupported = 113
     * }
     */
    public static int cudaDevAttrHostRegisterReadOnlySupported() {
        return cudaDevAttrHostRegisterReadOnlySupported;
    }
    private static final int cudaDevAttrComputeCapabilityMajor = (int)75L;
    /**
     * {@snippet lang=c :
     * cudaDevAttrComputeCapabilityMajor = 75
     * }
     */
    public static int cudaDevAttrComputeCapabilityMajor() {
        return cudaDevAttrComputeCapabilityMajor;
    }
    private static final int cudaDevAttrComputeCapabilityMinor = (int)76L;
    /**
     * {@snippet lang=c :
     * cudaDevAttrComputeCapabilityMinor = 76
     * }
     */
    public static int cudaDevAttrComputeCapabilityMinor() {
        return cudaDevAttrComputeCapabilityMinor;
    }
    private static final int cudaDevAttrMultiProcessorCount = (int)16L;
    /**
     * {@snippet lang=c :
     * cudaDevAttrMultiProcessorCount = 16
     * }
     */
    public static int cudaDevAttrMultiProcessorCount() {
        return cudaDevAttrMultiProcessorCount;
    }
    private static final int cudaMemcpySrcAccessOrderInvalid = (int)0L;
    /**
     * {@snippet lang=c :
     * cudaMemcpySrcAccessOrderInvalid = 0
     * }
     */
    public static int cudaMemcpySrcAccessOrderInvalid() {
        return cudaMemcpySrcAccessOrderInvalid;
    }
    private static final int cudaMemcpySrcAccessOrderStream = (int)1L;
    /**
     * {@snippet lang=c :
     * cudaMemcpySrcAccessOrderStream = 1
     * }
     */
    public static int cudaMemcpySrcAccessOrderStream() {
        return cudaMemcpySrcAccessOrderStream;
    }
    private static final int cudaMemcpySrcAccessOrderDuringApiCall = (int)2L;
    /**
     * {@snippet lang=c :
     * cudaMemcpySrcAccessOrderDuringApiCall = 2
     * }
     */
    public static int cudaMemcpySrcAccessOrderDuringApiCall() {
        return cudaMemcpySrcAccessOrderDuringApiCall;
    }
    private static final int cudaMemcpySrcAccessOrderAny = (int)3L;
    /**
     * {@snippet lang=c :
     * cudaMemcpySrcAccessOrderAny = 3
     * }
     */
    public static int cudaMemcpySrcAccessOrderAny() {
        return cudaMemcpySrcAccessOrderAny;
    }
    private static final int cudaMemcpyFlagDefault = (int)0L;
    /**
     * {@snippet lang=c :
     * cudaMemcpyFlagDefault = 0
     * }
     */
    public static int cudaMemcpyFlagDefault() {
        return cudaMemcpyFlagDefault;
    }
    private static final int cudaMemcpyFlagPreferOverlapWithCompute = (int)1L;
    /**
     * {@snippet lang=c :
     * cudaMemcpyFlagPreferOverlapWithCompute = 1
     * }
     */
    public static int cudaMemcpyFlagPreferOverlapWithCompute() {
        return cudaMemcpyFlagPreferOverlapWithCompute;
    }
    private static final int cudaMemLocationTypeInvalid = (int)0L;
    /**
     * {@snippet lang=c :
     * cudaMemLocationTypeInvalid = 0
     * }
     */
    public static int cudaMemLocationTypeInvalid() {
        return cudaMemLocationTypeInvalid;
    }
    private static final int cudaMemLocationTypeDevice = (int)1L;
    /**
     * {@snippet lang=c :
     * cudaMemLocationTypeDevice = 1
     * }
     */
    public static int cudaMemLocationTypeDevice() {
        return cudaMemLocationTypeDevice;
    }
    private static final int cudaMemLocationTypeHost = (int)2L;
    /**
     * {@snippet lang=c :
     * cudaMemLocationTypeHost = 2
     * }
     */
    public static int cudaMemLocationTypeHost() {
        return cudaMemLocationTypeHost;
    }
    private static final int cudaMemLocationTypeHostNuma = (int)3L;
    /**
     * {@snippet lang=c :
     * cudaMemLocationTypeHostNuma = 3
     * }
     */
    public static int cudaMemLocationTypeHostNuma() {
        return cudaMemLocationTypeHostNuma;
    }
    private static final int cudaMemLocationTypeHostNumaCurrent = (int)4L;
    /**
     * {@snippet lang=c :
     * cudaMemLocationTypeHostNumaCurrent = 4
     * }
     */
    public static int cudaMemLocationTypeHostNumaCurrent() {
        return cudaMemLocationTypeHostNumaCurrent;
    }
    /**
     * {@snippet lang=c :
     * typedef enum cudaError cudaError_t
     * }
     */
    public static final OfInt cudaError_t = cudart_h.C_INT;
    /**
     * {@snippet lang=c :
     * typedef struct CUstream_st *cudaStream_t
     * }
     */
    public static final AddressLayout cudaStream_t = cudart_h.C_POINTER;
    /**
     * {@snippet lang=c :
     * typedef struct CUevent_st *cudaEvent_t
     * }
     */
    public static final AddressLayout cudaEvent_t = cudart_h.C_POINTER;


    private static class cudaGetDeviceCount {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaGetDeviceCount;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaGetDeviceCount");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaGetDeviceCount(int *count)
     * }
     */
    public static FunctionDescriptor cudaGetDeviceCount$descriptor() {
        return cudaGetDeviceCount.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaGetDeviceCount(int *count)
     * }
     */
    public static MethodHandle cudaGetDeviceCount$handle() {
        return cudaGetDeviceCount.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaGetDeviceCount(int *count)
     * }
     */
    public static MemorySegment cudaGetDeviceCount$address() {
        return cudaGetDeviceCount.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaGetDeviceCount(int *count)
     * }
     */
    public static int cudaGetDeviceCount(MemorySegment count) {
        var mh$ = cudaGetDeviceCount.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaGetDeviceCount", count);
            }
            return (int)mh$.invokeExact(count);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaSetDevice {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaSetDevice;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaSetDevice");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaSetDevice(int device)
     * }
     */
    public static FunctionDescriptor cudaSetDevice$descriptor() {
        return cudaSetDevice.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaSetDevice(int device)
     * }
     */
    public static MethodHandle cudaSetDevice$handle() {
        return cudaSetDevice.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaSetDevice(int device)
     * }
     */
    public static MemorySegment cudaSetDevice$address() {
        return cudaSetDevice.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaSetDevice(int device)
     * }
     */
    public static int cudaSetDevice(int device) {
        var mh$ = cudaSetDevice.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaSetDevice", device);
            }
            return (int)mh$.invokeExact(device);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaGetDevice {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaGetDevice;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaGetDevice");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaGetDevice(int *device)
     * }
     */
    public static FunctionDescriptor cudaGetDevice$descriptor() {
        return cudaGetDevice.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaGetDevice(int *device)
     * }
     */
    public static MethodHandle cudaGetDevice$handle() {
        return cudaGetDevice.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaGetDevice(int *device)
     * }
     */
    public static MemorySegment cudaGetDevice$address() {
        return cudaGetDevice.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaGetDevice(int *device)
     * }
     */
    public static int cudaGetDevice(MemorySegment device) {
        var mh$ = cudaGetDevice.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaGetDevice", device);
            }
            return (int)mh$.invokeExact(device);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaDeviceGetAttribute {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaDeviceGetAttribute;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaDeviceGetAttribute");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
     * }
     */
    public static FunctionDescriptor cudaDeviceGetAttribute$descriptor() {
        return cudaDeviceGetAttribute.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
     * }
     */
    public static MethodHandle cudaDeviceGetAttribute$handle() {
        return cudaDeviceGetAttribute.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
     * }
     */
    public static MemorySegment cudaDeviceGetAttribute$address() {
        return cudaDeviceGetAttribute.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
     * }
     */
    public static int cudaDeviceGetAttribute(MemorySegment value, int attr, int device) {
        var mh$ = cudaDeviceGetAttribute.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaDeviceGetAttribute", value, attr, device);
            }
            return (int)mh$.invokeExact(value, attr, device);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMemGetInfo {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaMemGetInfo;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaMemGetInfo");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
     * }
     */
    public static FunctionDescriptor cudaMemGetInfo$descriptor() {
        return cudaMemGetInfo.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
     * }
     */
    public static MethodHandle cudaMemGetInfo$handle() {
        return cudaMemGetInfo.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
     * }
     */
    public static MemorySegment cudaMemGetInfo$address() {
        return cudaMemGetInfo.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
     * }
     */
    public static int cudaMemGetInfo(MemorySegment free, MemorySegment total) {
        var mh$ = cudaMemGetInfo.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaMemGetInfo", free, total);
            }
            return (int)mh$.invokeExact(free, total);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaRuntimeGetVersion {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaRuntimeGetVersion;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaRuntimeGetVersion");

        // kvtier: critical(false) only because this call never blocks (it skips the thread-state transition; a blocking call here would stall GC).
        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC, Linker.Option.critical(false));
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
     * }
     */
    public static FunctionDescriptor cudaRuntimeGetVersion$descriptor() {
        return cudaRuntimeGetVersion.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
     * }
     */
    public static MethodHandle cudaRuntimeGetVersion$handle() {
        return cudaRuntimeGetVersion.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
     * }
     */
    public static MemorySegment cudaRuntimeGetVersion$address() {
        return cudaRuntimeGetVersion.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
     * }
     */
    public static int cudaRuntimeGetVersion(MemorySegment runtimeVersion) {
        var mh$ = cudaRuntimeGetVersion.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaRuntimeGetVersion", runtimeVersion);
            }
            return (int)mh$.invokeExact(runtimeVersion);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaDriverGetVersion {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaDriverGetVersion;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaDriverGetVersion");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaDriverGetVersion(int *driverVersion)
     * }
     */
    public static FunctionDescriptor cudaDriverGetVersion$descriptor() {
        return cudaDriverGetVersion.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaDriverGetVersion(int *driverVersion)
     * }
     */
    public static MethodHandle cudaDriverGetVersion$handle() {
        return cudaDriverGetVersion.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaDriverGetVersion(int *driverVersion)
     * }
     */
    public static MemorySegment cudaDriverGetVersion$address() {
        return cudaDriverGetVersion.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaDriverGetVersion(int *driverVersion)
     * }
     */
    public static int cudaDriverGetVersion(MemorySegment driverVersion) {
        var mh$ = cudaDriverGetVersion.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaDriverGetVersion", driverVersion);
            }
            return (int)mh$.invokeExact(driverVersion);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaDeviceSynchronize {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaDeviceSynchronize;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaDeviceSynchronize");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaDeviceSynchronize(void)
     * }
     */
    public static FunctionDescriptor cudaDeviceSynchronize$descriptor() {
        return cudaDeviceSynchronize.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaDeviceSynchronize(void)
     * }
     */
    public static MethodHandle cudaDeviceSynchronize$handle() {
        return cudaDeviceSynchronize.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaDeviceSynchronize(void)
     * }
     */
    public static MemorySegment cudaDeviceSynchronize$address() {
        return cudaDeviceSynchronize.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaDeviceSynchronize(void)
     * }
     */
    public static int cudaDeviceSynchronize() {
        var mh$ = cudaDeviceSynchronize.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaDeviceSynchronize");
            }
            return (int)mh$.invokeExact();
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaDeviceCanAccessPeer {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaDeviceCanAccessPeer;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaDeviceCanAccessPeer");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
     * }
     */
    public static FunctionDescriptor cudaDeviceCanAccessPeer$descriptor() {
        return cudaDeviceCanAccessPeer.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
     * }
     */
    public static MethodHandle cudaDeviceCanAccessPeer$handle() {
        return cudaDeviceCanAccessPeer.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
     * }
     */
    public static MemorySegment cudaDeviceCanAccessPeer$address() {
        return cudaDeviceCanAccessPeer.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
     * }
     */
    public static int cudaDeviceCanAccessPeer(MemorySegment canAccessPeer, int device, int peerDevice) {
        var mh$ = cudaDeviceCanAccessPeer.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaDeviceCanAccessPeer", canAccessPeer, device, peerDevice);
            }
            return (int)mh$.invokeExact(canAccessPeer, device, peerDevice);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaGetErrorName {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaGetErrorName;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaGetErrorName");

        // kvtier: critical(false) only because this call never blocks (it skips the thread-state transition; a blocking call here would stall GC).
        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC, Linker.Option.critical(false));
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * const char *cudaGetErrorName(cudaError_t error)
     * }
     */
    public static FunctionDescriptor cudaGetErrorName$descriptor() {
        return cudaGetErrorName.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * const char *cudaGetErrorName(cudaError_t error)
     * }
     */
    public static MethodHandle cudaGetErrorName$handle() {
        return cudaGetErrorName.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * const char *cudaGetErrorName(cudaError_t error)
     * }
     */
    public static MemorySegment cudaGetErrorName$address() {
        return cudaGetErrorName.ADDR;
    }

    /**
     * {@snippet lang=c :
     * const char *cudaGetErrorName(cudaError_t error)
     * }
     */
    public static MemorySegment cudaGetErrorName(int error) {
        var mh$ = cudaGetErrorName.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaGetErrorName", error);
            }
            return (MemorySegment)mh$.invokeExact(error);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaGetErrorString {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaGetErrorString;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaGetErrorString");

        // kvtier: critical(false) only because this call never blocks (it skips the thread-state transition; a blocking call here would stall GC).
        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC, Linker.Option.critical(false));
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * const char *cudaGetErrorString(cudaError_t error)
     * }
     */
    public static FunctionDescriptor cudaGetErrorString$descriptor() {
        return cudaGetErrorString.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * const char *cudaGetErrorString(cudaError_t error)
     * }
     */
    public static MethodHandle cudaGetErrorString$handle() {
        return cudaGetErrorString.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * const char *cudaGetErrorString(cudaError_t error)
     * }
     */
    public static MemorySegment cudaGetErrorString$address() {
        return cudaGetErrorString.ADDR;
    }

    /**
     * {@snippet lang=c :
     * const char *cudaGetErrorString(cudaError_t error)
     * }
     */
    public static MemorySegment cudaGetErrorString(int error) {
        var mh$ = cudaGetErrorString.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaGetErrorString", error);
            }
            return (MemorySegment)mh$.invokeExact(error);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaGetLastError {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaGetLastError;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaGetLastError");

        // kvtier: critical(false) only because this call never blocks (it skips the thread-state transition; a blocking call here would stall GC).
        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC, Linker.Option.critical(false));
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaGetLastError(void)
     * }
     */
    public static FunctionDescriptor cudaGetLastError$descriptor() {
        return cudaGetLastError.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaGetLastError(void)
     * }
     */
    public static MethodHandle cudaGetLastError$handle() {
        return cudaGetLastError.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaGetLastError(void)
     * }
     */
    public static MemorySegment cudaGetLastError$address() {
        return cudaGetLastError.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaGetLastError(void)
     * }
     */
    public static int cudaGetLastError() {
        var mh$ = cudaGetLastError.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaGetLastError");
            }
            return (int)mh$.invokeExact();
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaPeekAtLastError {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaPeekAtLastError;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaPeekAtLastError");

        // kvtier: critical(false) only because this call never blocks (it skips the thread-state transition; a blocking call here would stall GC).
        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC, Linker.Option.critical(false));
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaPeekAtLastError(void)
     * }
     */
    public static FunctionDescriptor cudaPeekAtLastError$descriptor() {
        return cudaPeekAtLastError.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaPeekAtLastError(void)
     * }
     */
    public static MethodHandle cudaPeekAtLastError$handle() {
        return cudaPeekAtLastError.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaPeekAtLastError(void)
     * }
     */
    public static MemorySegment cudaPeekAtLastError$address() {
        return cudaPeekAtLastError.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaPeekAtLastError(void)
     * }
     */
    public static int cudaPeekAtLastError() {
        var mh$ = cudaPeekAtLastError.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaPeekAtLastError");
            }
            return (int)mh$.invokeExact();
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMalloc {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaMalloc;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaMalloc");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaMalloc(void **devPtr, size_t size)
     * }
     */
    public static FunctionDescriptor cudaMalloc$descriptor() {
        return cudaMalloc.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaMalloc(void **devPtr, size_t size)
     * }
     */
    public static MethodHandle cudaMalloc$handle() {
        return cudaMalloc.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaMalloc(void **devPtr, size_t size)
     * }
     */
    public static MemorySegment cudaMalloc$address() {
        return cudaMalloc.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaMalloc(void **devPtr, size_t size)
     * }
     */
    public static int cudaMalloc(MemorySegment devPtr, long size) {
        var mh$ = cudaMalloc.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaMalloc", devPtr, size);
            }
            return (int)mh$.invokeExact(devPtr, size);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaFree {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaFree;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaFree");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaFree(void *devPtr)
     * }
     */
    public static FunctionDescriptor cudaFree$descriptor() {
        return cudaFree.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaFree(void *devPtr)
     * }
     */
    public static MethodHandle cudaFree$handle() {
        return cudaFree.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaFree(void *devPtr)
     * }
     */
    public static MemorySegment cudaFree$address() {
        return cudaFree.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaFree(void *devPtr)
     * }
     */
    public static int cudaFree(MemorySegment devPtr) {
        var mh$ = cudaFree.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaFree", devPtr);
            }
            return (int)mh$.invokeExact(devPtr);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaHostAlloc {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaHostAlloc;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaHostAlloc");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
     * }
     */
    public static FunctionDescriptor cudaHostAlloc$descriptor() {
        return cudaHostAlloc.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
     * }
     */
    public static MethodHandle cudaHostAlloc$handle() {
        return cudaHostAlloc.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
     * }
     */
    public static MemorySegment cudaHostAlloc$address() {
        return cudaHostAlloc.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
     * }
     */
    public static int cudaHostAlloc(MemorySegment pHost, long size, int flags) {
        var mh$ = cudaHostAlloc.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaHostAlloc", pHost, size, flags);
            }
            return (int)mh$.invokeExact(pHost, size, flags);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaFreeHost {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaFreeHost;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaFreeHost");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaFreeHost(void *ptr)
     * }
     */
    public static FunctionDescriptor cudaFreeHost$descriptor() {
        return cudaFreeHost.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaFreeHost(void *ptr)
     * }
     */
    public static MethodHandle cudaFreeHost$handle() {
        return cudaFreeHost.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaFreeHost(void *ptr)
     * }
     */
    public static MemorySegment cudaFreeHost$address() {
        return cudaFreeHost.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaFreeHost(void *ptr)
     * }
     */
    public static int cudaFreeHost(MemorySegment ptr) {
        var mh$ = cudaFreeHost.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaFreeHost", ptr);
            }
            return (int)mh$.invokeExact(ptr);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaHostRegister {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaHostRegister;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaHostRegister");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
     * }
     */
    public static FunctionDescriptor cudaHostRegister$descriptor() {
        return cudaHostRegister.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
     * }
     */
    public static MethodHandle cudaHostRegister$handle() {
        return cudaHostRegister.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
     * }
     */
    public static MemorySegment cudaHostRegister$address() {
        return cudaHostRegister.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
     * }
     */
    public static int cudaHostRegister(MemorySegment ptr, long size, int flags) {
        var mh$ = cudaHostRegister.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaHostRegister", ptr, size, flags);
            }
            return (int)mh$.invokeExact(ptr, size, flags);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaHostUnregister {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaHostUnregister;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaHostUnregister");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaHostUnregister(void *ptr)
     * }
     */
    public static FunctionDescriptor cudaHostUnregister$descriptor() {
        return cudaHostUnregister.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaHostUnregister(void *ptr)
     * }
     */
    public static MethodHandle cudaHostUnregister$handle() {
        return cudaHostUnregister.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaHostUnregister(void *ptr)
     * }
     */
    public static MemorySegment cudaHostUnregister$address() {
        return cudaHostUnregister.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaHostUnregister(void *ptr)
     * }
     */
    public static int cudaHostUnregister(MemorySegment ptr) {
        var mh$ = cudaHostUnregister.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaHostUnregister", ptr);
            }
            return (int)mh$.invokeExact(ptr);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaHostGetDevicePointer {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaHostGetDevicePointer;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaHostGetDevicePointer");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
     * }
     */
    public static FunctionDescriptor cudaHostGetDevicePointer$descriptor() {
        return cudaHostGetDevicePointer.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
     * }
     */
    public static MethodHandle cudaHostGetDevicePointer$handle() {
        return cudaHostGetDevicePointer.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
     * }
     */
    public static MemorySegment cudaHostGetDevicePointer$address() {
        return cudaHostGetDevicePointer.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
     * }
     */
    public static int cudaHostGetDevicePointer(MemorySegment pDevice, MemorySegment pHost, int flags) {
        var mh$ = cudaHostGetDevicePointer.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaHostGetDevicePointer", pDevice, pHost, flags);
            }
            return (int)mh$.invokeExact(pDevice, pHost, flags);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMemsetAsync {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaMemsetAsync;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaMemsetAsync");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
     * }
     */
    public static FunctionDescriptor cudaMemsetAsync$descriptor() {
        return cudaMemsetAsync.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
     * }
     */
    public static MethodHandle cudaMemsetAsync$handle() {
        return cudaMemsetAsync.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
     * }
     */
    public static MemorySegment cudaMemsetAsync$address() {
        return cudaMemsetAsync.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
     * }
     */
    public static int cudaMemsetAsync(MemorySegment devPtr, int value, long count, MemorySegment stream) {
        var mh$ = cudaMemsetAsync.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaMemsetAsync", devPtr, value, count, stream);
            }
            return (int)mh$.invokeExact(devPtr, value, count, stream);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMemcpyAsync {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaMemcpyAsync;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaMemcpyAsync");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
     * }
     */
    public static FunctionDescriptor cudaMemcpyAsync$descriptor() {
        return cudaMemcpyAsync.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
     * }
     */
    public static MethodHandle cudaMemcpyAsync$handle() {
        return cudaMemcpyAsync.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
     * }
     */
    public static MemorySegment cudaMemcpyAsync$address() {
        return cudaMemcpyAsync.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
     * }
     */
    public static int cudaMemcpyAsync(MemorySegment dst, MemorySegment src, long count, int kind, MemorySegment stream) {
        var mh$ = cudaMemcpyAsync.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaMemcpyAsync", dst, src, count, kind, stream);
            }
            return (int)mh$.invokeExact(dst, src, count, kind, stream);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMemcpyPeerAsync {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaMemcpyPeerAsync;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaMemcpyPeerAsync");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count, cudaStream_t stream)
     * }
     */
    public static FunctionDescriptor cudaMemcpyPeerAsync$descriptor() {
        return cudaMemcpyPeerAsync.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count, cudaStream_t stream)
     * }
     */
    public static MethodHandle cudaMemcpyPeerAsync$handle() {
        return cudaMemcpyPeerAsync.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count, cudaStream_t stream)
     * }
     */
    public static MemorySegment cudaMemcpyPeerAsync$address() {
        return cudaMemcpyPeerAsync.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count, cudaStream_t stream)
     * }
     */
    public static int cudaMemcpyPeerAsync(MemorySegment dst, int dstDevice, MemorySegment src, int srcDevice, long count, MemorySegment stream) {
        var mh$ = cudaMemcpyPeerAsync.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaMemcpyPeerAsync", dst, dstDevice, src, srcDevice, count, stream);
            }
            return (int)mh$.invokeExact(dst, dstDevice, src, srcDevice, count, stream);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMemcpyBatchAsync {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaMemcpyBatchAsync;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaMemcpyBatchAsync");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count, struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, cudaStream_t stream)
     * }
     */
    public static FunctionDescriptor cudaMemcpyBatchAsync$descriptor() {
        return cudaMemcpyBatchAsync.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count, struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, cudaStream_t stream)
     * }
     */
    public static MethodHandle cudaMemcpyBatchAsync$handle() {
        return cudaMemcpyBatchAsync.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count, struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, cudaStream_t stream)
     * }
     */
    public static MemorySegment cudaMemcpyBatchAsync$address() {
        return cudaMemcpyBatchAsync.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count, struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, cudaStream_t stream)
     * }
     * <p>The CUDA 13.x ABI (8 arguments), as jextract generates it from the 13.0 header. A 12.8/12.9 runtime exports the same
     * symbol with 9 arguments: call {@link #cudaMemcpyBatchAsync_cuda12} there; {@link MemcpyBatchAbi} chooses by
     * {@code cudaRuntimeGetVersion()}. Calling this one on a 12.x runtime is undefined behaviour.
     */
    public static int cudaMemcpyBatchAsync(MemorySegment dsts, MemorySegment srcs, MemorySegment sizes, long count, MemorySegment attrs, MemorySegment attrsIdxs, long numAttrs, MemorySegment stream) {
        var mh$ = cudaMemcpyBatchAsync.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaMemcpyBatchAsync", dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream);
            }
            return (int)mh$.invokeExact(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMemcpyBatchAsync_cuda12 {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaMemcpyBatchAsync_cuda12;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaMemcpyBatchAsync");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyBatchAsync(void **dsts, void **srcs, size_t *sizes, size_t count, struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, cudaStream_t stream)
     * }
     */
    public static FunctionDescriptor cudaMemcpyBatchAsync_cuda12$descriptor() {
        return cudaMemcpyBatchAsync_cuda12.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyBatchAsync(void **dsts, void **srcs, size_t *sizes, size_t count, struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, cudaStream_t stream)
     * }
     */
    public static MethodHandle cudaMemcpyBatchAsync_cuda12$handle() {
        return cudaMemcpyBatchAsync_cuda12.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyBatchAsync(void **dsts, void **srcs, size_t *sizes, size_t count, struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, cudaStream_t stream)
     * }
     */
    public static MemorySegment cudaMemcpyBatchAsync_cuda12$address() {
        return cudaMemcpyBatchAsync_cuda12.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaMemcpyBatchAsync(void **dsts, void **srcs, size_t *sizes, size_t count, struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, cudaStream_t stream)
     * }
     * <p>Not generated by jextract (kvtier addition): the CUDA 12.8/12.9 ABI of symbol {@code cudaMemcpyBatchAsync}, 9 arguments
     * with {@code size_t *failIdx} before the stream (removed in 13.0). {@link MemcpyBatchAbi} chooses by
     * {@code cudaRuntimeGetVersion()}. Calling this one on a 13.x runtime is undefined behaviour.
     */
    public static int cudaMemcpyBatchAsync_cuda12(MemorySegment dsts, MemorySegment srcs, MemorySegment sizes, long count, MemorySegment attrs, MemorySegment attrsIdxs, long numAttrs, MemorySegment failIdx, MemorySegment stream) {
        var mh$ = cudaMemcpyBatchAsync_cuda12.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaMemcpyBatchAsync_cuda12", dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, stream);
            }
            return (int)mh$.invokeExact(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, stream);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaStreamCreateWithFlags {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaStreamCreateWithFlags;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaStreamCreateWithFlags");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
     * }
     */
    public static FunctionDescriptor cudaStreamCreateWithFlags$descriptor() {
        return cudaStreamCreateWithFlags.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
     * }
     */
    public static MethodHandle cudaStreamCreateWithFlags$handle() {
        return cudaStreamCreateWithFlags.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
     * }
     */
    public static MemorySegment cudaStreamCreateWithFlags$address() {
        return cudaStreamCreateWithFlags.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
     * }
     */
    public static int cudaStreamCreateWithFlags(MemorySegment pStream, int flags) {
        var mh$ = cudaStreamCreateWithFlags.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaStreamCreateWithFlags", pStream, flags);
            }
            return (int)mh$.invokeExact(pStream, flags);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaStreamDestroy {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaStreamDestroy;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaStreamDestroy");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaStreamDestroy(cudaStream_t stream)
     * }
     */
    public static FunctionDescriptor cudaStreamDestroy$descriptor() {
        return cudaStreamDestroy.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaStreamDestroy(cudaStream_t stream)
     * }
     */
    public static MethodHandle cudaStreamDestroy$handle() {
        return cudaStreamDestroy.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaStreamDestroy(cudaStream_t stream)
     * }
     */
    public static MemorySegment cudaStreamDestroy$address() {
        return cudaStreamDestroy.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaStreamDestroy(cudaStream_t stream)
     * }
     */
    public static int cudaStreamDestroy(MemorySegment stream) {
        var mh$ = cudaStreamDestroy.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaStreamDestroy", stream);
            }
            return (int)mh$.invokeExact(stream);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaStreamSynchronize {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaStreamSynchronize;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaStreamSynchronize");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaStreamSynchronize(cudaStream_t stream)
     * }
     */
    public static FunctionDescriptor cudaStreamSynchronize$descriptor() {
        return cudaStreamSynchronize.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaStreamSynchronize(cudaStream_t stream)
     * }
     */
    public static MethodHandle cudaStreamSynchronize$handle() {
        return cudaStreamSynchronize.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaStreamSynchronize(cudaStream_t stream)
     * }
     */
    public static MemorySegment cudaStreamSynchronize$address() {
        return cudaStreamSynchronize.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaStreamSynchronize(cudaStream_t stream)
     * }
     */
    public static int cudaStreamSynchronize(MemorySegment stream) {
        var mh$ = cudaStreamSynchronize.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaStreamSynchronize", stream);
            }
            return (int)mh$.invokeExact(stream);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaStreamQuery {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaStreamQuery;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaStreamQuery");

        // kvtier: critical(false) only because this call never blocks (it skips the thread-state transition; a blocking call here would stall GC).
        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC, Linker.Option.critical(false));
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaStreamQuery(cudaStream_t stream)
     * }
     */
    public static FunctionDescriptor cudaStreamQuery$descriptor() {
        return cudaStreamQuery.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaStreamQuery(cudaStream_t stream)
     * }
     */
    public static MethodHandle cudaStreamQuery$handle() {
        return cudaStreamQuery.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaStreamQuery(cudaStream_t stream)
     * }
     */
    public static MemorySegment cudaStreamQuery$address() {
        return cudaStreamQuery.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaStreamQuery(cudaStream_t stream)
     * }
     */
    public static int cudaStreamQuery(MemorySegment stream) {
        var mh$ = cudaStreamQuery.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaStreamQuery", stream);
            }
            return (int)mh$.invokeExact(stream);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaStreamWaitEvent {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaStreamWaitEvent;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaStreamWaitEvent");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
     * }
     */
    public static FunctionDescriptor cudaStreamWaitEvent$descriptor() {
        return cudaStreamWaitEvent.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
     * }
     */
    public static MethodHandle cudaStreamWaitEvent$handle() {
        return cudaStreamWaitEvent.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
     * }
     */
    public static MemorySegment cudaStreamWaitEvent$address() {
        return cudaStreamWaitEvent.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
     * }
     */
    public static int cudaStreamWaitEvent(MemorySegment stream, MemorySegment event, int flags) {
        var mh$ = cudaStreamWaitEvent.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaStreamWaitEvent", stream, event, flags);
            }
            return (int)mh$.invokeExact(stream, event, flags);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaLaunchHostFunc {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaLaunchHostFunc;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaLaunchHostFunc");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
     * }
     */
    public static FunctionDescriptor cudaLaunchHostFunc$descriptor() {
        return cudaLaunchHostFunc.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
     * }
     */
    public static MethodHandle cudaLaunchHostFunc$handle() {
        return cudaLaunchHostFunc.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
     * }
     */
    public static MemorySegment cudaLaunchHostFunc$address() {
        return cudaLaunchHostFunc.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
     * }
     */
    public static int cudaLaunchHostFunc(MemorySegment stream, MemorySegment fn, MemorySegment userData) {
        var mh$ = cudaLaunchHostFunc.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaLaunchHostFunc", stream, fn, userData);
            }
            return (int)mh$.invokeExact(stream, fn, userData);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventCreateWithFlags {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaEventCreateWithFlags;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaEventCreateWithFlags");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
     * }
     */
    public static FunctionDescriptor cudaEventCreateWithFlags$descriptor() {
        return cudaEventCreateWithFlags.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
     * }
     */
    public static MethodHandle cudaEventCreateWithFlags$handle() {
        return cudaEventCreateWithFlags.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
     * }
     */
    public static MemorySegment cudaEventCreateWithFlags$address() {
        return cudaEventCreateWithFlags.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
     * }
     */
    public static int cudaEventCreateWithFlags(MemorySegment event, int flags) {
        var mh$ = cudaEventCreateWithFlags.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaEventCreateWithFlags", event, flags);
            }
            return (int)mh$.invokeExact(event, flags);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventRecord {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaEventRecord;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaEventRecord");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
     * }
     */
    public static FunctionDescriptor cudaEventRecord$descriptor() {
        return cudaEventRecord.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
     * }
     */
    public static MethodHandle cudaEventRecord$handle() {
        return cudaEventRecord.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
     * }
     */
    public static MemorySegment cudaEventRecord$address() {
        return cudaEventRecord.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
     * }
     */
    public static int cudaEventRecord(MemorySegment event, MemorySegment stream) {
        var mh$ = cudaEventRecord.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaEventRecord", event, stream);
            }
            return (int)mh$.invokeExact(event, stream);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventQuery {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaEventQuery;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaEventQuery");

        // kvtier: critical(false) only because this call never blocks (it skips the thread-state transition; a blocking call here would stall GC).
        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC, Linker.Option.critical(false));
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaEventQuery(cudaEvent_t event)
     * }
     */
    public static FunctionDescriptor cudaEventQuery$descriptor() {
        return cudaEventQuery.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaEventQuery(cudaEvent_t event)
     * }
     */
    public static MethodHandle cudaEventQuery$handle() {
        return cudaEventQuery.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaEventQuery(cudaEvent_t event)
     * }
     */
    public static MemorySegment cudaEventQuery$address() {
        return cudaEventQuery.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaEventQuery(cudaEvent_t event)
     * }
     */
    public static int cudaEventQuery(MemorySegment event) {
        var mh$ = cudaEventQuery.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaEventQuery", event);
            }
            return (int)mh$.invokeExact(event);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventSynchronize {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaEventSynchronize;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaEventSynchronize");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaEventSynchronize(cudaEvent_t event)
     * }
     */
    public static FunctionDescriptor cudaEventSynchronize$descriptor() {
        return cudaEventSynchronize.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaEventSynchronize(cudaEvent_t event)
     * }
     */
    public static MethodHandle cudaEventSynchronize$handle() {
        return cudaEventSynchronize.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaEventSynchronize(cudaEvent_t event)
     * }
     */
    public static MemorySegment cudaEventSynchronize$address() {
        return cudaEventSynchronize.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaEventSynchronize(cudaEvent_t event)
     * }
     */
    public static int cudaEventSynchronize(MemorySegment event) {
        var mh$ = cudaEventSynchronize.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaEventSynchronize", event);
            }
            return (int)mh$.invokeExact(event);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventElapsedTime {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaEventElapsedTime;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaEventElapsedTime");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
     * }
     */
    public static FunctionDescriptor cudaEventElapsedTime$descriptor() {
        return cudaEventElapsedTime.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
     * }
     */
    public static MethodHandle cudaEventElapsedTime$handle() {
        return cudaEventElapsedTime.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
     * }
     */
    public static MemorySegment cudaEventElapsedTime$address() {
        return cudaEventElapsedTime.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
     * }
     */
    public static int cudaEventElapsedTime(MemorySegment ms, MemorySegment start, MemorySegment end) {
        var mh$ = cudaEventElapsedTime.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaEventElapsedTime", ms, start, end);
            }
            return (int)mh$.invokeExact(ms, start, end);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventDestroy {
        // kvtier: the descriptor lives in CudartDescriptors so that CudaRuntime instances can link it against their own
        // library without initializing this holder (which resolves the symbol in the process-wide library).
        public static final FunctionDescriptor DESC = CudartDescriptors.cudaEventDestroy;

        public static final MemorySegment ADDR = cudart_h.findOrThrow("cudaEventDestroy");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * cudaError_t cudaEventDestroy(cudaEvent_t event)
     * }
     */
    public static FunctionDescriptor cudaEventDestroy$descriptor() {
        return cudaEventDestroy.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * cudaError_t cudaEventDestroy(cudaEvent_t event)
     * }
     */
    public static MethodHandle cudaEventDestroy$handle() {
        return cudaEventDestroy.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * cudaError_t cudaEventDestroy(cudaEvent_t event)
     * }
     */
    public static MemorySegment cudaEventDestroy$address() {
        return cudaEventDestroy.ADDR;
    }

    /**
     * {@snippet lang=c :
     * cudaError_t cudaEventDestroy(cudaEvent_t event)
     * }
     */
    public static int cudaEventDestroy(MemorySegment event) {
        var mh$ = cudaEventDestroy.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("cudaEventDestroy", event);
            }
            return (int)mh$.invokeExact(event);
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }
}
