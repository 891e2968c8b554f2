// Written by hand in exactly the shape jextract 22+ generates (see cudart_h).

package dev.kvtier.cuda.runtime;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * {@snippet lang=c :
 * typedef void (*cudaHostFn_t)(void *)
 * }
 * Upcall (Java function as a C function pointer) and downcall helpers for the host-function type passed to
 * {@code cudaLaunchHostFunc}. A {@link Function} must never throw: an exception escaping an upcall terminates the JVM.
 */
@SuppressWarnings("restricted") // binding native code is this class's job; run with --enable-native-access
public class cudaHostFn_t {

    cudaHostFn_t() {
        // Should not be called directly
    }

    /**
     * The function pointer signature, expressed as a functional interface
     */
    public interface Function {
        void apply(MemorySegment userData);
    }

    private static final FunctionDescriptor $DESC = FunctionDescriptor.ofVoid(
        cudart_h.C_POINTER
    );

    /**
     * The descriptor of this function pointer
     */
    public static FunctionDescriptor descriptor() {
        return $DESC;
    }

    private static final MethodHandle UP$MH = cudart_h.upcallHandle(cudaHostFn_t.Function.class, "apply", $DESC);

    /**
     * Allocates a new upcall stub, whose implementation is defined by {@code fi}.
     * The lifetime of the returned segment is managed by {@code arena}
     */
    public static MemorySegment allocate(cudaHostFn_t.Function fi, Arena arena) {
        return Linker.nativeLinker().upcallStub(UP$MH.bindTo(fi), $DESC, arena);
    }

    private static final MethodHandle DOWN$MH = Linker.nativeLinker().downcallHandle($DESC);

    /**
     * Invoke the upcall stub {@code funcPtr}, with given parameters
     */
    public static void invoke(MemorySegment funcPtr, MemorySegment userData) {
        try {
             DOWN$MH.invokeExact(funcPtr, userData);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }
}
