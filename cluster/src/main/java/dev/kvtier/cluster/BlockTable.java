package dev.kvtier.cluster;

import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;

/**
 * The cluster's block index: for each block hash, which tiers of which ranks hold it, and how many tokens it covers.
 * Open addressing with linear probing, backward-shift deletion (no tombstones), doubled at 3/4 load. No object per
 * block: 10^6 blocks cost ~70 MB.
 *
 * <p>Per slot, interleaved in one {@code long[]} so that a lookup touches one cache line (32 bytes per slot): the hash
 * ({@code high}, {@code low}), {@code holders} (bit {@code r} set iff rank {@code r} holds the block in any tier; 0 marks
 * an empty slot, so a block nobody holds is removed) and the token count. Apart, read only by updates: 4 bits of tiers
 * per rank (bit {@code t} = {@link Tier} ordinal {@code t}), 16 ranks per {@code long}. Not thread-safe: {@link ClusterState} guards it.
 */
final class BlockTable {
    private static final int RANKS_PER_TIER_WORD = 16;

    private final int tierWords;
    private static final int STRIDE = 4;
    private static final int HIGH = 0;
    private static final int LOW = 1;
    private static final int HOLDERS = 2;
    private static final int TOKENS = 3;

    private int mask;
    /** Slot {@code i} at {@code [STRIDE * i, STRIDE * i + STRIDE)}: high, low, holders, tokens. */
    private long[] slots;
    private long[] tiers;
    private int size;

    BlockTable(int worldSize, int expectedBlocks) {
        this.tierWords = (worldSize + RANKS_PER_TIER_WORD - 1) / RANKS_PER_TIER_WORD;
        int capacity = Integer.highestOneBit(Math.max(16, (int) Math.min(1 << 30, expectedBlocks * 4L / 3 + 1)) - 1) << 1;
        allocate(capacity);
    }

    private void allocate(int capacity) {
        mask = capacity - 1;
        slots = new long[capacity * STRIDE];
        tiers = new long[capacity * tierWords];
        size = 0;
    }

    /** Block hashes are SHA-256 output, but tests and benchmarks use counters: mix anyway (murmur3's fmix64). */
    private static int spread(long high, long low) {
        long h = low ^ (high * 0x9E3779B97F4A7C15L);
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return (int) h;
    }

    private int find(long high, long low) {
        int slot = spread(high, low) & mask;
        while (slots[slot * STRIDE + HOLDERS] != 0) {
            if (slots[slot * STRIDE + HIGH] == high && slots[slot * STRIDE + LOW] == low) {
                return slot;
            }
            slot = (slot + 1) & mask;
        }
        return -1 - slot; // where it would go
    }

    private long holdersAt(int slot) {
        return slots[slot * STRIDE + HOLDERS];
    }

    /** The slot of {@code block}, or a negative number when nobody holds it: for {@link #holdersAt}/{@link #tokensAt}. */
    int slotOf(long high, long low) {
        return find(high, low);
    }

    /** Holders at a slot {@link #slotOf} found (0 for a negative slot). */
    long holdersAtSlot(int slot) {
        return slot < 0 ? 0 : slots[slot * STRIDE + HOLDERS];
    }

    /** Tokens at a slot {@link #slotOf} found (0 for a negative slot). */
    int tokensAt(int slot) {
        return slot < 0 ? 0 : (int) slots[slot * STRIDE + TOKENS];
    }

    int size() {
        return size;
    }

    /** Ranks holding {@code block} in any tier, as bits; 0 when none. */
    long holders(long high, long low) {
        return holdersAtSlot(find(high, low));
    }

    /** Tokens of {@code block}; 0 when nobody holds it. */
    int tokens(long high, long low) {
        return tokensAt(find(high, low));
    }

    /** The tier bits of {@code rank} for {@code block}; 0 when it does not hold it. */
    int tierBits(BlockHash block, int rank) {
        int slot = find(block.high(), block.low());
        return slot < 0 ? 0 : tierBitsAt(slot, rank);
    }

    private int tierBitsAt(int slot, int rank) {
        long word = tiers[slot * tierWords + rank / RANKS_PER_TIER_WORD];
        return (int) (word >>> (4 * (rank % RANKS_PER_TIER_WORD))) & 0xF;
    }

    private void setTierBits(int slot, int rank, int bits) {
        int index = slot * tierWords + rank / RANKS_PER_TIER_WORD;
        int shift = 4 * (rank % RANKS_PER_TIER_WORD);
        tiers[index] = (tiers[index] & ~(0xFL << shift)) | ((long) bits << shift);
        if (bits == 0) {
            slots[slot * STRIDE + HOLDERS] &= ~(1L << rank);
        } else {
            slots[slot * STRIDE + HOLDERS] |= 1L << rank;
        }
    }

