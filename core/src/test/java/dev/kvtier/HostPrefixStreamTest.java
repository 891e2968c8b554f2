package dev.kvtier;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** The prefix-stream contract on the host backend (device memory emulated by native memory). */
class HostPrefixStreamTest extends PrefixStreamContract {

    @Override
    protected KvTierConfig.Builder configureBackend(KvTierConfig.Builder builder) {
        return builder.backend(Backend.HOST);
    }

    @Override
    protected byte[] pageContent(MemorySegment page) {
        return page.toArray(ValueLayout.JAVA_BYTE);
    }
}
