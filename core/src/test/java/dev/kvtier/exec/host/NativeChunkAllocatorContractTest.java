package dev.kvtier.exec.host;

import dev.kvtier.exec.ChunkAllocator;
import dev.kvtier.exec.ChunkAllocatorContract;

import java.nio.file.Path;

/** The chunk-allocator contract on plain native memory (the host backend's device and pinned stand-ins). */
class NativeChunkAllocatorContractTest extends ChunkAllocatorContract {
    @Override
    protected ChunkAllocator openAllocator(Path directory) {
        return new NativeChunkAllocator("contract test memory");
    }

    @Override
    protected boolean hostAccessible() {
        return true;
    }
}
