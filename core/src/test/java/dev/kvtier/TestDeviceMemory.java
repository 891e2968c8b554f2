package dev.kvtier;

import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.CudaStream;
import dev.kvtier.cuda.DeviceAllocation;
import dev.kvtier.cuda.MemcpyKind;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * Device memory the CUDA contract tests hand to {@link KvTierCache#adopt}, on a real GPU or the fake
 * libcudart: {@code cudaMalloc}'ed, filled and read back through a stream. Owns what it allocated:
 * {@link #close()} frees it all (later calls free nothing more). Not thread-safe.
 */
final class TestDeviceMemory implements AutoCloseable {
    private final CudaRuntime cuda;
    private final List<DeviceAllocation> allocations = new ArrayList<>();

    TestDeviceMemory(CudaRuntime cuda) {
        this.cuda = cuda;
    }

    /** New device memory holding {@code content}; {@code arena} holds the host copy it is uploaded from. */
    MemorySegment holding(Arena arena, byte[] content) {
        DeviceAllocation allocation = cuda.allocateDevice(content.length);
        allocations.add(allocation);
        try (CudaStream stream = cuda.createStream(true)) {
            cuda.memcpyAsync(allocation.segment(), KvTierCacheContract.nativeCopy(arena, content), content.length,
                    MemcpyKind.HOST_TO_DEVICE, stream);
            stream.synchronize();
        }
        return allocation.segment();
    }

    /** The current content of {@code device}, copied back to the host. */
    byte[] content(MemorySegment device) {
        try (Arena arena = Arena.ofConfined(); CudaStream stream = cuda.createStream(true)) {
            MemorySegment host = arena.allocate(device.byteSize());
            cuda.memcpyAsync(host, device, device.byteSize(), MemcpyKind.DEVICE_TO_HOST, stream);
            stream.synchronize();
            return host.toArray(ValueLayout.JAVA_BYTE);
        }
    }

    @Override
    public void close() {
        allocations.forEach(DeviceAllocation::close);
        allocations.clear();
    }
}
