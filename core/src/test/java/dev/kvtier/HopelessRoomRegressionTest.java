package dev.kvtier;

import dev.kvtier.prefix.BlockHash;
import dev.kvtier.prefix.BlockHasher;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Making room on a tier whose segments can go nowhere (each larger than the budget of every slower tier: a GPU-only
 * configuration, CPU budget 0 and a DISK tier smaller than a block) is refused at once, saying why, instead of backing
 * off round after round as if the candidates were being moved by others: budgets do not change, so no round could
 * succeed. On 3891e62 a put there waited through all 40 rounds of backoff and then blamed moves in flight ("every
 * segment there is being moved, made resident or pinned; retry"), and every prefix-block store onto a full GPU tier
 * paid two rounds of backoff before falling to the slower tiers: this test fails there on the message.
 */
class HopelessRoomRegressionTest {
    private static final int PAGE = 4096;

    @TempDir
    Path disk;

    private KvTierCache gpuOnly() {
        return KvTierCache.open(KvTierConfig.builder().backend(Backend.HOST).gpuBudgetBytes(4L * PAGE).cpuBudgetBytes(0)
                .diskBudgetBytes(PAGE / 2).pageSizeBytes(PAGE).diskDirectory(disk).build());
    }

    @Test
    void aPutOntoAGpuWhoseSegmentsCanGoNowhereIsRefusedAtOnceSayingWhy() {
        try (KvTierCache cache = gpuOnly()) {
            MemorySegment bytes = MemorySegment.ofArray(new byte[PAGE]);
            for (int i = 0; i < 4; i++) {
                cache.put("s" + i, PositionRange.of(0, 16), bytes, Tier.GPU);
            }
            TierFullException full = assertThrows(TierFullException.class,
                    () -> cache.put("s4", PositionRange.of(0, 16), bytes, Tier.GPU));
            assertTrue(full.getMessage().contains("no segment there can leave it"), full.getMessage());
            assertEquals(4L * PAGE, cache.stats().gpuUsed(), "nothing was moved or lost");
        }
    }

    @Test
    void aBlockStoreOntoAFullGpuTierWhoseBlocksCanGoNowhereIsRefusedWithNothingStored() {
        try (KvTierCache cache = gpuOnly()) {
            PrefixBlockCache blocks = cache.prefixBlocks(BlockLayout.of(16, PAGE));
            int[] tokens = new int[16 * 5];
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = i;
            }
            List<BlockHash> chain = new BlockHasher().chain(BlockHasher.namespaceRoot("m"), tokens, 16);
            MemorySegment four = MemorySegment.ofArray(new byte[4 * PAGE]);
            assertEquals(4, blocks.storeBlocks(BlockHash.ROOT, chain.subList(0, 4), four, Tier.GPU));
            MemorySegment one = MemorySegment.ofArray(new byte[PAGE]);
            TierFullException full = assertThrows(TierFullException.class,
                    () -> blocks.storeBlocks(chain.get(3), chain.subList(4, 5), one, Tier.GPU));
            assertTrue(full.getMessage().contains("DISK"), "the last tier tried is named: " + full.getMessage());
            assertEquals(4, blocks.lookupPrefix(chain).cachedBlocks());
        }
    }
}
