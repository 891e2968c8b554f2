package dev.kvtier.store.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class GhostKeysTest {

    @Test
    void aGhostIsFoundOnceRightAfterItsEviction() {
        GhostKeys ghosts = new GhostKeys();
        ghosts.capacity(100);
        ghosts.add(42);
        assertTrue(ghosts.remove(42));
        assertFalse(ghosts.remove(42), "a ghost is consumed by its return");
        assertFalse(ghosts.remove(43), "never evicted");
    }

    @Test
    void aGhostIsForgottenAfterCapacityNewerEvictions() {
        GhostKeys ghosts = new GhostKeys();
        ghosts.capacity(10);
        ghosts.add(7);
        for (int i = 0; i < 9; i++) {
            ghosts.add(1_000 + i);
        }
        assertTrue(ghosts.remove(7), "9 newer evictions: still among the last 10");
        ghosts.add(7);
        for (int i = 0; i < 10; i++) {
            ghosts.add(2_000 + i);
        }
        assertFalse(ghosts.remove(7), "10 newer evictions: forgotten");
    }

    @Test
    void nearlyAllOfTheLastCapacityEvictionsAreRemembered() {
        SplittableRandom random = new SplittableRandom(1);
        GhostKeys ghosts = new GhostKeys();
        int capacity = 10_000;
        int[] hashes = new int[3 * capacity];
        for (int i = 0; i < hashes.length; i++) {
            hashes[i] = random.nextInt();
            ghosts.capacity(Math.min(capacity, i + 1)); // grows as a tier fills, as S3-FIFO sets it
            ghosts.add(hashes[i]);
        }
        int remembered = 0;
        for (int i = hashes.length - capacity; i < hashes.length; i++) {
            remembered += ghosts.remove(hashes[i]) ? 1 : 0;
        }
        int older = 0;
        for (int i = 0; i < hashes.length - capacity; i++) {
            older += ghosts.remove(hashes[i]) ? 1 : 0;
        }
        assertTrue(remembered >= 0.95 * capacity, "remembered " + remembered + " of the last " + capacity);
        assertTrue(older == 0, older + " older evictions still counted as ghosts");
    }

    /**
     * The table packs each slot's hash and stamp into one long (one cache line per bucket); it must answer exactly as
     * the two parallel int arrays it replaced, {@link TwoArrayGhosts} below, whose placement and forgetting the
     * policies' measured hit rates rest on: random evictions, returns and capacity changes (growth included), every
     * answer compared.
     */
    @Test
    void answersExactlyAsTheTableOfTwoArraysItReplaced() {
        SplittableRandom random = new SplittableRandom(11);
        GhostKeys ghosts = new GhostKeys();
        TwoArrayGhosts reference = new TwoArrayGhosts();
        int capacity = 64;
        for (int step = 0; step < 400_000; step++) {
            int hash = random.nextInt(3_000) * 0x61C88647; // few keys: returns, repeats and bucket collisions
            int action = random.nextInt(100);
            if (action < 2) {
                capacity = Math.max(1, capacity + random.nextInt(-40, 200)); // shrinks too, and grows the table
                ghosts.capacity(capacity);
                reference.capacity(capacity);
            } else if (action < 55) {
                ghosts.add(hash);
                reference.add(hash);
            } else {
                assertEquals(reference.remove(hash), ghosts.remove(hash), "step " + step + ", hash " + hash);
            }
        }
    }

    /** GhostKeys as it was before hash and stamp shared one long (two int arrays), the reference for the test above. */
    private static final class TwoArrayGhosts {
        private int[] hashes = new int[64];
        private int[] stamps = new int[64];
        private int evictions;
        private int capacity = 32;

        void capacity(int ghosts) {
            capacity = Math.max(1, ghosts);
            if (2L * capacity > hashes.length && hashes.length < 1 << 30) {
                int[] oldHashes = hashes;
                int[] oldStamps = stamps;
                int length = Integer.highestOneBit((int) Math.min(1 << 29, 2L * capacity - 1)) << 1;
                hashes = new int[length];
                stamps = new int[length];
                for (int i = 0; i < oldStamps.length; i++) {
                    if (isLive(oldStamps[i])) {
                        place(oldHashes[i], oldStamps[i]);
                    }
                }
            }
        }

        void add(int hash) {
            int stamp = ++evictions;
            if (stamp == 0) {
                stamp = ++evictions;
            }
            place(hash, stamp);
        }

        boolean remove(int hash) {
            int bucket = bucket(hash);
            for (int i = bucket; i < bucket + 2; i++) {
                if (hashes[i] == hash && isLive(stamps[i])) {
                    stamps[i] = 0;
                    return true;
                }
            }
            return false;
        }

        private void place(int hash, int stamp) {
            int bucket = bucket(hash);
            int slot = hashes[bucket + 1] == hash ? bucket + 1 : bucket;
            if (hashes[slot] != hash && isLive(stamps[slot])) {
                int other = slot ^ 1;
                if (!isLive(stamps[other]) || age(stamps[other]) > age(stamps[slot])) {
                    slot = other;
                }
            }
            if (hashes[slot] == hash || !isLive(stamps[slot]) || age(stamps[slot]) >= age(stamp)) {
                hashes[slot] = hash;
                stamps[slot] = stamp;
            }
        }

        private long age(int stamp) {
            return Integer.toUnsignedLong(evictions - stamp);
        }

        private boolean isLive(int stamp) {
            return stamp != 0 && Integer.compareUnsigned(evictions - stamp, capacity) < 0;
        }

        private int bucket(int hash) {
            return (hash * 0x9E3779B9 >>> 1) & (hashes.length - 2);
        }
    }
}