    /** {@code rank} holds {@code block} in the tiers {@code tierBits} (added to what it had). */
    void store(long high, long low, int rank, int tierBits, int blockTokens) {
        int slot = find(high, low);
        if (slot < 0) {
            if (size + 1 > (mask + 1) * 3L / 4) {
                grow();
                slot = find(high, low);
            }
            slot = -1 - slot;
            slots[slot * STRIDE + HIGH] = high;
            slots[slot * STRIDE + LOW] = low;
            size++;
        }
        setTierBits(slot, rank, tierBitsAt(slot, rank) | tierBits);
        slots[slot * STRIDE + TOKENS] = blockTokens;
    }

    /** {@code rank} no longer holds {@code block} in the tiers {@code tierBits}; all of them when {@code 0xF}. */
    void remove(long high, long low, int rank, int tierBits) {
        int slot = find(high, low);
        if (slot < 0) {
            return;
        }
        setTierBits(slot, rank, tierBitsAt(slot, rank) & ~tierBits);
        if (holdersAt(slot) == 0) {
            deleteAt(slot);
        }
    }

    /** Forgets everything {@code rank} held. O(capacity). */
    void forgetRank(int rank) {
        long bit = 1L << rank;
        for (int slot = 0; slot <= mask; slot++) {
            // A backward shift may move a not-yet-visited entry into this slot: look at it again.
            while (holdersAt(slot) != 0 && (holdersAt(slot) & bit) != 0) {
                setTierBits(slot, rank, 0);
                if (holdersAt(slot) != 0) {
                    break;
                }
                deleteAt(slot);
            }
        }
    }

    /** Backward-shift deletion: entries after {@code slot} in its cluster move up if their home allows it. */
    private void deleteAt(int slot) {
        int hole = slot;
        int next = (hole + 1) & mask;
        while (holdersAt(next) != 0) {
            int home = spread(slots[next * STRIDE + HIGH], slots[next * STRIDE + LOW]) & mask;
            // Move next into hole unless its home lies cyclically in (hole, next].
            boolean stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
            if (!stays) {
                moveSlot(next, hole);
                hole = next;
            }
            next = (next + 1) & mask;
        }
        clearSlot(hole);
        size--;
    }

    private void moveSlot(int from, int to) {
        System.arraycopy(slots, from * STRIDE, slots, to * STRIDE, STRIDE);
        System.arraycopy(tiers, from * tierWords, tiers, to * tierWords, tierWords);
    }

    private void clearSlot(int slot) {
        java.util.Arrays.fill(slots, slot * STRIDE, slot * STRIDE + STRIDE, 0L);
        for (int i = 0; i < tierWords; i++) {
            tiers[slot * tierWords + i] = 0;
        }
    }

    private void grow() {
        long[] oldSlots = slots;
        long[] oldTiers = tiers;
        allocate((mask + 1) * 2);
        for (int slot = 0; slot < oldSlots.length / STRIDE; slot++) {
            if (oldSlots[slot * STRIDE + HOLDERS] != 0) {
                int target = -1 - find(oldSlots[slot * STRIDE + HIGH], oldSlots[slot * STRIDE + LOW]);
                System.arraycopy(oldSlots, slot * STRIDE, slots, target * STRIDE, STRIDE);
                System.arraycopy(oldTiers, slot * tierWords, tiers, target * tierWords, tierWords);
                size++;
            }
        }
    }

    /** Visits every held block: its hash, holders, tokens and the tier words of the slot. */
    interface Visitor {
        void visit(long high, long low, long holderBits, int blockTokens, long[] tierWords, int tierOffset);
    }

    void forEach(Visitor visitor) {
        for (int slot = 0; slot <= mask; slot++) {
            int base = slot * STRIDE;
            if (slots[base + HOLDERS] != 0) {
                visitor.visit(slots[base + HIGH], slots[base + LOW], slots[base + HOLDERS], (int) slots[base + TOKENS],
                        tiers, slot * tierWords);
            }
        }
    }

    int tierWords() {
        return tierWords;
    }

    /** Tier bits of {@code rank} within the tier words at {@code offset} (as handed to a {@link Visitor}). */
    static int tierBitsIn(long[] words, int offset, int rank) {
        return (int) (words[offset + rank / RANKS_PER_TIER_WORD] >>> (4 * (rank % RANKS_PER_TIER_WORD))) & 0xF;
    }
}
