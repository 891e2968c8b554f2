package dev.kvtier.store.policy;

/**
 * The steps shared by the store's open-addressing tables ({@code EntryTable}, and the simulations'
 * tables in {@link RetentionShadows}): a table is a power-of-two array of slots with each member's
 * 32-bit hash in a parallel {@code int[]}, probed linearly from the member's home slot, kept at most
 * half full, and deleted from by backward shift (no tombstones). Not thread-safe: the tables using
 * it decide their own safety.
 */
public final class OpenAddressing {
    private OpenAddressing() {
    }

    /**
     * The slot where a member with {@code hash} belongs in a table of {@code length} (a power of two)
     * slots: Fibonacci hashing (the top log2(length) bits of the hash times 2^32 / golden ratio).
     * Keys such as {@code "seg-1", "seg-2", ...} have consecutive String hashes, which masked low
     * bits would place in consecutive slots, building the long probe runs that linear probing must
     * then walk; the multiply scatters them.
     */
    public static int home(int hash, int length) {
        return (hash * 0x9E3779B9) >>> Integer.numberOfLeadingZeros(length - 1);
    }

    /** Puts {@code member} with {@code hash} in the first free slot of its probe run (the table has one). */
    public static <T> void place(T[] slots, int[] hashes, T member, int hash) {
        int mask = slots.length - 1;
        int i = home(hash, slots.length);
        while (slots[i] != null) {
            i = (i + 1) & mask;
        }
        slots[i] = member;
        hashes[i] = hash;
    }

    /** Places every member of the old arrays into the new, larger ones (empty, a power of two long). */
    public static <T> void rehash(T[] oldSlots, int[] oldHashes, T[] newSlots, int[] newHashes) {
        for (int i = 0; i < oldSlots.length; i++) {
            if (oldSlots[i] != null) {
                place(newSlots, newHashes, oldSlots[i], oldHashes[i]);
            }
        }
    }

    /**
     * Empties slot {@code hole}: later members of its probe run move into the hole when their home slot
     * does not lie (cyclically) after it, so every lookup still finds them without tombstones.
     */
    public static <T> void removeAt(T[] slots, int[] hashes, int hole) {
        int mask = slots.length - 1;
        for (int j = (hole + 1) & mask; slots[j] != null; j = (j + 1) & mask) {
            if (movesIntoHole(hole, j, home(hashes[j], slots.length))) {
                slots[hole] = slots[j];
                hashes[hole] = hashes[j];
                hole = j;
            }
        }
        slots[hole] = null;
        hashes[hole] = 0;
    }

    /**
     * {@link #place(Object[], int[], Object, int)} for a table of int members, 0 marking an empty slot (a table
     * that stores small ids instead of objects, so a lookup reads no member object).
     */
    public static void place(int[] slots, int[] hashes, int member, int hash) {
        int mask = slots.length - 1;
        int i = home(hash, slots.length);
        while (slots[i] != 0) {
            i = (i + 1) & mask;
        }
        slots[i] = member;
        hashes[i] = hash;
    }

    /** {@link #rehash(Object[], int[], Object[], int[])} for int members, 0 empty. */
    public static void rehash(int[] oldSlots, int[] oldHashes, int[] newSlots, int[] newHashes) {
        for (int i = 0; i < oldSlots.length; i++) {
            if (oldSlots[i] != 0) {
                place(newSlots, newHashes, oldSlots[i], oldHashes[i]);
            }
        }
    }

    /**
     * Whether the member in slot {@code j}, whose home slot is {@code home}, moves back into the emptied slot
     * {@code hole} (earlier in its probe run): yes unless its home lies cyclically after the hole, up to {@code j}
     * (then a lookup starting at its home would never pass the hole). One rule for both kinds of table.
     */
    private static boolean movesIntoHole(int hole, int j, int home) {
        boolean homeAfterHole = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        return !homeAfterHole;
    }

    /** {@link #removeAt(Object[], int[], int)} for int members, 0 empty. */
    public static void removeAt(int[] slots, int[] hashes, int hole) {
        int mask = slots.length - 1;
        for (int j = (hole + 1) & mask; slots[j] != 0; j = (j + 1) & mask) {
            if (movesIntoHole(hole, j, home(hashes[j], slots.length))) {
                slots[hole] = slots[j];
                hashes[hole] = hashes[j];
                hole = j;
            }
        }
        slots[hole] = 0;
        hashes[hole] = 0;
    }
}
