package dev.kvtier.store.policy;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The S3-FIFO family's trackers ({@link DemotionPolicy#s3Fifo()}, {@link DemotionPolicy#chainAwareS3Fifo()},
 * {@link DemotionPolicy#adaptiveS3Fifo()} as it chooses and with its retention pinned on) under random histories
 * with {@link TieredStore#hold holds}: a held segment is named only after every segment of its tier that is not held
 * (the tracker contract's "named last"), a whole-tier query names exactly the tier's segments, and a hold ends when
 * its segment leaves the tier. Histories are drawn from a seed: registrations along chains and alone, touches,
 * demotions, promotions, removals, holds, releases and candidate queries of random sizes.
 */
class HeldSegmentsPropertyTest {
    private static final long SIZE = 10;

    @Property(tries = 200, edgeCases = EdgeCasesMode.NONE)
    void heldSegmentsAreNamedAfterEveryOtherSegmentOfTheirTier(@ForAll long seed) {
        for (DemotionPolicy policy : List.of(DemotionPolicy.s3Fifo(), DemotionPolicy.chainAwareS3Fifo(),
                DemotionPolicy.adaptiveS3Fifo(), S3FifoPolicy.pinnedRetention(1), S3FifoPolicy.pinnedRetention(3),
                DemotionPolicy.adaptiveContinuationS3Fifo(), S3FifoPolicy.pinnedContinuation(),
                DemotionPolicy.adaptiveS3FifoLfu(), FrequencyExpertPolicy.pinnedLeastAccessedFirst())) {
            play(policy, new Random(seed));
        }
    }

    private static void play(DemotionPolicy policy, Random random) {
        TieredStore store = new TieredStore(12 * SIZE, 12 * SIZE, policy);
        Map<String, Tier> tierOf = new HashMap<>();
        Set<String> held = new HashSet<>();
        int keys = 24;
        for (int step = 0; step < 400; step++) {
            String key = "k" + random.nextInt(keys);
            Tier tier = Tier.values()[random.nextInt(3)];
            String what = policy + " step " + step;
            switch (random.nextInt(9)) {
                case 0, 1 -> {
                    long start = random.nextBoolean() ? 0 : random.nextInt(4);
                    if (store.register(SegmentMeta.of(key, PositionRange.of(start, start + 1), SIZE), tier)) {
                        tierOf.put(key, tier);
                    }
                }
                case 2 -> store.touch(key);
                case 3 -> store.demote(key, tier).ifPresent(t -> {
                    tierOf.put(key, t.to());
                    held.remove(key);
                });
                case 4 -> store.promote(key, tier).ifPresent(t -> {
                    tierOf.put(key, t.to());
                    held.remove(key);
                });
                case 5 -> {
                    if (random.nextInt(4) == 0 && store.remove(key).isPresent()) {
                        tierOf.remove(key);
                        held.remove(key);
                    }
                }
                case 6 -> {
                    if (store.hold(key)) {
                        held.add(key);
                    }
                }
                case 7 -> {
                    if (store.release(key)) {
                        held.remove(key);
                    }
                }
                default -> check(store, tier, (1 + random.nextInt(14)) * SIZE, tierOf, held, what);
            }
        }
        for (Tier tier : Tier.values()) {
            check(store, tier, Long.MAX_VALUE, tierOf, held, policy + " at the end");
        }
    }

    private static void check(TieredStore store, Tier tier, long needed, Map<String, Tier> tierOf, Set<String> held,
                              String what) {
        List<String> onTier = new ArrayList<>();
        tierOf.forEach((key, t) -> {
            if (t == tier) {
                onTier.add(key);
            }
        });
        List<String> named = store.candidatesForDemotion(tier, needed);
        String context = what + ": " + tier + " asked " + needed + " named " + named + ", held " + held;
        assertTrue(onTier.containsAll(named), context);
        assertEquals(named.size(), new HashSet<>(named).size(), context);
        long free = onTier.stream().filter(k -> !held.contains(k)).count();
        for (int i = 0; i < named.size(); i++) {
            if (held.contains(named.get(i))) {
                assertTrue(i >= free, context + ": a held segment named before all " + free + " free ones");
            }
        }
        if (needed >= onTier.size() * SIZE) {
            assertEquals(new HashSet<>(onTier), new HashSet<>(named), context + ": not every segment of the tier named");
        } else {
            assertEquals(needed / SIZE, named.size(), context);
        }
    }
}
