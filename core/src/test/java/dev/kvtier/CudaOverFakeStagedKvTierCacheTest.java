package dev.kvtier;

import dev.kvtier.cuda.CudaException;
import dev.kvtier.exec.cuda.CudaExecutionBackend;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The whole CUDA-over-fake contract again with DISK extents never registered: every DISK to GPU
 * copy and back goes through the pinned bounce buffers. Plus what only the staged path has: a
 * segment larger than the whole bounce pool and not a multiple of a buffer, a copy failing in the
 * middle of its chunks, the buffers allocated on first use and freed on close.
 */
class CudaOverFakeStagedKvTierCacheTest extends CudaOverFakeKvTierCacheTest {
    private static final int BOUNCE = (int) KvTierConfig.DEFAULT_BOUNCE_BUFFER_BYTES;

    @Override
    protected DiskTransferMode diskTransferMode() {
        return DiskTransferMode.STAGED;
    }

    @Test
    void diskIsStagedAndNothingIsRegistered() {
        byte[] data = randomBytes(31, 20 * PAGE + 3);
        try (KvTierCache cache = open(config(64, 64))) {
            assertTrue(cache.backendDescription().contains("DISK: staged through 2 pair(s) of 8192 KiB"),
                    cache.backendDescription());
            assertEquals(0, fake.liveCount("pinned"), "bounce buffers are allocated on first use");
            cache.put("k", PositionRange.of(0, 1), MemorySegment.ofArray(data), Tier.GPU);
            cache.demote("k", Tier.DISK);
            assertEquals(0, fake.liveCount("registered"));
            assertEquals(2, fake.liveCount("pinned"), "one pair of bounce buffers");
            cache.promote("k", Tier.GPU);
            assertArrayEquals(data, readAll(cache, "k"));
        }
        assertEquals(0, fake.liveCount("pinned"), "bounce buffers freed on close");
    }

    /** The bounce buffers are the configured ones, and a segment spanning many of them round-trips. */
    @Test
    void theBounceBuffersAreTheConfiguredOnes() {
        int bounce = 4 * PAGE;
        byte[] data = randomBytes(35, 7 * bounce + 11);
        try (KvTierCache cache = open(config(64, 64).bounceBufferBytes(bounce).bounceBufferPairs(3))) {
            assertTrue(cache.backendDescription().contains("DISK: staged through 3 pair(s) of " + (bounce >> 10) + " KiB"),
                    cache.backendDescription());
            cache.put("k", PositionRange.of(0, 1), MemorySegment.ofArray(data), Tier.GPU);
            cache.demote("k", Tier.DISK);
            cache.promote("k", Tier.GPU);
            assertArrayEquals(data, readAll(cache, "k"));
        }
    }

    /** Larger than all four buffers together, and no multiple of one: GPU -> DISK -> GPU and DISK -> CPU -> DISK -> GPU. */
    @Test
    void aSegmentLargerThanTheWholeBouncePoolRoundTripsExactly() {
        int size = 4 * BOUNCE + BOUNCE / 3 + 17;
        int pages = size / PAGE + 1;
        byte[] data = randomBytes(32, size);
        try (KvTierCache cache = open(config(pages + 8, pages + 8).diskExtentBytes(64L << 20))) {
            cache.put("big", PositionRange.of(100, 200), MemorySegment.ofArray(data), Tier.GPU);
            cache.demote("big", Tier.DISK);
            assertEquals(Tier.DISK, tierOf(cache, "big"));
            assertArrayEquals(data, readAll(cache, "big"));
            cache.promote("big", Tier.GPU);
            assertArrayEquals(data, readAll(cache, "big"));
            cache.demote("big", Tier.CPU);
            cache.demote("big", Tier.DISK);
            ResidentSegment resident = cache.ensureResident("big", Tier.GPU);
            assertEquals(PositionRange.of(100, 200), resident.positions());
            assertArrayEquals(data, readAll(cache, "big"));
            cache.remove("big");
            assertEverythingFreed(cache);
        }
    }

    /** The second of several chunk copies fails: the segment stays whole where it was, the retry moves it. */
    @Test
    void aCopyFailingMidwayThroughItsChunksLosesNothing() {
        int size = 2 * BOUNCE + 5;
        int pages = size / PAGE + 1;
        byte[] data = randomBytes(33, size);
        try (KvTierCache cache = open(config(pages + 8, pages + 8).diskExtentBytes(64L << 20))) {
            cache.put("k", PositionRange.of(0, 9), MemorySegment.ofArray(data), Tier.GPU);
            fake.configure("fail=cudaMemcpyAsync:2:cudaErrorLaunchFailure");
            TransferFailedException down = assertThrows(TransferFailedException.class, () -> cache.demote("k", Tier.DISK));
            CudaException cause = assertInstanceOf(CudaException.class, down.getCause());
            assertTrue(cause.getMessage().contains("cudaMemcpyAsync"), cause.getMessage());
            assertTrue(cause.getMessage().contains("cudaErrorLaunchFailure"), cause.getMessage());
            assertEquals(Tier.GPU, tierOf(cache, "k"));
            assertEquals(0, cache.stats().diskUsed());
            assertEquals(0, cache.stats().allocated(Tier.DISK));
            assertArrayEquals(data, readAll(cache, "k"));

            cache.demote("k", Tier.DISK);
            assertArrayEquals(data, readAll(cache, "k"));
            fake.configure("failasync=cudaMemcpyAsync:3:cudaErrorLaunchFailure");
            TransferFailedException up = assertThrows(TransferFailedException.class, () -> cache.promote("k", Tier.GPU));
            assertTrue(String.valueOf(up.getCause()).contains("cudaErrorLaunchFailure"), String.valueOf(up.getCause()));
            assertEquals(Tier.DISK, tierOf(cache, "k"));
            assertEquals(0, cache.stats().gpuUsed());
            assertArrayEquals(data, readAll(cache, "k"));
            cache.promote("k", Tier.GPU);
            assertArrayEquals(data, readAll(cache, "k"));
        }
        // afterCachesClosed: no pinned buffer, event, stream or device memory left in the fake.
    }
}
