package dev.kvtier.cuda;

import dev.kvtier.cuda.runtime.MemcpyBatchAbi;
import dev.kvtier.cuda.runtime.cudaMemLocation;
import dev.kvtier.cuda.runtime.cudaMemcpyAttributes;
import dev.kvtier.cuda.runtime.cudart_h;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The raw jextract-shaped layer: the static header class bound to the process-wide library (the fake here), the struct
 * accessors, and the choice of batch ABI, including a runtime that lacks the symbol.
 */
class RawBindingsTest {

    @Test
    void staticBindingsCallTheProcessWideLibrary() {
        Path fake = NativeBuild.fakeLibrary().toAbsolutePath();
        Optional<CudaLibraryLoader.Library> bound = CudaLibraryLoader.processWideLibrary();
        assumeTrue(bound.isEmpty() || bound.get().location().equals(fake.toString()),
                "cudart_h is already bound to another library in this JVM: " + bound);
        String previous = System.getProperty(CudaLibraryLoader.LIBRARY_PROPERTY);
        System.setProperty(CudaLibraryLoader.LIBRARY_PROPERTY, fake.toString());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment version = arena.allocate(cudart_h.C_INT);
            assertEquals(cudart_h.cudaSuccess(), cudart_h.cudaRuntimeGetVersion(version));
            assertEquals(cudart_h.CUDART_VERSION(), version.get(cudart_h.C_INT, 0));
            assertEquals(fake.toString(), CudaLibraryLoader.processWideLibrary().orElseThrow().location());
            assertEquals("cudaErrorNoDevice", cudart_h.cudaGetErrorName(cudart_h.cudaErrorNoDevice()).getString(0));

            MemorySegment pointer = arena.allocate(cudart_h.C_POINTER);
            assertEquals(0, cudart_h.cudaMalloc(pointer, 4096));
            MemorySegment device = pointer.get(cudart_h.C_POINTER, 0);
            assertNotEquals(0, device.address());
            assertEquals(0, cudart_h.cudaFree(device));
            // A host pointer is not device memory, for the fake as for a GPU.
            assertEquals(cudart_h.cudaErrorInvalidValue(), cudart_h.cudaFree(arena.allocate(16)));
            cudart_h.cudaGetLastError();
        } finally {
            // The binding stays; only the property is restored, so later default searches see the real setting.
            if (previous == null) {
                System.clearProperty(CudaLibraryLoader.LIBRARY_PROPERTY);
            } else {
                System.setProperty(CudaLibraryLoader.LIBRARY_PROPERTY, previous);
            }
        }
    }

    @Test
    void structAccessorsReadAndWriteTheirFields() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attributes = cudaMemcpyAttributes.allocate(arena);
            assertEquals(24, attributes.byteSize());
            cudaMemcpyAttributes.srcAccessOrder(attributes, cudart_h.cudaMemcpySrcAccessOrderStream());
            cudaMemcpyAttributes.flags(attributes, cudart_h.cudaMemcpyFlagPreferOverlapWithCompute());
            MemorySegment hint = cudaMemLocation.allocate(arena);
            cudaMemLocation.type(hint, cudart_h.cudaMemLocationTypeDevice());
            cudaMemLocation.id(hint, 3);
            cudaMemcpyAttributes.dstLocHint(attributes, hint);
            assertEquals(cudart_h.cudaMemcpySrcAccessOrderStream(), attributes.get(cudart_h.C_INT, 0));
            assertEquals(cudart_h.cudaMemLocationTypeDevice(), attributes.get(cudart_h.C_INT, 12));
            assertEquals(3, cudaMemLocation.id(cudaMemcpyAttributes.dstLocHint(attributes)));
            assertEquals(cudart_h.cudaMemcpyFlagPreferOverlapWithCompute(), attributes.get(cudart_h.C_INT, 20));
            MemorySegment array = cudaMemcpyAttributes.allocateArray(3, arena);
            assertEquals(48, cudaMemcpyAttributes.asSlice(array, 2).address() - array.address());
        }
    }

    @Test
    void batchAbiFollowsTheRuntimeVersion() {
        assertEquals(Optional.empty(), MemcpyBatchAbi.forRuntimeVersion(12070));
        assertEquals(Optional.of(MemcpyBatchAbi.CUDA_12_8), MemcpyBatchAbi.forRuntimeVersion(12080));
        assertEquals(Optional.of(MemcpyBatchAbi.CUDA_12_8), MemcpyBatchAbi.forRuntimeVersion(12090));
        assertEquals(Optional.of(MemcpyBatchAbi.CUDA_13), MemcpyBatchAbi.forRuntimeVersion(13000));
        assertEquals(Optional.of(MemcpyBatchAbi.CUDA_13), MemcpyBatchAbi.forRuntimeVersion(13090));
        assertEquals(Optional.empty(), MemcpyBatchAbi.forRuntimeVersion(14000));
        assertEquals(9, MemcpyBatchAbi.CUDA_12_8.descriptor().argumentLayouts().size());
        assertEquals(8, MemcpyBatchAbi.CUDA_13.descriptor().argumentLayouts().size());
        assertEquals(Optional.empty(), MemcpyBatchAbi.resolve(name -> Optional.empty(), 13000),
                "a library without the symbol has no batch copy, whatever its version");
    }

    @Test
    void aRuntimeWithoutTheBatchSymbolCopiesOneByOne() {
        Path withoutBatch = NativeBuild.requireBuilt().resolve("fakecudart-nobatch/libcudart.so");
        CudaProbe probe = CudaRuntime.probe(withoutBatch);
        CudaRuntime old = probe.runtime().orElseThrow(() -> new AssertionError(probe.describe()));
        assertEquals(12060, old.runtimeVersion());
        assertFalse(old.isBatchCopyAvailable());
        assertEquals(BatchCopyPath.ONE_BY_ONE, old.batchCopyPath());
        byte[] expected = CudaRuntimeContract.randomBytes(5, 2 * 1000);
        try (CudaStream stream = old.createStream(true);
             PinnedAllocation host = old.allocatePinned(2000);
             PinnedAllocation back = old.allocatePinned(2000);
             DeviceAllocation device = old.allocateDevice(2000)) {
            MemorySegment.copy(MemorySegment.ofArray(expected), 0, host.segment(), 0, 2000);
            var hostPieces = java.util.List.of(host.segment().asSlice(0, 1000), host.segment().asSlice(1000, 1000));
            var devicePieces = java.util.List.of(device.segment().asSlice(1000, 1000), device.segment().asSlice(0, 1000));
            var backPieces = java.util.List.of(back.segment().asSlice(0, 1000), back.segment().asSlice(1000, 1000));
            long[] sizes = {1000, 1000};
            assertEquals(BatchCopyPath.ONE_BY_ONE,
                    old.memcpyBatchAsync(devicePieces, hostPieces, sizes, MemcpyKind.HOST_TO_DEVICE, stream));
            old.memcpyBatchAsync(backPieces, devicePieces, sizes, MemcpyKind.DEVICE_TO_HOST, stream);
            stream.synchronize();
            // Handles of one library mean nothing in another: refused before any native call.
            CudaRuntime other = CudaRuntime.probe(NativeBuild.fakeLibrary()).runtime().orElseThrow();
            try (CudaStream otherStream = other.createStream(true); CudaEvent otherEvent = other.createEvent(false)) {
                org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> old.memcpyAsync(
                        back.segment(), host.segment(), 16, MemcpyKind.HOST_TO_HOST, otherStream));
                org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                        () -> stream.waitFor(otherEvent));
                org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                        () -> otherEvent.record(stream));
            }
            assertEquals(java.util.Arrays.toString(expected),
                    java.util.Arrays.toString(CudaRuntimeContract.bytesOf(back.segment(), 2000)));
        }
    }
}
