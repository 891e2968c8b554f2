package dev.kvtier;

import dev.kvtier.cuda.CudaProbe;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.cuda.CudaStream;
import dev.kvtier.cuda.DeviceAllocation;
import dev.kvtier.cuda.MemcpyKind;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/** The contract on a real GPU; skipped (with the probe's reason) where no CUDA device is usable. */
@Tag("gpu")
class CudaOnGpuKvTierCacheTest extends KvTierCacheContract {
    private CudaRuntime cuda;
    private final List<DeviceAllocation> deviceMemory = new ArrayList<>();

    @BeforeEach
    void requireGpu() {
        CudaProbe probe = CudaRuntime.probe();
        Assumptions.assumeTrue(probe.isUsable(), () -> "no usable CUDA device: " + probe.describe());
        cuda = probe.runtime().orElseThrow();
    }

    @AfterEach
    void freeDeviceMemory() {
        deviceMemory.forEach(DeviceAllocation::close);
        deviceMemory.clear();
    }

    @Override
    protected KvTierConfig.Builder configureBackend(KvTierConfig.Builder builder) {
        return builder.backend(Backend.CUDA);
    }

    @Override
    protected MemorySegment deviceMemoryHolding(Arena arena, byte[] content) {
        DeviceAllocation allocation = cuda.allocateDevice(content.length);
        deviceMemory.add(allocation);
        try (CudaStream stream = cuda.createStream(true)) {
            cuda.memcpyAsync(allocation.segment(), nativeCopy(arena, content), content.length, MemcpyKind.HOST_TO_DEVICE, stream);
            stream.synchronize();
        }
        return allocation.segment();
    }

    @Override
    protected byte[] deviceMemoryContent(MemorySegment device) {
        try (Arena arena = Arena.ofConfined(); CudaStream stream = cuda.createStream(true)) {
            MemorySegment host = arena.allocate(device.byteSize());
            cuda.memcpyAsync(host, device, device.byteSize(), MemcpyKind.DEVICE_TO_HOST, stream);
            stream.synchronize();
            return host.toArray(ValueLayout.JAVA_BYTE);
        }
    }
}
