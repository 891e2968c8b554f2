package dev.kvtier.store;

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
}
