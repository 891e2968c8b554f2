package dev.kvtier.exec.cuda;

import java.lang.foreign.MemorySegment;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The host memory blocks (unregistered DISK extents) whose device copies must go through bounce
 * buffers: the DISK allocator adds an extent when it maps it and removes it before unmapping; the
 * copy engine asks, per copy, whether its host side lies in one. Blocks are ordered by where they
 * start (the address is only compared, never dereferenced or handed out). Thread-safe.
 */
final class StagedHostMemory {
    private final ConcurrentSkipListMap<MemorySegment, Boolean> blocks =
            new ConcurrentSkipListMap<>(Comparator.comparingLong(MemorySegment::address));

    void add(MemorySegment block) {
        blocks.put(block, Boolean.TRUE);
    }

    void remove(MemorySegment block) {
        blocks.remove(block);
    }

    /** Whether any byte of {@code host} lies in a registered block (a copy never spans two blocks). */
    boolean contains(MemorySegment host) {
        if (blocks.isEmpty() || host.byteSize() == 0) {
            return false;
        }
        Map.Entry<MemorySegment, Boolean> candidate = blocks.floorEntry(host);
        return candidate != null && candidate.getKey().asOverlappingSlice(host).isPresent();
    }

    boolean isEmpty() {
        return blocks.isEmpty();
    }
}
