package dev.kvtier.cuda;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What every CUDA runtime must do with our layer, whatever library is behind it: subclasses supply the runtime (the
 * host-emulated fake in CI, a real GPU under the {@code gpu} tag). Every test closes everything it creates.
 */
abstract class CudaRuntimeContract {

    /** The runtime under test; subclasses skip the test (Assumptions) when they have none. */
    protected abstract CudaRuntime runtime();

    static byte[] randomBytes(long seed, int size) {
        byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    static byte[] bytesOf(MemorySegment segment, long size) {
        return segment.asSlice(0, size).toArray(ValueLayout.JAVA_BYTE);
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {1, 13, 4096, 65_537, 1 << 20})
    void pinnedHostToDeviceToDeviceToHostKeepsEveryByte(int size) {
        CudaRuntime cuda = runtime();
        byte[] expected = randomBytes(size, size);
        try (CudaStream stream = cuda.createStream(true);
             PinnedAllocation source = cuda.allocatePinned(size);
             PinnedAllocation target = cuda.allocatePinned(size);
             DeviceAllocation first = cuda.allocateDevice(size);
             DeviceAllocation second = cuda.allocateDevice(size)) {
            MemorySegment.copy(MemorySegment.ofArray(expected), 0, source.segment(), 0, size);
            cuda.memcpyAsync(first.segment(), source.segment(), size, MemcpyKind.HOST_TO_DEVICE, stream);
            cuda.memcpyAsync(second.segment(), first.segment(), size, MemcpyKind.DEVICE_TO_DEVICE, stream);
            cuda.memcpyAsync(target.segment(), second.segment(), size, MemcpyKind.DEVICE_TO_HOST, stream);
            stream.synchronize();
            assertArrayEquals(expected, bytesOf(target.segment(), size));
        }
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {1, 4095, 262_144})
    void pageableHostMemoryRoundTrips(int size) {
        CudaRuntime cuda = runtime();
        byte[] expected = randomBytes(31L * size, size);
        try (Arena arena = Arena.ofConfined();
             CudaStream stream = cuda.createStream(false);
             DeviceAllocation device = cuda.allocateDevice(size)) {
            MemorySegment source = arena.allocate(size);
            MemorySegment target = arena.allocate(size);
            MemorySegment.copy(MemorySegment.ofArray(expected), 0, source, 0, size);
            cuda.memcpyAsync(device.segment(), source, size, MemcpyKind.HOST_TO_DEVICE, stream);
            cuda.memcpyAsync(target, device.segment(), size, MemcpyKind.DEVICE_TO_HOST, stream);
            stream.synchronize();
            assertArrayEquals(expected, bytesOf(target, size));
        }
    }

    @Test
    void registeredHostMemoryRoundTripsAndUnregistersOnClose() {
        CudaRuntime cuda = runtime();
        int size = 3 * 4096;
        byte[] expected = randomBytes(7, size);
        try (Arena arena = Arena.ofConfined();
             CudaStream stream = cuda.createStream(true);
             DeviceAllocation device = cuda.allocateDevice(size)) {
            MemorySegment source = arena.allocate(size, 4096);
            MemorySegment target = arena.allocate(size, 4096);
            MemorySegment.copy(MemorySegment.ofArray(expected), 0, source, 0, size);
            boolean readOnlySupported = cuda.deviceAttribute(DeviceAttribute.HOST_REGISTER_READ_ONLY_SUPPORTED, 0) != 0;
            try (HostRegistration readOnly = cuda.registerHost(source, readOnlySupported);
                 HostRegistration writable = cuda.registerHost(target, false)) {
                assertEquals(readOnlySupported, readOnly.isReadOnly());
                assertFalse(writable.isReadOnly());
                cuda.memcpyAsync(device.segment(), readOnly.segment(), size, MemcpyKind.HOST_TO_DEVICE, stream);
                cuda.memcpyAsync(writable.segment(), device.segment(), size, MemcpyKind.DEVICE_TO_HOST, stream);
                stream.synchronize();
            }
            assertArrayEquals(expected, bytesOf(target, size));
        }
    }

    @Test
    void memsetFillsDeviceMemory() {
        CudaRuntime cuda = runtime();
        int size = 10_000;
        try (CudaStream stream = cuda.createStream(true);
             DeviceAllocation device = cuda.allocateDevice(size);
             PinnedAllocation host = cuda.allocatePinned(size)) {
            cuda.memsetAsync(device.segment(), 0xAB, size, stream);
            cuda.memsetAsync(device.segment(), 0x11, 100, stream);
            cuda.memcpyAsync(host.segment(), device.segment(), size, MemcpyKind.DEVICE_TO_HOST, stream);
            stream.synchronize();
            byte[] bytes = bytesOf(host.segment(), size);
            for (int i = 0; i < size; i++) {
                assertEquals(i < 100 ? (byte) 0x11 : (byte) 0xAB, bytes[i], "byte " + i);
            }
        }
    }

    @Test
    void workOnOneStreamRunsInOrder() {
        CudaRuntime cuda = runtime();
        int size = 64 * 1024;
        int rounds = 8;
        try (CudaStream stream = cuda.createStream(true);
             DeviceAllocation a = cuda.allocateDevice(size);
             DeviceAllocation b = cuda.allocateDevice(size);
             PinnedAllocation sources = cuda.allocatePinned((long) size * rounds);
             PinnedAllocation results = cuda.allocatePinned((long) size * rounds)) {
            // Each round overwrites a, then b from a, then reads b: any reordering reads another round's bytes.
            for (int round = 0; round < rounds; round++) {
                MemorySegment source = sources.segment().asSlice((long) round * size, size);
                MemorySegment.copy(MemorySegment.ofArray(randomBytes(100 + round, size)), 0, source, 0, size);
                cuda.memcpyAsync(a.segment(), source, size, MemcpyKind.HOST_TO_DEVICE, stream);
                cuda.memcpyAsync(b.segment(), a.segment(), size, MemcpyKind.DEVICE_TO_DEVICE, stream);
                cuda.memcpyAsync(results.segment().asSlice((long) round * size, size), b.segment(), size,
                        MemcpyKind.DEVICE_TO_HOST, stream);
            }
            stream.synchronize();
            for (int round = 0; round < rounds; round++) {
                assertArrayEquals(randomBytes(100 + round, size),
                        bytesOf(results.segment().asSlice((long) round * size, size), size), "round " + round);
            }
        }
    }

    @Test
    void batchCopyMovesEveryPieceWhateverThePath() {
        CudaRuntime cuda = runtime();
        int pieces = 16;
        long[] sizes = new long[pieces];
        long total = 0;
        Random random = new Random(42);
        for (int i = 0; i < pieces; i++) {
            sizes[i] = 1 + random.nextInt(20_000);
            total += sizes[i];
        }
        byte[] expected = randomBytes(43, (int) total);
        try (CudaStream stream = cuda.createStream(true);
             PinnedAllocation source = cuda.allocatePinned(total);
             PinnedAllocation target = cuda.allocatePinned(total);
             DeviceAllocation device = cuda.allocateDevice(total)) {
            MemorySegment.copy(MemorySegment.ofArray(expected), 0, source.segment(), 0, total);
            List<MemorySegment> hostSlices = new ArrayList<>();
            List<MemorySegment> deviceSlices = new ArrayList<>();
            List<MemorySegment> backSlices = new ArrayList<>();
            long offset = 0;
            for (long size : sizes) {
                hostSlices.add(source.segment().asSlice(offset, size));
                deviceSlices.add(device.segment().asSlice(offset, size));
                backSlices.add(target.segment().asSlice(offset, size));
                offset += size;
            }
            BatchCopyPath up = cuda.memcpyBatchAsync(deviceSlices, hostSlices, sizes, MemcpyKind.HOST_TO_DEVICE, stream);
            BatchCopyPath down = cuda.memcpyBatchAsync(backSlices, deviceSlices, sizes, MemcpyKind.DEVICE_TO_HOST, stream);
            stream.synchronize();
            assertEquals(cuda.batchCopyPath(), up);
            assertEquals(cuda.batchCopyPath(), down);
            assertEquals(cuda.isBatchCopyAvailable(), up != BatchCopyPath.ONE_BY_ONE);
            assertArrayEquals(expected, bytesOf(target.segment(), total));
        }
    }

    @Test
    void closeIsIdempotentAndUseAfterCloseIsAClearError() {
        CudaRuntime cuda = runtime();
        CudaStream stream = cuda.createStream(true);
        CudaEvent event = cuda.createEvent(false);
        DeviceAllocation device = cuda.allocateDevice(256);
        PinnedAllocation pinned = cuda.allocatePinned(256);
        MemorySegment pinnedSegment = pinned.segment();
        for (AutoCloseable handle : List.of(stream, event, device, pinned)) {
            assertDoesNotThrow(handle::close);
            assertDoesNotThrow(handle::close);
        }
        assertTrue(stream.isClosed() && event.isClosed() && device.isClosed() && pinned.isClosed());
        IllegalStateException closedStream = assertThrows(IllegalStateException.class, stream::synchronize);
        assertTrue(closedStream.getMessage().contains("closed"), closedStream.getMessage());
        assertThrows(IllegalStateException.class, event::isComplete);
        assertThrows(IllegalStateException.class, device::segment);
        assertThrows(IllegalStateException.class, pinned::segment);
        // The segment handed out earlier is dead too: no use-after-free through a kept reference.
        assertThrows(IllegalStateException.class, () -> pinnedSegment.get(ValueLayout.JAVA_BYTE, 0));
    }

    @Test
    void invalidArgumentsNameTheArgument() {
        CudaRuntime cuda = runtime();
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class, () -> cuda.allocateDevice(-1));
        assertTrue(negative.getMessage().contains("bytes") && negative.getMessage().contains("-1"), negative.getMessage());
        try (CudaStream stream = cuda.createStream(true); DeviceAllocation device = cuda.allocateDevice(16)) {
            IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class, () ->
                    cuda.memcpyAsync(device.segment(), device.segment(), 17, MemcpyKind.DEVICE_TO_DEVICE, stream));
            assertTrue(tooLong.getMessage().contains("17"), tooLong.getMessage());
            assertThrows(IllegalArgumentException.class, () ->
                    cuda.registerHost(MemorySegment.ofArray(new byte[16]), false));
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment readOnlyHost = arena.allocate(16).asReadOnly();
                IllegalArgumentException intoReadOnly = assertThrows(IllegalArgumentException.class, () ->
                        cuda.memcpyAsync(readOnlyHost, device.segment(), 16, MemcpyKind.DEVICE_TO_HOST, stream));
                assertTrue(intoReadOnly.getMessage().contains("read-only"), intoReadOnly.getMessage());
                assertThrows(IllegalArgumentException.class, () -> cuda.registerHost(readOnlyHost, false));
            }
        }
    }

    @Test
    void reportsDeviceFacts() {
        CudaRuntime cuda = runtime();
        MemoryInfo memory = cuda.memoryInfo();
        assertTrue(memory.totalBytes() > 0 && memory.freeBytes() <= memory.totalBytes(), memory.toString());
        assertTrue(cuda.deviceAttribute(DeviceAttribute.COMPUTE_CAPABILITY_MAJOR, 0) > 0);
        assertEquals(0, cuda.currentDevice());
        cuda.setDevice(0);
        assertDoesNotThrow(() -> cuda.canAccessPeer(0, 0));
        assertDoesNotThrow(cuda::deviceSynchronize);
        assertDoesNotThrow(cuda::checkLastError);
        assertEquals(0, cuda.peekAtLastError());
        assertTrue(cuda.deviceCount() >= 1);
        assertTrue(cuda.description().contains(cuda.libraryLocation()), cuda.description());
    }
}
