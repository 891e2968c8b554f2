package dev.kvtier;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** The contract on the host backend: device memory emulated by native memory. */
class HostKvTierCacheTest extends KvTierCacheContract {

    @Override
    protected KvTierConfig.Builder configureBackend(KvTierConfig.Builder builder) {
        return builder.backend(Backend.HOST);
    }

    @Override
    protected MemorySegment deviceMemoryHolding(Arena arena, byte[] content) {
        return nativeCopy(arena, content);
    }

    @Override
    protected byte[] deviceMemoryContent(MemorySegment device) {
        return device.toArray(ValueLayout.JAVA_BYTE);
    }
}
