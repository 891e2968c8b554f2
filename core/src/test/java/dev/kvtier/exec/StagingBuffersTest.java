package dev.kvtier.exec;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StagingBuffersTest {

    @Test
    void sizeClassesArePowersOfTwoFrom64KiB() {
        assertEquals(0, StagingBuffers.sizeClass(0));
        assertEquals(0, StagingBuffers.sizeClass(1));
        assertEquals(0, StagingBuffers.sizeClass(64 << 10));
        assertEquals(1, StagingBuffers.sizeClass((64 << 10) + 1));
        assertEquals(1, StagingBuffers.sizeClass(128 << 10));
        assertEquals(2, StagingBuffers.sizeClass((128 << 10) + 1));
        assertEquals(8, StagingBuffers.sizeClass(StagingBuffers.MAX_POOLED_BYTES));
    }

    @Test
    void aReturnedBufferIsReusedForTheSameClassAndSlicedToTheSizeAsked() {
        try (StagingBuffers buffers = new StagingBuffers()) {
            long address;
            try (StagingBuffers.Buffer first = buffers.acquire(100_000)) {
                assertEquals(100_000, first.segment().byteSize());
                assertTrue(first.segment().isNative());
                address = first.segment().address();
            }
            assertEquals(1, buffers.idleBuffers());
            try (StagingBuffers.Buffer second = buffers.acquire(70_000)) { // same class: 128 KiB
                assertEquals(70_000, second.segment().byteSize());
                assertEquals(address, second.segment().address());
                assertEquals(0, buffers.idleBuffers());
            }
            try (StagingBuffers.Buffer other = buffers.acquire(10)) {    // another class: a new buffer
                assertNotEquals(address, other.segment().address());
            }
            assertEquals(2, buffers.idleBuffers());
        }
    }

    @Test
    void atMostAFewIdleBuffersAreKeptAndLargeOnesNever() {
        try (StagingBuffers buffers = new StagingBuffers()) {
            List<StagingBuffers.Buffer> held = new ArrayList<>();
            for (int i = 0; i < StagingBuffers.MAX_IDLE_PER_CLASS + 3; i++) {
                held.add(buffers.acquire(1_000));
            }
            List<MemorySegment> segments = held.stream().map(StagingBuffers.Buffer::segment).toList();
            held.forEach(StagingBuffers.Buffer::close);
            assertEquals(StagingBuffers.MAX_IDLE_PER_CLASS, buffers.idleBuffers());
            assertEquals(3, segments.stream().filter(s -> !s.scope().isAlive()).count(), "the surplus was freed");

            StagingBuffers.Buffer large = buffers.acquire(StagingBuffers.MAX_POOLED_BYTES + 1);
            MemorySegment largeSegment = large.segment();
            large.close();
            large.close(); // once only
            assertFalse(largeSegment.scope().isAlive(), "a buffer above the largest class is freed at once");
            assertEquals(StagingBuffers.MAX_IDLE_PER_CLASS, buffers.idleBuffers());
        }
    }

    @Test
    void closeFreesIdleBuffersAndOnesReturnedLater() {
        StagingBuffers buffers = new StagingBuffers();
        StagingBuffers.Buffer idle = buffers.acquire(1);
        StagingBuffers.Buffer inUse = buffers.acquire(1);
        MemorySegment idleSegment = idle.segment();
        MemorySegment inUseSegment = inUse.segment();
        idle.close();
        buffers.close();
        assertFalse(idleSegment.scope().isAlive());
        assertTrue(inUseSegment.scope().isAlive(), "still on loan");
        inUse.close();
        assertFalse(inUseSegment.scope().isAlive());
        assertEquals(0, buffers.idleBuffers());
        assertThrows(IllegalArgumentException.class, () -> buffers.acquire(-1));
    }
}
