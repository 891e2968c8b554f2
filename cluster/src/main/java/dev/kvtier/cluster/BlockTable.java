package dev.kvtier.cluster;

import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;

/**
 * The cluster's block index: for each block hash, which tiers of which ranks hold it, and how many tokens it covers.
 * Open addressing with linear probing over parallel primitive arrays (no object per block: 10^6 blocks cost ~40 MB
 * and a lookup is one or two cache lines), backward-shift deletion (no tombstones), doubled at 3/4 load.
 *
 * <p>Per slot: the hash ({@code hi}, {@code lo}), {@code holders} (bit {@code r} set iff rank {@code r} holds the block
 * in any tier; 0 marks an empty slot, so a block nobody holds is removed) and 4 bits of tiers per rank (bit
 * {@code t} = {@link Tier} ordinal {@code t}), 16 ranks per {@code long}. Not thread-safe: {@link ClusterState} guards it.
 */
final class BlockTable {
    private static final int RANKS_PER_TIER_WORD = 16;

    private final int tierWords;
    private int mask;
    private long[] hi;
    private long[] lo;
    private long[] holders;
    private long[] tiers;
    private int[] tokens;
    private int size;

    BlockTable(int worldSize, int expectedBlocks) {
        this.tierWords = (worldSize + RANKS_PER_TIER_WORD - 1) / RANKS_PER_TIER_WORD;
        int capacity = Integer.highestOneBit(Math.max(16, (int) Math.min(1 << 30, expectedBlocks * 4L / 3 + 1)) - 1) << 1;
        allocate(capacity);
    }

    private void allocate(int capacity) {
        mask = capacity - 1;
        hi = new long[capacity];
        lo = new long[capacity];
        holders = new long[capacity];
        tiers = new long[capacity * tierWords];
        tokens = new int[capacity];
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
        while (holders[slot] != 0) {
            if (hi[slot] == high && lo[slot] == low) {
                return slot;
            }
            slot = (slot + 1) & mask;
        }
        return -1 - slot; // where it would go
    }

    int size() {
        return size;
    }

    /** Ranks holding {@code block} in any tier, as bits; 0 when none. */
    long holders(long high, long low) {
        int slot = find(high, low);
        return slot < 0 ? 0 : holders[slot];
    }

    /** Tokens of {@code block}; 0 when nobody holds it. */
    int tokens(long high, long low) {
        int slot = find(high, low);
        return slot < 0 ? 0 : tokens[slot];
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
            holders[slot] &= ~(1L << rank);
        } else {
            holders[slot] |= 1L << rank;
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
            hi[slot] = high;
            lo[slot] = low;
            size++;
        }
        setTierBits(slot, rank, tierBitsAt(slot, rank) | tierBits);
        tokens[slot] = blockTokens;
    }

    /** {@code rank} no longer holds {@code block} in the tiers {@code tierBits}; all of them when {@code 0xF}. */
    void remove(long high, long low, int rank, int tierBits) {
        int slot = find(high, low);
        if (slot < 0) {
            return;
        }
        setTierBits(slot, rank, tierBitsAt(slot, rank) & ~tierBits);
        if (holders[slot] == 0) {
            deleteAt(slot);
        }
    }

    /** Forgets everything {@code rank} held. O(capacity). */
    void forgetRank(int rank) {
        long bit = 1L << rank;
        for (int slot = 0; slot <= mask; slot++) {
            // A backward shift may move a not-yet-visited entry into this slot: look at it again.
            while (holders[slot] != 0 && (holders[slot] & bit) != 0) {
                setTierBits(slot, rank, 0);
                if (holders[slot] != 0) {
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
        while (holders[next] != 0) {
            int home = spread(hi[next], lo[next]) & mask;
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
        hi[to] = hi[from];
        lo[to] = lo[from];
        holders[to] = holders[from];
        tokens[to] = tokens[from];
        System.arraycopy(tiers, from * tierWords, tiers, to * tierWords, tierWords);
    }

    private void clearSlot(int slot) {
        holders[slot] = 0;
        hi[slot] = 0;
        lo[slot] = 0;
        tokens[slot] = 0;
        for (int i = 0; i < tierWords; i++) {
            tiers[slot * tierWords + i] = 0;
        }
    }

    private void grow() {
        long[] oldHi = hi;
        long[] oldLo = lo;
        long[] oldHolders = holders;
        long[] oldTiers = tiers;
        int[] oldTokens = tokens;
        allocate((mask + 1) * 2);
        for (int slot = 0; slot < oldHolders.length; slot++) {
            if (oldHolders[slot] != 0) {
                int target = -1 - find(oldHi[slot], oldLo[slot]);
                hi[target] = oldHi[slot];
                lo[target] = oldLo[slot];
                holders[target] = oldHolders[slot];
                tokens[target] = oldTokens[slot];
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
            if (holders[slot] != 0) {
                visitor.visit(hi[slot], lo[slot], holders[slot], tokens[slot], tiers, slot * tierWords);
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
