package dev.kvtier.exec;

import java.nio.file.Path;

/** The chunk-allocator contract on mapped file extents. */
class MappedFileChunkAllocatorContractTest extends ChunkAllocatorContract {
    @Override
    protected ChunkAllocator openAllocator(Path directory) {
        return new MappedFileChunkAllocator(directory);
    }

    @Override
    protected boolean hostAccessible() {
        return true;
    }
}
