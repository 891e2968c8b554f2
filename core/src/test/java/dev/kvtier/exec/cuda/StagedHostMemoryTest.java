package dev.kvtier.exec.cuda;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which host memory the CUDA engine stages: slices of a marked block, nothing beside it, nothing once unmarked. */
class StagedHostMemoryTest {

    @Test
    void slicesOfAMarkedBlockAreStagedAndMemoryBesideItIsNot() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment whole = arena.allocate(3 * 4096, 4096);
            MemorySegment before = whole.asSlice(0, 4096);
            MemorySegment block = whole.asSlice(4096, 4096);
            MemorySegment after = whole.asSlice(2 * 4096, 4096);
            StagedHostMemory staged = new StagedHostMemory();
            assertTrue(staged.isEmpty());
            assertFalse(staged.contains(block));

            staged.add(block);
            assertTrue(staged.contains(block));
            assertTrue(staged.contains(block.asSlice(100, 1)));
            assertTrue(staged.contains(block.asSlice(4095, 1)));
            assertFalse(staged.contains(before));
            assertFalse(staged.contains(before.asSlice(4095, 1)));
            assertFalse(staged.contains(after));
            assertFalse(staged.contains(block.asSlice(0, 0)), "an empty copy needs no staging");

            staged.remove(block);
            assertTrue(staged.isEmpty());
            assertFalse(staged.contains(block));
        }
    }
}
