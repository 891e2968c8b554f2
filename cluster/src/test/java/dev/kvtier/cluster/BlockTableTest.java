package dev.kvtier.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvtier.prefix.BlockHash;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The open-addressing index against a plain map, through growth, deletions (backward shift) and whole-rank resets. */
class BlockTableTest {

    @Test
    void agreesWithAMapUnderRandomOperations() {
        for (int worldSize : new int[] {1, 8, 17, 64}) {
            Random random = new Random(worldSize);
            BlockTable table = new BlockTable(worldSize, 4);
            Map<BlockHash, int[]> model = new HashMap<>(); // per block: tier bits per rank, then tokens at [worldSize]
            // Few distinct keys with colliding low bits: long probe chains, many deletions inside them.
            BlockHash[] keys = new BlockHash[600];
            for (int i = 0; i < keys.length; i++) {
                keys[i] = new BlockHash(random.nextInt(4), (long) i << 20);
            }
            for (int op = 0; op < 60_000; op++) {
                BlockHash key = keys[random.nextInt(keys.length)];
                int rank = random.nextInt(worldSize);
                int choice = random.nextInt(100);
                if (choice < 50) {
                    int bits = 1 << random.nextInt(3);
                    int tokens = random.nextInt(1000);
                    table.store(key.high(), key.low(), rank, bits, tokens);
                    int[] entry = model.computeIfAbsent(key, k -> new int[worldSize + 1]);
                    entry[rank] |= bits;
                    entry[worldSize] = tokens;
                } else if (choice < 80) {
                    int bits = random.nextBoolean() ? 0xF : 1 << random.nextInt(3);
                    table.remove(key.high(), key.low(), rank, bits);
                    int[] entry = model.get(key);
                    if (entry != null) {
                        entry[rank] &= ~bits;
                        if (holders(entry, worldSize) == 0) {
                            model.remove(key);
                        }
                    }
                } else if (choice == 80) {
                    table.forgetRank(rank);
                    model.values().forEach(entry -> entry[rank] = 0);
                    model.values().removeIf(entry -> holders(entry, worldSize) == 0);
                }
                if (op % 997 == 0) {
                    check(table, model, keys, worldSize);
                }
            }
            check(table, model, keys, worldSize);
        }
    }

    private static long holders(int[] entry, int worldSize) {
        long bits = 0;
        for (int rank = 0; rank < worldSize; rank++) {
            if (entry[rank] != 0) {
                bits |= 1L << rank;
            }
        }
        return bits;
    }

    private static void check(BlockTable table, Map<BlockHash, int[]> model, BlockHash[] keys, int worldSize) {
        assertEquals(model.size(), table.size());
        for (BlockHash key : keys) {
            int[] entry = model.get(key);
            assertEquals(entry == null ? 0 : holders(entry, worldSize), table.holders(key.high(), key.low()), key.toString());
            for (int rank = 0; rank < worldSize; rank++) {
                assertEquals(entry == null ? 0 : entry[rank], table.tierBits(key, rank));
            }
            if (entry != null) {
                assertEquals(entry[worldSize], table.tokens(key.high(), key.low()));
            }
        }
        int[] visited = {0};
        table.forEach((high, low, holderBits, tokens, words, offset) -> {
            visited[0]++;
            assertEquals(holders(model.get(new BlockHash(high, low)), worldSize), holderBits);
        });
        assertEquals(model.size(), visited[0]);
    }
}
