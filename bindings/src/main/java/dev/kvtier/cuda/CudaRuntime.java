package dev.kvtier.cuda;

import dev.kvtier.cuda.runtime.MemcpyBatchAbi;
import dev.kvtier.cuda.runtime.cudaMemcpyAttributes;
import dev.kvtier.cuda.runtime.cudart_h;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * One loaded CUDA runtime library with at least one device, and checked calls into it. Obtain one from {@link #probe()}
 * (default search) or {@link #probe(Path)} (a given file); several runtimes (different library files) may coexist in one
 * JVM, each linked against its own library.
 *
 * <p><b>Errors.</b> Every {@code cudaError_t} is checked: a failure throws {@link CudaException} naming the call, code,
 * error name and text. Invalid arguments throw {@link IllegalArgumentException} naming the argument and value; a closed
 * handle throws {@link IllegalStateException}.
 *
 * <p><b>Ownership.</b> Streams, events, device and pinned allocations and host registrations are {@link AutoCloseable}
 * handles with idempotent close. Asynchronous copies keep nothing alive: the memory on both sides must stay allocated
 * (and registered) until the copy is known complete (an event recorded after it, {@link #onComplete}, or a stream sync).
 * Device memory is a sized {@link MemorySegment} the host must never read or write.
 *
 * <p><b>Threads.</b> Thread-safe, as the CUDA runtime API is; note that the current device ({@link #setDevice}) is
 * per thread in CUDA.
 */
public final class CudaRuntime {

    private static final ValueLayout.OfInt C_INT = cudart_h.C_INT;
    private static final ValueLayout.OfLong C_SIZE_T = cudart_h.C_LONG;

    private final CudaLibraryLoader.Library library;
    private final BoundCudart calls;
    private final int runtimeVersion;
    private final int driverVersion;
    private final int deviceCount;
    private final Optional<MemcpyBatchAbi> batchAbi;
    private final MethodHandle memcpyBatch;

    private CudaRuntime(CudaLibraryLoader.Library library, BoundCudart calls, int runtimeVersion, int driverVersion,
                        int deviceCount) {
        this.library = library;
        this.calls = calls;
        this.runtimeVersion = runtimeVersion;
        this.driverVersion = driverVersion;
        this.deviceCount = deviceCount;
        this.batchAbi = MemcpyBatchAbi.resolve(library.lookup(), runtimeVersion);
        this.memcpyBatch = batchAbi
                .map(abi -> BoundCudart.downcall(library.lookup().find(MemcpyBatchAbi.SYMBOL).orElseThrow(),
                        abi.descriptor(), false))
                .orElse(null);
    }

    // ---------------------------------------------------------------- probing

    /**
     * Searches the default places ({@link CudaLibraryLoader}) and reports a usable runtime or why there is none. Never
     * throws for a missing library, driver or device.
     *
     * @return {@link CudaProbe.Available} with the runtime, or {@link CudaProbe.Unavailable} saying what was tried and
     *         why it failed
     */
    public static CudaProbe probe() {
        return probe(CudaLibraryLoader.load());
    }

    /**
     * As {@link #probe()}, but loads exactly {@code library}.
     *
     * @param library the libcudart file to load (e.g. {@code /usr/local/cuda/lib64/libcudart.so.13}); no other place is
     *                searched
     * @return {@link CudaProbe.Available} with the runtime, or {@link CudaProbe.Unavailable} naming the file and why it
     *         could not be used
     */
    public static CudaProbe probe(Path library) {
        return probe(CudaLibraryLoader.load(library));
    }

    static CudaProbe probe(CudaLibraryLoader.LoadResult loaded) {
        if (loaded.library().isEmpty()) {
            return new CudaProbe.Unavailable("no CUDA runtime library (libcudart) could be loaded; tried:"
                    + loaded.describeAttempts(), loaded.attempts(), Optional.empty());
        }
        CudaLibraryLoader.Library library = loaded.library().get();
        // A place the user configured that failed matters even when a later place loaded: say so.
        String skipped = loaded.attempts().stream()
                .filter(a -> a.failure().isPresent() && !a.failure().get().equals("not set"))
                .map(a -> a.source() + " " + a.location() + ": " + a.failure().get())
                .reduce((a, b) -> a + "; " + b)
                .map(text -> " (skipped: " + text + ")")
                .orElse("");
        String where = "libcudart at " + library.location();
        BoundCudart calls;
        try {
            calls = new BoundCudart(library.lookup());
        } catch (RuntimeException | LinkageError e) {
            return new CudaProbe.Unavailable(where + " cannot be used: " + e.getMessage() + skipped, loaded.attempts(),
                    Optional.empty());
        }
        int runtimeVersion = 0;
        try {
            runtimeVersion = queryInt(calls, calls.cudaRuntimeGetVersion, "cudaRuntimeGetVersion");
            int driverVersion = queryInt(calls, calls.cudaDriverGetVersion, "cudaDriverGetVersion");
            where = "libcudart " + versionText(runtimeVersion) + " at " + library.location() + " (driver "
                    + (driverVersion == 0 ? "none" : versionText(driverVersion)) + ")";
            int devices = queryInt(calls, calls.cudaGetDeviceCount, "cudaGetDeviceCount");
            if (devices <= 0) {
                return new CudaProbe.Unavailable(where + " is loaded, but there is no CUDA device" + skipped,
                        loaded.attempts(), Optional.empty());
            }
            return new CudaProbe.Available(new CudaRuntime(library, calls, runtimeVersion, driverVersion, devices));
        } catch (CudaException e) {
            return new CudaProbe.Unavailable(where + " is loaded, but unusable: " + e.getMessage() + skipped,
                    loaded.attempts(), Optional.of(e));
        } catch (RuntimeException | LinkageError e) {
            return new CudaProbe.Unavailable(where + " is loaded, but probing it failed: " + e + skipped,
                    loaded.attempts(), Optional.empty());
        }
    }

    /** Calls {@code cudaError_t function(int *out)} (a version, count or device query) and returns {@code *out}. */
    private static int queryInt(BoundCudart calls, MethodHandle function, String call) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(C_INT);
            check(calls, call, callWithPointer(function, out), null);
            return out.get(C_INT, 0);
        }
    }

    // ---------------------------------------------------------------- facts

    /**
     * The library file loaded (or the loader name when its file cannot be determined).
     *
     * @return a path or loader name, never null; used in messages to tell runtimes apart
     */
    public String libraryLocation() {
        return library.location();
    }

    /**
     * {@code cudaRuntimeGetVersion}: 1000 * major + 10 * minor, e.g. 13000 for 13.0.
     *
     * @return the version of the loaded libcudart, read once at probe time
     */
    public int runtimeVersion() {
        return runtimeVersion;
    }

    /**
     * {@code cudaDriverGetVersion} at probe time, same encoding as {@link #runtimeVersion()}.
     *
     * @return the latest CUDA version the installed driver supports; 0 when CUDA reported no driver
     */
    public int driverVersion() {
        return driverVersion;
    }

    /**
     * Number of devices at probe time; at least 1.
     *
     * @return {@code cudaGetDeviceCount} at probe time; valid device ordinals are {@code 0} to this value minus one
     */
    public int deviceCount() {
        return deviceCount;
    }

    /**
     * E.g. {@code libcudart 13.0 at /usr/local/cuda/lib64/libcudart.so.13 (driver 13.0), 1 device}.
     *
     * @return one line for logs: runtime version, library file, driver version and device count
     */
    public String description() {
        return "libcudart " + versionText(runtimeVersion) + " at " + library.location() + " (driver "
                + versionText(driverVersion) + "), " + deviceCount + (deviceCount == 1 ? " device" : " devices");
    }

    /** Whether handles of {@code other} are valid here: both run on the same loaded library file. */
    boolean sameLibraryAs(CudaRuntime other) {
        return other == this || other.library.location().equals(library.location());
    }

    @Override
    public String toString() {
        return "CudaRuntime[" + description() + "]";
    }

    static String versionText(int version) {
        return (version / 1000) + "." + (version % 1000) / 10;
    }

    // ---------------------------------------------------------------- errors

    /** Throws {@link CudaException} if {@code cudaGetLastError} reports an error (and so clears it). */
    public void checkLastError() {
        int code;
        try {
            code = (int) calls.cudaGetLastError.invokeExact();
        } catch (Throwable t) {
            throw unexpected(t);
        }
        if (code != 0) {
            throw error("cudaGetLastError", code, null);
        }
    }

    /**
     * The last error without clearing it ({@code cudaPeekAtLastError}): 0 ({@code cudaSuccess}) or the code.
     *
     * @return the {@code cudaError_t} value CUDA holds for the calling thread; 0 when there is none
     */
    public int peekAtLastError() {
        try {
            return (int) calls.cudaPeekAtLastError.invokeExact();
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /**
     * {@code cudaGetErrorName(code)}, e.g. {@code cudaErrorNoDevice}.
     *
     * @param code a {@code cudaError_t} value, any int
     * @return the enumerator's name; CUDA's own text for an unknown code, never null
     */
    public String errorName(int code) {
        return errorName(calls, code);
    }

    /**
     * {@code cudaGetErrorString(code)}, e.g. {@code no CUDA-capable device is detected}.
     *
     * @param code a {@code cudaError_t} value, any int
     * @return CUDA's description of the error; {@code "unrecognized error code"} when CUDA returns none, never null
     */
    public String errorText(int code) {
        return errorText(calls, code);
    }

    private static String errorName(BoundCudart calls, int code) {
        try {
            return cString((MemorySegment) calls.cudaGetErrorName.invokeExact(code), "cudaError " + code);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    private static String errorText(BoundCudart calls, int code) {
        try {
            return cString((MemorySegment) calls.cudaGetErrorString.invokeExact(code), "unrecognized error code");
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    private static String cString(MemorySegment pointer, String ifNull) {
        // C_POINTER's target layout already makes the segment unbounded, so the string can be read in place.
        return pointer.equals(MemorySegment.NULL) ? ifNull : pointer.getString(0);
    }

    void check(String call, int code) {
        if (code != 0) {
            throw error(call, code, null);
        }
    }

    void check(String call, int code, String detail) {
        if (code != 0) {
            throw error(call, code, detail);
        }
    }

    private static void check(BoundCudart calls, String call, int code, String detail) {
        if (code != 0) {
            throw new CudaException(call, code, errorName(calls, code), errorText(calls, code), detail);
        }
    }

    CudaException error(String call, int code, String detail) {
        return new CudaException(call, code, errorName(calls, code), errorText(calls, code), detail);
    }

    /**
     * Calls a bound {@code cudaError_t function(void *pointer)} and returns its error code; what the downcall itself
     * throws is rethrown as {@link #unexpected} says. Every single-pointer call (queries, synchronize, destroy, free) goes
     * through here.
     */
    static int callWithPointer(MethodHandle function, MemorySegment pointer) {
        try {
            return (int) function.invokeExact(pointer);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** Rethrows what a downcall threw: FFM's own runtime exceptions (closed scope, heap segment) as they are. */
    static RuntimeException unexpected(Throwable thrown) {
        if (thrown instanceof RuntimeException runtime) {
            throw runtime;
        }
        if (thrown instanceof Error error) {
            throw error;
        }
        throw new AssertionError("a downcall threw a checked exception", thrown);
    }

    BoundCudart calls() {
        return calls;
    }

    // ---------------------------------------------------------------- devices

    /**
     * {@code cudaSetDevice}: the current device of the calling thread.
     *
     * @param device the CUDA device ordinal, in {@code [0, deviceCount())}; later calls from this thread (allocations,
     *               streams, {@link #memoryInfo()}) act on it
     * @throws IllegalArgumentException if {@code device} is out of range
     */
    public void setDevice(int device) {
        requireDevice(device, "device");
        int code;
        try {
            code = (int) calls.cudaSetDevice.invokeExact(device);
        } catch (Throwable t) {
            throw unexpected(t);
        }
        check("cudaSetDevice", code, "device " + device);
    }

    /**
     * {@code cudaGetDevice}: the current device of the calling thread.
     *
     * @return the device ordinal this thread's CUDA calls act on (0 until {@link #setDevice} is called)
     */
    public int currentDevice() {
        return queryInt(calls, calls.cudaGetDevice, "cudaGetDevice");
    }

    /**
     * {@code cudaDeviceGetAttribute(attribute, device)}.
     *
     * @param attribute the {@code cudaDeviceAttr} to read, not null
     * @param device    the CUDA device ordinal, in {@code [0, deviceCount())}
     * @return the attribute's value as CUDA reports it (for the yes/no attributes 1 or 0)
     * @throws IllegalArgumentException if {@code attribute} is null or {@code device} is out of range
     */
    public int deviceAttribute(DeviceAttribute attribute, int device) {
        Arguments.requireNonNull(attribute, "attribute");
        requireDevice(device, "device");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(C_INT);
            int code;
            try {
                code = (int) calls.cudaDeviceGetAttribute.invokeExact(out, attribute.code(), device);
            } catch (Throwable t) {
                throw unexpected(t);
            }
            check("cudaDeviceGetAttribute", code, attribute + " of device " + device);
            return out.get(C_INT, 0);
        }
    }

    /**
     * {@code cudaDeviceCanAccessPeer(device, peer)}.
     *
     * @param device the CUDA device ordinal that would access memory, in {@code [0, deviceCount())}
     * @param peer   the CUDA device ordinal whose memory would be accessed, in {@code [0, deviceCount())}
     * @return whether {@code device} can read and write {@code peer}'s memory directly once peer access is enabled
     * @throws IllegalArgumentException if either ordinal is out of range
     */
    public boolean canAccessPeer(int device, int peer) {
        requireDevice(device, "device");
        requireDevice(peer, "peer");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(C_INT);
            int code;
            try {
                code = (int) calls.cudaDeviceCanAccessPeer.invokeExact(out, device, peer);
            } catch (Throwable t) {
                throw unexpected(t);
            }
            check("cudaDeviceCanAccessPeer", code, "device " + device + ", peer " + peer);
            return out.get(C_INT, 0) != 0;
        }
    }

    /**
     * {@code cudaMemGetInfo} for the calling thread's current device.
     *
     * @return free and total device memory in bytes at the time of the call
     */
    public MemoryInfo memoryInfo() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment free = arena.allocate(C_SIZE_T);
            MemorySegment total = arena.allocate(C_SIZE_T);
            int code;
            try {
                code = (int) calls.cudaMemGetInfo.invokeExact(free, total);
            } catch (Throwable t) {
                throw unexpected(t);
            }
            check("cudaMemGetInfo", code);
            return new MemoryInfo(free.get(C_SIZE_T, 0), total.get(C_SIZE_T, 0));
        }
    }

    /** {@code cudaDeviceSynchronize}: waits for all work on the current device. */
    public void deviceSynchronize() {
        int code;
        try {
            code = (int) calls.cudaDeviceSynchronize.invokeExact();
        } catch (Throwable t) {
            throw unexpected(t);
        }
        check("cudaDeviceSynchronize", code);
    }

    private void requireDevice(int device, String name) {
        if (device < 0 || device >= deviceCount) {
            throw new IllegalArgumentException(name + " must be in [0, " + deviceCount + "), was " + device);
        }
    }

    // ---------------------------------------------------------------- memory

    /**
     * {@code cudaMalloc(bytes)} on the current device.
     *
     * @param bytes the size to allocate, positive
     * @return the allocation, owned by the caller: {@link DeviceAllocation#close()} calls {@code cudaFree}
     * @throws IllegalArgumentException if {@code bytes} is not positive
     */
    public DeviceAllocation allocateDevice(long bytes) {
        requirePositive(bytes, "bytes");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(cudart_h.C_POINTER);
            int code;
            try {
                code = (int) calls.cudaMalloc.invokeExact(out, bytes);
            } catch (Throwable t) {
                throw unexpected(t);
            }
            check("cudaMalloc", code, bytes + " bytes");
            return new DeviceAllocation(this, out.get(cudart_h.C_POINTER, 0).address(), bytes);
        }
    }

    /**
     * {@code cudaHostAlloc(bytes, cudaHostAllocPortable)}: page-locked host memory usable by every device, for fast
     * asynchronous copies. Slow to allocate (~1 GB/s): pool it.
     *
     * @param bytes the size to allocate, positive
     * @return the allocation, owned by the caller: {@link PinnedAllocation#close()} calls {@code cudaFreeHost}
     * @throws IllegalArgumentException if {@code bytes} is not positive
     */
    public PinnedAllocation allocatePinned(long bytes) {
        requirePositive(bytes, "bytes");
        int flags = cudart_h.cudaHostAllocPortable();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(cudart_h.C_POINTER);
            int code;
            try {
                code = (int) calls.cudaHostAlloc.invokeExact(out, bytes, flags);
            } catch (Throwable t) {
                throw unexpected(t);
            }
            check("cudaHostAlloc", code, bytes + " bytes");
            return new PinnedAllocation(this, out.get(cudart_h.C_POINTER, 0).address(), bytes);
        }
    }

    /**
     * {@code cudaHostRegister}: page-locks existing host memory (including a file mapping) so copies from and to it run
     * at pinned speed. {@code readOnly} adds {@code cudaHostRegisterReadOnly}, required for read-only mappings (check
     * {@link DeviceAttribute#HOST_REGISTER_READ_ONLY_SUPPORTED}). The memory must stay mapped until the registration is
     * closed.
     *
     * @param hostMemory a native (off-heap) segment, not empty; a read-only segment (a read-only mapping) needs
     *                   {@code readOnly}
     * @param readOnly   whether to pass {@code cudaHostRegisterReadOnly}: the device will only read this memory
     * @return the registration, owned by the caller: {@link HostRegistration#close()} calls {@code cudaHostUnregister}
     * @throws IllegalArgumentException if {@code hostMemory} is null, on the heap, empty, or read-only without
     *                                  {@code readOnly}
     */
    public HostRegistration registerHost(MemorySegment hostMemory, boolean readOnly) {
        Arguments.requireNonNull(hostMemory, "hostMemory");
        if (!hostMemory.isNative()) {
            throw new IllegalArgumentException("hostMemory must be a native (off-heap) segment, was a heap segment");
        }
        requirePositive(hostMemory.byteSize(), "hostMemory.byteSize()");
        if (hostMemory.isReadOnly() && !readOnly) {
            throw new IllegalArgumentException("hostMemory is a read-only segment: register it with readOnly=true");
        }
        int flags = cudart_h.cudaHostRegisterPortable() | (readOnly ? cudart_h.cudaHostRegisterReadOnly() : 0);
        int code;
        try {
            code = (int) calls.cudaHostRegister.invokeExact(hostMemory, hostMemory.byteSize(), flags);
        } catch (Throwable t) {
            throw unexpected(t);
        }
        check("cudaHostRegister", code, hostMemory.byteSize() + " bytes" + (readOnly ? ", read-only" : ""));
        return new HostRegistration(this, hostMemory, readOnly);
    }

    // ---------------------------------------------------------------- streams and events

    /**
     * {@code cudaStreamCreateWithFlags}: {@code nonBlocking} streams do not synchronize with the legacy default stream.
     *
     * @param nonBlocking {@code true} for {@code cudaStreamNonBlocking}, {@code false} for {@code cudaStreamDefault}
     * @return the stream, owned by the caller: {@link CudaStream#close()} calls {@code cudaStreamDestroy}
     */
    public CudaStream createStream(boolean nonBlocking) {
        int flags = nonBlocking ? cudart_h.cudaStreamNonBlocking() : cudart_h.cudaStreamDefault();
        return new CudaStream(this, createHandle(calls.cudaStreamCreateWithFlags, "cudaStreamCreateWithFlags",
                cudart_h.cudaStream_t, flags));
    }

    /**
     * {@code cudaEventCreateWithFlags}: {@code timing} events can measure {@link CudaEvent#elapsedMillisSince}; others
     * ({@code cudaEventDisableTiming}) are cheaper and are what ordering needs.
     *
     * @param timing {@code true} for {@code cudaEventDefault} (records a timestamp), {@code false} for
     *               {@code cudaEventDisableTiming}
     * @return the event, owned by the caller: {@link CudaEvent#close()} calls {@code cudaEventDestroy}
     */
    public CudaEvent createEvent(boolean timing) {
        int flags = timing ? cudart_h.cudaEventDefault() : cudart_h.cudaEventDisableTiming();
        return new CudaEvent(this, createHandle(calls.cudaEventCreateWithFlags, "cudaEventCreateWithFlags",
                cudart_h.cudaEvent_t, flags), timing);
    }

    /**
     * Calls {@code cudaError_t function(handle_t *out, unsigned int flags)} (a stream or event constructor) and returns
     * {@code *out} as a plain address (no size, no scope: the handle is opaque and owned by the returned resource).
     */
    private MemorySegment createHandle(MethodHandle function, String call, AddressLayout handleLayout, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(handleLayout);
            int code;
            try {
                code = (int) function.invokeExact(out, flags);
            } catch (Throwable t) {
                throw unexpected(t);
            }
            check(call, code);
            return MemorySegment.ofAddress(out.get(handleLayout, 0).address());
        }
    }

    /**
     * A future completed after all work enqueued on {@code stream} so far has finished ({@code cudaLaunchHostFunc} with
     * the process's one upcall stub). It is completed on a kvtier executor thread, never on the CUDA callback thread, so
     * dependent stages may call CUDA. If the stream fails (a sticky error), CUDA may never run the callback: pair it with
     * a timeout or a stream query where that matters.
     *
     * @param stream a stream of this runtime's library, not closed
     * @return a future completed with {@code null} once the enqueued work is done; CUDA errors never reach it (after
     *         one it may simply never complete)
     * @throws IllegalArgumentException if {@code stream} is null or belongs to another library
     */
    public CompletableFuture<Void> onComplete(CudaStream stream) {
        MemorySegment streamHandle = ownHandle(stream);
        HostCallbacks.Ticket ticket = HostCallbacks.newTicket();
        int code;
        try {
            code = (int) calls.cudaLaunchHostFunc.invokeExact(streamHandle, HostCallbacks.STUB, ticket.userData());
        } catch (Throwable t) {
            HostCallbacks.cancel(ticket);
            throw unexpected(t);
        }
        if (code != 0) {
            HostCallbacks.cancel(ticket);
            throw error("cudaLaunchHostFunc", code, null);
        }
        return ticket.future();
    }

    // ---------------------------------------------------------------- copies

    /**
     * {@code cudaMemcpyAsync(dst, src, bytes, kind, stream)}: enqueues a copy of the first {@code bytes} bytes of
     * {@code src} to {@code dst}. Returns once enqueued; both sides must stay allocated until it completes.
     *
     * @param dst    where the bytes go: device memory, pinned or registered host memory, or pageable host memory
     *               (which CUDA copies synchronously); not read-only
     * @param src    where the bytes come from, of the same kinds as {@code dst}
     * @param bytes  how many bytes to copy, in {@code [0, min(dst.byteSize(), src.byteSize())]}
     * @param kind   the {@code cudaMemcpyKind}; {@link MemcpyKind#DEFAULT} lets CUDA infer it from the pointers
     * @param stream the stream the copy is ordered on, of this runtime's library
     * @throws IllegalArgumentException if {@code bytes} is negative or larger than either segment, or {@code dst} is a
     *                                  read-only segment
     */
    public void memcpyAsync(MemorySegment dst, MemorySegment src, long bytes, MemcpyKind kind, CudaStream stream) {
        requireCopy(dst, src, bytes);
        Arguments.requireNonNull(kind, "kind");
        MemorySegment streamHandle = ownHandle(stream);
        int code;
        try {
            code = (int) calls.cudaMemcpyAsync.invokeExact(dst, src, bytes, kind.code(), streamHandle);
        } catch (Throwable t) {
            throw unexpected(t);
        }
        check("cudaMemcpyAsync", code, bytes + " bytes " + kind);
    }

    /**
     * {@code cudaMemcpyPeerAsync}: copies between two devices' memory.
     *
     * @param dst       device memory of {@code dstDevice} to write
     * @param dstDevice the CUDA device ordinal that owns {@code dst}
     * @param src       device memory of {@code srcDevice} to read
     * @param srcDevice the CUDA device ordinal that owns {@code src}
     * @param bytes     how many bytes to copy, in {@code [0, min(dst.byteSize(), src.byteSize())]}
     * @param stream    the stream the copy is ordered on, of this runtime's library
     * @throws IllegalArgumentException if {@code bytes} is negative or larger than either segment
     */
    public void memcpyPeerAsync(MemorySegment dst, int dstDevice, MemorySegment src, int srcDevice, long bytes,
                                CudaStream stream) {
        requireCopy(dst, src, bytes);
        requireDevice(dstDevice, "dstDevice");
        requireDevice(srcDevice, "srcDevice");
        MemorySegment streamHandle = ownHandle(stream);
        int code;
        try {
            code = (int) calls.cudaMemcpyPeerAsync.invokeExact(dst, dstDevice, src, srcDevice, bytes, streamHandle);
        } catch (Throwable t) {
            throw unexpected(t);
        }
        check("cudaMemcpyPeerAsync", code, bytes + " bytes, device " + srcDevice + " -> " + dstDevice);
    }

    /**
     * {@code cudaMemsetAsync}: sets the first {@code bytes} bytes of device memory {@code dst} to {@code value}.
     *
     * @param dst    device memory to fill
     * @param value  the byte to write, in {@code [-128, 255]} (as C's {@code int value}, only the low 8 bits count)
     * @param bytes  how many bytes to set, in {@code [0, dst.byteSize()]}
     * @param stream the stream the fill is ordered on, of this runtime's library
     * @throws IllegalArgumentException if {@code bytes} is negative or larger than {@code dst}, or value is not a byte
     */
    public void memsetAsync(MemorySegment dst, int value, long bytes, CudaStream stream) {
        Arguments.requireNonNull(dst, "dst");
        if (bytes < 0 || bytes > dst.byteSize()) {
            throw new IllegalArgumentException("bytes must be in [0, dst.byteSize()=" + dst.byteSize() + "], was " + bytes);
        }
        if (value < -128 || value > 255) {
            throw new IllegalArgumentException("value must be a byte value in [-128, 255], was " + value);
        }
        MemorySegment streamHandle = ownHandle(stream);
        int code;
        try {
            code = (int) calls.cudaMemsetAsync.invokeExact(dst, value, bytes, streamHandle);
        } catch (Throwable t) {
            throw unexpected(t);
        }
        check("cudaMemsetAsync", code, bytes + " bytes");
    }

    /**
     * How {@link #memcpyBatchAsync} will move batches with this runtime.
     *
     * @return the batch ABI chosen from {@link #runtimeVersion()}, or {@link BatchCopyPath#ONE_BY_ONE} where there is none
     */
    public BatchCopyPath batchCopyPath() {
        return batchAbi.map(abi -> abi == MemcpyBatchAbi.CUDA_12_8 ? BatchCopyPath.BATCH_CUDA_12_8
                : BatchCopyPath.BATCH_CUDA_13).orElse(BatchCopyPath.ONE_BY_ONE);
    }

    /**
     * Whether this runtime has a {@code cudaMemcpyBatchAsync} we can call (12.8 to 13.x, symbol present).
     *
     * @return {@code true} when {@link #batchCopyPath()} is not {@link BatchCopyPath#ONE_BY_ONE}
     */
    public boolean isBatchCopyAvailable() {
        return batchAbi.isPresent();
    }

    /**
     * Enqueues {@code dsts.size()} copies, {@code sizes[i]} bytes from {@code srcs.get(i)} to {@code dsts.get(i)}, in one
     * {@code cudaMemcpyBatchAsync} call (with the ABI of this runtime's version; stream-ordered source access) or, where
     * the runtime has none, one {@code cudaMemcpyAsync} per copy with {@code fallbackKind}. Copies within a batch may run
     * in any order: they must not overlap. The stream must not be the legacy default stream.
     *
     * @param dsts         where each copy writes, none read-only
     * @param srcs         where each copy reads, same length as {@code dsts}
     * @param sizes        bytes of each copy, same length, each in {@code [0, min(dst, src byte size)]}; CUDA's
     *                     {@code sizes} array
     * @param fallbackKind the {@code cudaMemcpyKind} of each {@code cudaMemcpyAsync} when the runtime has no batch call
     * @param stream       the stream all copies are ordered on, of this runtime's library
     * @return the path taken, so callers can report a fallback

     * @throws IllegalArgumentException if the lists and sizes differ in length, or a size is negative or too large
     */
    public BatchCopyPath memcpyBatchAsync(List<MemorySegment> dsts, List<MemorySegment> srcs, long[] sizes,
                                         MemcpyKind fallbackKind, CudaStream stream) {
        Arguments.requireNonNull(dsts, "dsts");
        Arguments.requireNonNull(srcs, "srcs");
        Arguments.requireNonNull(sizes, "sizes");
        Arguments.requireNonNull(fallbackKind, "fallbackKind");
        int count = dsts.size();
        if (srcs.size() != count || sizes.length != count) {
            throw new IllegalArgumentException("dsts, srcs and sizes must have the same length, were " + count + ", "
                    + srcs.size() + ", " + sizes.length);
        }
        for (int i = 0; i < count; i++) {
            requireCopy(dsts.get(i), srcs.get(i), sizes[i]);
        }
        BatchCopyPath path = batchCopyPath();
        if (path == BatchCopyPath.ONE_BY_ONE) {
            for (int i = 0; i < count; i++) {
                memcpyAsync(dsts.get(i), srcs.get(i), sizes[i], fallbackKind, stream);
            }
            return path;
        }
        MemorySegment streamHandle = ownHandle(stream);
        if (count == 0) {
            return path;
        }
        // The runtime reads these arrays during the call only, so a confined arena per call is enough.
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dstArray = arena.allocate(cudart_h.C_POINTER, count);
            MemorySegment srcArray = arena.allocate(cudart_h.C_POINTER, count);
            MemorySegment sizeArray = arena.allocate(C_SIZE_T, count);
            for (int i = 0; i < count; i++) {
                dstArray.setAtIndex(cudart_h.C_POINTER, i, dsts.get(i));
                srcArray.setAtIndex(cudart_h.C_POINTER, i, srcs.get(i));
                sizeArray.setAtIndex(C_SIZE_T, i, sizes[i]);
            }
            MemorySegment attributes = cudaMemcpyAttributes.allocate(arena);
            cudaMemcpyAttributes.srcAccessOrder(attributes, cudart_h.cudaMemcpySrcAccessOrderStream());
            MemorySegment attributeIndices = arena.allocate(C_SIZE_T, 1);
            attributeIndices.set(C_SIZE_T, 0, 0L);
            int code;
            String detail = count + " copies";
            try {
                if (path == BatchCopyPath.BATCH_CUDA_12_8) {
                    MemorySegment failIndex = arena.allocate(C_SIZE_T);
                    failIndex.set(C_SIZE_T, 0, -1L);
                    code = (int) memcpyBatch.invokeExact(dstArray, srcArray, sizeArray, (long) count, attributes,
                            attributeIndices, 1L, failIndex, streamHandle);
                    long failed = failIndex.get(C_SIZE_T, 0);
                    if (code != 0 && failed != -1L) {
                        detail += ", failed at copy " + failed;
                    }
                } else {
                    code = (int) memcpyBatch.invokeExact(dstArray, srcArray, sizeArray, (long) count, attributes,
                            attributeIndices, 1L, streamHandle);
                }
            } catch (Throwable t) {
                throw unexpected(t);
            }
            check("cudaMemcpyBatchAsync", code, detail);
        }
        return path;
    }

    /**
     * The stream's handle, after checking it comes from this runtime's library: a handle of another library means
     * nothing here (undefined behaviour in CUDA terms).
     */
    MemorySegment ownHandle(CudaStream stream) {
        Arguments.requireNonNull(stream, "stream");
        if (!stream.runtime().sameLibraryAs(this)) {
            throw new IllegalArgumentException("stream belongs to the CUDA runtime at " + stream.runtime().libraryLocation()
                    + ", not to this one at " + libraryLocation());
        }
        return stream.handle();
    }

    private static void requireCopy(MemorySegment dst, MemorySegment src, long bytes) {
        Arguments.requireNonNull(dst, "dst");
        Arguments.requireNonNull(src, "src");
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("dst is a read-only segment; a copy would write into it behind Java's back");
        }
        if (bytes < 0 || bytes > dst.byteSize() || bytes > src.byteSize()) {
            throw new IllegalArgumentException("bytes must be in [0, min(dst.byteSize()=" + dst.byteSize()
                    + ", src.byteSize()=" + src.byteSize() + ")], was " + bytes);
        }
    }

    private static void requirePositive(long value, String name) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be positive, was " + value);
        }
    }
}
