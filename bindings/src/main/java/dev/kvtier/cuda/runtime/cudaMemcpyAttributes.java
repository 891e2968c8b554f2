// Written by hand in exactly the shape jextract 22+ generates (see cudart_h).

package dev.kvtier.cuda.runtime;

import java.lang.foreign.Arena;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.util.function.Consumer;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.OfInt;

/**
 * {@snippet lang=c :
 * struct cudaMemcpyAttributes {
 *     enum cudaMemcpySrcAccessOrder srcAccessOrder;
 *     struct cudaMemLocation srcLocHint;
 *     struct cudaMemLocation dstLocHint;
 *     unsigned int flags;
 * }
 * }
 * Static accessors over a {@link MemorySegment} holding the struct; no state, thread-safe as the segment is.
 */
@SuppressWarnings("restricted") // binding native code is this class's job; run with --enable-native-access
public class cudaMemcpyAttributes {

    cudaMemcpyAttributes() {
        // Should not be called directly
    }

    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        cudart_h.C_INT.withName("srcAccessOrder"),
        cudaMemLocation.layout().withName("srcLocHint"),
        cudaMemLocation.layout().withName("dstLocHint"),
        cudart_h.C_INT.withName("flags")
    ).withName("cudaMemcpyAttributes");

    /**
     * The layout of this struct
     */
    public static final GroupLayout layout() {
        return $LAYOUT;
    }

    private static final OfInt srcAccessOrder$LAYOUT = (OfInt)$LAYOUT.select(groupElement("srcAccessOrder"));

    /**
     * Layout for field:
     * {@snippet lang=c :
     * enum cudaMemcpySrcAccessOrder srcAccessOrder
     * }
     */
    public static final OfInt srcAccessOrder$layout() {
        return srcAccessOrder$LAYOUT;
    }

    private static final long srcAccessOrder$OFFSET = 0;

    /**
     * Offset for field:
     * {@snippet lang=c :
     * enum cudaMemcpySrcAccessOrder srcAccessOrder
     * }
     */
    public static final long srcAccessOrder$offset() {
        return srcAccessOrder$OFFSET;
    }

    /**
     * Getter for field:
     * {@snippet lang=c :
     * enum cudaMemcpySrcAccessOrder srcAccessOrder
     * }
     */
    public static int srcAccessOrder(MemorySegment struct) {
        return struct.get(srcAccessOrder$LAYOUT, srcAccessOrder$OFFSET);
    }

    /**
     * Setter for field:
     * {@snippet lang=c :
     * enum cudaMemcpySrcAccessOrder srcAccessOrder
     * }
     */
    public static void srcAccessOrder(MemorySegment struct, int fieldValue) {
        struct.set(srcAccessOrder$LAYOUT, srcAccessOrder$OFFSET, fieldValue);
    }

    private static final GroupLayout srcLocHint$LAYOUT = (GroupLayout)$LAYOUT.select(groupElement("srcLocHint"));

    /**
     * Layout for field:
     * {@snippet lang=c :
     * struct cudaMemLocation srcLocHint
     * }
     */
    public static final GroupLayout srcLocHint$layout() {
        return srcLocHint$LAYOUT;
    }

    private static final long srcLocHint$OFFSET = 4;

    /**
     * Offset for field:
     * {@snippet lang=c :
     * struct cudaMemLocation srcLocHint
     * }
     */
    public static final long srcLocHint$offset() {
        return srcLocHint$OFFSET;
    }

    /**
     * Getter for field:
     * {@snippet lang=c :
     * struct cudaMemLocation srcLocHint
     * }
     */
    public static MemorySegment srcLocHint(MemorySegment struct) {
        return struct.asSlice(srcLocHint$OFFSET, srcLocHint$LAYOUT.byteSize());
    }

    /**
     * Setter for field:
     * {@snippet lang=c :
     * struct cudaMemLocation srcLocHint
     * }
     */
    public static void srcLocHint(MemorySegment struct, MemorySegment fieldValue) {
        MemorySegment.copy(fieldValue, 0L, struct, srcLocHint$OFFSET, srcLocHint$LAYOUT.byteSize());
    }

    private static final GroupLayout dstLocHint$LAYOUT = (GroupLayout)$LAYOUT.select(groupElement("dstLocHint"));

    /**
     * Layout for field:
     * {@snippet lang=c :
     * struct cudaMemLocation dstLocHint
     * }
     */
    public static final GroupLayout dstLocHint$layout() {
        return dstLocHint$LAYOUT;
    }

    private static final long dstLocHint$OFFSET = 12;

    /**
     * Offset for field:
     * {@snippet lang=c :
     * struct cudaMemLocation dstLocHint
     * }
     */
    public static final long dstLocHint$offset() {
        return dstLocHint$OFFSET;
    }

    /**
     * Getter for field:
     * {@snippet lang=c :
     * struct cudaMemLocation dstLocHint
     * }
     */
    public static MemorySegment dstLocHint(MemorySegment struct) {
        return struct.asSlice(dstLocHint$OFFSET, dstLocHint$LAYOUT.byteSize());
    }

    /**
     * Setter for field:
     * {@snippet lang=c :
     * struct cudaMemLocation dstLocHint
     * }
     */
    public static void dstLocHint(MemorySegment struct, MemorySegment fieldValue) {
        MemorySegment.copy(fieldValue, 0L, struct, dstLocHint$OFFSET, dstLocHint$LAYOUT.byteSize());
    }

    private static final OfInt flags$LAYOUT = (OfInt)$LAYOUT.select(groupElement("flags"));

    /**
     * Layout for field:
     * {@snippet lang=c :
     * unsigned int flags
     * }
     */
    public static final OfInt flags$layout() {
        return flags$LAYOUT;
    }

    private static final long flags$OFFSET = 20;

    /**
     * Offset for field:
     * {@snippet lang=c :
     * unsigned int flags
     * }
     */
    public static final long flags$offset() {
        return flags$OFFSET;
    }

    /**
     * Getter for field:
     * {@snippet lang=c :
     * unsigned int flags
     * }
     */
    public static int flags(MemorySegment struct) {
        return struct.get(flags$LAYOUT, flags$OFFSET);
    }

    /**
     * Setter for field:
     * {@snippet lang=c :
     * unsigned int flags
     * }
     */
    public static void flags(MemorySegment struct, int fieldValue) {
        struct.set(flags$LAYOUT, flags$OFFSET, fieldValue);
    }

    /**
     * Obtains a slice of {@code arrayParam} which selects the array element at {@code index}.
     * The returned segment has address {@code arrayParam.address() + index * layout().byteSize()}
     */
    public static MemorySegment asSlice(MemorySegment array, long index) {
        return array.asSlice(layout().byteSize() * index);
    }

    /**
     * The size (in bytes) of this struct
     */
    public static long sizeof() { return layout().byteSize(); }

    /**
     * Allocate a segment of size {@code layout().byteSize()} using {@code allocator}
     */
    public static MemorySegment allocate(SegmentAllocator allocator) {
        return allocator.allocate(layout());
    }

    /**
     * Allocate an array of size {@code elementCount} using {@code allocator}.
     * The returned segment has size {@code elementCount * layout().byteSize()}.
     */
    public static MemorySegment allocateArray(long elementCount, SegmentAllocator allocator) {
        return allocator.allocate(MemoryLayout.sequenceLayout(elementCount, layout()));
    }

    /**
     * Reinterprets {@code addr} using target {@code arena} and {@code cleanupAction} (if any).
     * The returned segment has size {@code layout().byteSize()}
     */
    public static MemorySegment reinterpret(MemorySegment addr, Arena arena, Consumer<MemorySegment> cleanup) {
        return reinterpret(addr, 1, arena, cleanup);
    }

    /**
     * Reinterprets {@code addr} using target {@code arena} and {@code cleanupAction} (if any).
     * The returned segment has size {@code elementCount * layout().byteSize()}
     */
    public static MemorySegment reinterpret(MemorySegment addr, long elementCount, Arena arena, Consumer<MemorySegment> cleanup) {
        return addr.reinterpret(layout().byteSize() * elementCount, arena, cleanup);
    }
}
