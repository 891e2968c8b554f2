package dev.kvtier;

import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The README's facade example, compiled and run (HOST backend, small budgets), so it cannot rot. */
class FacadeExampleTest {
    @TempDir
    Path kvDirectory;

    @Test
    void theReadmeExampleRuns() {
        // --- README example starts here ---
        KvTierConfig config = KvTierConfig.builder()
                .gpuBudgetBytes(8L << 20)               // device memory for KV
                .cpuBudgetBytes(32L << 20)              // pinned host memory
                .diskDirectory(kvDirectory)             // mapped extents live here
                .backend(Backend.HOST)                  // AUTO: CUDA when a device is usable
                .build();
        try (KvTierCache cache = KvTierCache.open(config); Arena arena = Arena.ofConfined()) {
            MemorySegment kv = arena.allocate(2 << 20); // a turn's KV, as the model wrote it
            kv.set(ValueLayout.JAVA_LONG, 0, 42L);
            cache.put("chat-7/turn-3", PositionRange.of(512, 1024), kv, Tier.GPU);
            cache.demote("chat-7/turn-3", Tier.DISK);   // returns when the bytes are on disk (CRC32C kept)
            ResidentSegment back = cache.ensureResident("chat-7/turn-3", Tier.GPU); // makes room, promotes
            assertEquals(PositionRange.of(512, 1024), back.positions());           // positions unchanged
            MemorySegment copy = arena.allocate(back.sizeBytes());
            cache.read("chat-7/turn-3", copy);          // the bytes, exactly as put
            assertEquals(42L, copy.get(ValueLayout.JAVA_LONG, 0));
            try (SegmentPin pin = cache.pin("chat-7/turn-3", Tier.GPU)) { // held on the GPU until closed
                assertEquals(Tier.GPU, pin.segment().tier());           // launch kernels on pin.segment().pages()
            }
            System.out.println(cache.backendDescription() + "\n" + cache.stats());
        }
        // --- README example ends here ---
    }
}
