package dev.kvtier.store.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TierTransfer;
import dev.kvtier.store.TieredStore;
import dev.kvtier.store.TieredStorePropertyTest.Op;
import dev.kvtier.store.TieredStorePropertyTest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/**
 * {@link DemotionPolicy#lru2()} and {@link DemotionPolicy#arc()} against brute-force models of the same policies
 * (lists scanned and sorted on every query, no incremental structure): under random histories of registrations,
 * touches, moves, rollbacks and removals, every candidate list the store gives is exactly the model's. The models
 * follow the policies' Javadoc, written again from it with plain lists.
 */
class ClassicPolicyModelTest {

    @Property(tries = 400, edgeCases = EdgeCasesMode.NONE)
    void lru2NamesAsTheModel(@ForAll("operations") List<Op> ops,
                             @ForAll @LongRange(max = 1_000) long gpuBudget,
                             @ForAll @LongRange(max = 1_500) long cpuBudget) {
        replay(DemotionPolicy.lru2(), new Lru2Model(), ops, gpuBudget, cpuBudget);
    }

    @Property(tries = 400, edgeCases = EdgeCasesMode.NONE)
    void lru2NamesAsTheModelUnderManyTouches(@ForAll("touchHeavyOperations") List<Op> ops,
                                             @ForAll @LongRange(max = 1_000) long gpuBudget) {
        replay(DemotionPolicy.lru2(), new Lru2Model(), ops, gpuBudget, 1_500);
    }

    @Property(tries = 400, edgeCases = EdgeCasesMode.NONE)
    void arcNamesAsTheModel(@ForAll("operations") List<Op> ops,
                            @ForAll @LongRange(max = 1_000) long gpuBudget,
                            @ForAll @LongRange(max = 1_500) long cpuBudget) {
        replay(DemotionPolicy.arc(), new ArcModel(gpuBudget, cpuBudget), ops, gpuBudget, cpuBudget);
    }

    @Property(tries = 400, edgeCases = EdgeCasesMode.NONE)
    void arcNamesAsTheModelUnderManyTouches(@ForAll("touchHeavyOperations") List<Op> ops,
                                            @ForAll @LongRange(max = 1_000) long gpuBudget) {
        replay(DemotionPolicy.arc(), new ArcModel(gpuBudget, 1_500), ops, gpuBudget, 1_500);
    }

    /**
     * {@link FrequencyExpertPolicy}'s least-accessed-first naming (pinned on) against the seed's order policy
     * {@link DemotionPolicy#leastAccessedFirst()}, whose store index is the model here: on histories without rollbacks
     * (a rolled-back demotion re-enters the frequency order at its count's end, where the seed's index files it by its
     * older last use) every GPU candidate list is the seed's.
     */
    @Property(tries = 400, edgeCases = EdgeCasesMode.NONE)
    void pinnedLeastAccessedFirstNamesTheGpuTierAsTheSeedsOrder(@ForAll("touchHeavyOperations") List<Op> ops,
                                                                @ForAll @LongRange(min = 1, max = 1_000) long gpuBudget) {
        TieredStore expert = new TieredStore(gpuBudget, 1_500, FrequencyExpertPolicy.pinnedLeastAccessedFirst());
        TieredStore seed = new TieredStore(gpuBudget, 1_500, DemotionPolicy.leastAccessedFirst());
        for (Op op : ops) {
            for (TieredStore store : List.of(expert, seed)) {
                switch (op) {
                    case Op.Register r -> store.register(SegmentMeta.of("k" + r.key(),
                            PositionRange.of(r.start(), r.start() + r.length()), r.size()), r.tier());
                    case Op.Demote d -> store.demote("k" + d.key(), d.to());
                    case Op.Promote p -> store.promote("k" + p.key(), p.to());
                    case Op.Remove r -> store.remove("k" + r.key());
                    case Op.Touch t -> store.touch("k" + t.key());
                    case Op.Get g -> store.get("k" + g.key());
                    case Op.Candidates c -> { }
                    case Op.Rollback r -> { }
                }
            }
            if (op instanceof Op.Candidates c && c.tier() == Tier.GPU && c.needed() > 0) {
                assertEquals(seed.candidatesForDemotion(Tier.GPU, c.needed()), expert.candidatesForDemotion(Tier.GPU,
                        c.needed()), op.toString());
            }
            assertEquals(seed.candidatesForDemotion(Tier.GPU, Long.MAX_VALUE),
                    expert.candidatesForDemotion(Tier.GPU, Long.MAX_VALUE), "whole GPU tier after " + op);
        }
    }

    /**
     * The chooser: on traffic where a few popular segments come back between long runs of segments used once, the
     * LFU simulation beats the LRU one and the GPU tier names least accessed first (its whole order by access count);
     * where reuse is recent and short-lived it keeps the adaptive S3-FIFO's naming.
     */
    @Test
    void theGpuTierNamesLeastAccessedFirstWhereFrequencyWins() {
        TieredStore store = new TieredStore(100 * 10, 100_000, DemotionPolicy.adaptiveS3FifoLfu());
        int scanned = 0;
        for (int round = 0; round < 400; round++) {
            for (int hot = 0; hot < 40; hot++) {
                if (round % (1 + hot % 4) == 0) { // popular, some more than others
                    reference(store, "hot" + hot);
                }
            }
            for (int i = 0; i < 150; i++) {
                reference(store, "scan" + scanned++);
            }
        }
        List<Long> counts = store.candidatesForDemotion(Tier.GPU, Long.MAX_VALUE).stream()
                .map(key -> store.get(key).orElseThrow().accessCount()).toList();
        assertEquals(counts.stream().sorted().toList(), counts, "the whole GPU tier least accessed first");
        assertTrue(counts.get(counts.size() - 1) > 50, "the popular segments stay: " + counts);

        TieredStore recency = new TieredStore(100 * 10, 100_000, DemotionPolicy.adaptiveS3FifoLfu());
        TieredStore plain = new TieredStore(100 * 10, 100_000, DemotionPolicy.adaptiveS3Fifo());
        for (int i = 0; i < 60_000; i++) {
            // Each key is used twice, 50 references apart, then never again: recency is all there is to learn.
            String key = "r" + (i % 2 == 0 ? i / 2 : Math.max(0, i / 2 - 25));
            reference(recency, key);
            reference(plain, key);
        }
        assertEquals(plain.candidatesForDemotion(Tier.GPU, 300), recency.candidatesForDemotion(Tier.GPU, 300));
    }

    /** One reference as the trace players make it: a touch on GPU, else room made and the segment brought to GPU. */
    private static void reference(TieredStore store, String key) {
        Optional<SegmentMeta> found = store.get(key);
        if (found.isPresent() && found.get().tier() == Tier.GPU) {
            store.touch(key);
            return;
        }
        if (store.gpuFree() < 10) {
            for (String victim : store.candidatesForDemotion(Tier.GPU, 10)) {
                if (store.cpuFree() < 10) {
                    for (String cpuVictim : store.candidatesForDemotion(Tier.CPU, 10)) {
                        store.demote(cpuVictim, Tier.DISK);
                    }
                }
                store.demote(victim, Tier.CPU);
            }
        }
        if (found.isPresent()) {
            store.promote(key, Tier.GPU);
        } else {
            store.register(SegmentMeta.of(key, PositionRange.of(0, 1), 10), Tier.GPU);
        }
    }

    /** The textbook cases, by hand: a twice-used segment outlives a newer once-used one; ghosts move ARC's target. */
    @Test
    void textbookOrders() {
        TieredStore lru2 = new TieredStore(300, 0, DemotionPolicy.lru2());
        for (String key : List.of("a", "b", "c")) {
            lru2.register(SegmentMeta.of(key, PositionRange.of(0, 1), 100), Tier.GPU);
        }
        lru2.touch("a"); // a: two uses; b, c: one each, b the older
        assertEquals(List.of("b", "c", "a"), lru2.candidatesForDemotion(Tier.GPU, 300));
        lru2.touch("b"); // uses: a 1 and 4, b 2 and 5, c 3
        lru2.touch("c"); // c 3 and 6
        lru2.touch("a"); // a 4 and 7
        lru2.touch("a"); // a 7 and 8
        lru2.touch("b"); // b 5 and 9: LRU would name c, a, b; LRU-2 by the use before the last: c 3, b 5, a 7
        assertEquals(List.of("c", "b", "a"), lru2.candidatesForDemotion(Tier.GPU, 300));

        TieredStore arc = new TieredStore(200, 1_000, DemotionPolicy.arc());
        arc.register(SegmentMeta.of("x", PositionRange.of(0, 1), 100), Tier.GPU);
        arc.register(SegmentMeta.of("y", PositionRange.of(0, 1), 100), Tier.GPU);
        arc.touch("y"); // T1 [x], T2 [y], p 0: T1 goes first
        assertEquals(List.of("x", "y"), arc.candidatesForDemotion(Tier.GPU, 200));
        arc.demote("x", Tier.CPU).orElseThrow(); // x: a ghost in B1
        arc.promote("x", Tier.GPU).orElseThrow(); // a B1 hit: p rises to 100, x to T2
        arc.register(SegmentMeta.of("z", PositionRange.of(0, 1), 0), Tier.GPU); // T1 [z] of 0 bytes: not above p
        assertEquals(List.of("y", "x", "z"), arc.candidatesForDemotion(Tier.GPU, 201));
    }

    @Provide
    Arbitrary<List<Op>> operations() {
        return TieredStorePropertyTest.operations(7, 4, 3, 120);
    }

    @Provide
    Arbitrary<List<Op>> touchHeavyOperations() {
        return TieredStorePropertyTest.operations(9, 3, 12, 250);
    }

    /** A policy written naively: told every event the store accepted, asked for the candidates the store gives. */
    private interface PolicyModel {
        void registered(String key, long size, Tier tier);

        void used(String key, Tier tier);

        void demoted(String key, Tier from, Tier to);

        void promoted(String key, Tier from, Tier to);

        void rolledBack(String key, Tier from, Tier to);

        void removed(String key, Tier tier);

        List<String> candidates(Tier tier, long needed);
    }

    /** Plays {@code ops} against the store and the model, comparing every tier's candidates after every step. */
    private static void replay(DemotionPolicy policy, PolicyModel model, List<Op> ops, long gpuBudget, long cpuBudget) {
        TieredStore store = new TieredStore(gpuBudget, cpuBudget, policy);
        List<TierTransfer> transfers = new ArrayList<>();
        for (Op op : ops) {
            switch (op) {
                case Op.Register r -> {
                    SegmentMeta meta = SegmentMeta.of("k" + r.key(), PositionRange.of(r.start(), r.start() + r.length()),
                            r.size());
                    if (store.register(meta, r.tier())) {
                        model.registered(meta.key(), meta.sizeBytes(), r.tier());
                    }
                }
                case Op.Demote d -> store.demote("k" + d.key(), d.to()).ifPresent(t -> {
                    transfers.add(t);
                    model.demoted(t.key(), t.from(), t.to());
                });
                case Op.Promote p -> store.promote("k" + p.key(), p.to()).ifPresent(t -> {
                    transfers.add(t);
                    model.promoted(t.key(), t.from(), t.to());
                });
                case Op.Remove r -> store.remove("k" + r.key()).ifPresent(m -> model.removed(m.key(), m.tier()));
                case Op.Touch t -> {
                    Optional<SegmentMeta> before = store.get("k" + t.key());
                    if (store.touch("k" + t.key())) {
                        model.used("k" + t.key(), before.orElseThrow().tier());
                    }
                }
                case Op.Get g -> store.get("k" + g.key());
                case Op.Candidates c -> {
                    if (c.needed() > 0) {
                        assertEquals(model.candidates(c.tier(), c.needed()), store.candidatesForDemotion(c.tier(), c.needed()),
                                policy + " " + op);
                    }
                }
                case Op.Rollback r -> {
                    if (!transfers.isEmpty()) {
                        TierTransfer t = transfers.get(r.transferIndex() % transfers.size());
                        if (store.rollback(t)) {
                            model.rolledBack(t.key(), t.to(), t.from());
                        }
                    }
                }
            }
            for (Tier tier : Tier.values()) {
                assertEquals(model.candidates(tier, Long.MAX_VALUE), store.candidatesForDemotion(tier, Long.MAX_VALUE),
                        policy + " whole " + tier + " after " + op);
            }
        }
    }

    /** The first keys of {@code ordered} whose sizes reach {@code needed}. */
    private static List<String> upTo(List<String> ordered, Map<String, Long> sizes, long needed) {
        List<String> out = new ArrayList<>();
        long left = needed;
        for (String key : ordered) {
            if (left <= 0) {
                break;
            }
            out.add(key);
            left -= sizes.get(key);
        }
        return out;
    }

    /** LRU-2 written plainly: per key its last two uses on a counter, per tier a set sorted on every query. */
    private static final class Lru2Model implements PolicyModel {
        private long clock;
        private final Map<String, long[]> history = new HashMap<>(); // key -> {second-to-last or MIN, last}
        private final Map<String, Tier> tierOf = new HashMap<>();
        private final Map<String, Long> sizes = new HashMap<>();
        private final LinkedHashMap<String, Long> removed = new LinkedHashMap<>();

        @Override
        public void registered(String key, long size, Tier tier) {
            Long remembered = removed.remove(key);
            history.put(key, new long[] {remembered == null ? Long.MIN_VALUE : remembered, ++clock});
            tierOf.put(key, tier);
            sizes.put(key, size);
        }

        @Override
        public void used(String key, Tier tier) {
            long[] h = history.get(key);
            h[0] = h[1];
            h[1] = ++clock;
        }

        @Override
        public void demoted(String key, Tier from, Tier to) {
            tierOf.put(key, to);
        }

        @Override
        public void promoted(String key, Tier from, Tier to) {
            used(key, from);
            tierOf.put(key, to);
        }

        @Override
        public void rolledBack(String key, Tier from, Tier to) {
            tierOf.put(key, to);
        }

        @Override
        public void removed(String key, Tier tier) {
            removed.put(key, history.remove(key)[1]);
            tierOf.remove(key);
            sizes.remove(key);
            while (removed.size() > Math.max(LruKPolicy.MIN_HISTORY, tierOf.size())) {
                removed.remove(removed.keySet().iterator().next());
            }
        }

        @Override
        public List<String> candidates(Tier tier, long needed) {
            List<String> onTier = new ArrayList<>(tierOf.keySet().stream().filter(k -> tierOf.get(k) == tier).toList());
            onTier.sort(Comparator.<String>comparingLong(k -> history.get(k)[0]).thenComparingLong(k -> history.get(k)[1]));
            return upTo(onTier, sizes, needed);
        }
    }

    /** ARC written plainly: per tier four array lists, oldest first, and the target p. */
    private static final class ArcModel implements PolicyModel {
        private final Map<Tier, List<String>> t1 = new HashMap<>();
        private final Map<Tier, List<String>> t2 = new HashMap<>();
        private final Map<Tier, List<String>> b1 = new HashMap<>();
        private final Map<Tier, List<String>> b2 = new HashMap<>();
        private final Map<Tier, Long> p = new HashMap<>();
        private final Map<Tier, Long> budget = new HashMap<>();
        private final Map<String, Long> sizes = new HashMap<>();

        ArcModel(long gpuBudget, long cpuBudget) {
            for (Tier tier : Tier.values()) {
                t1.put(tier, new ArrayList<>());
                t2.put(tier, new ArrayList<>());
                b1.put(tier, new ArrayList<>());
                b2.put(tier, new ArrayList<>());
                p.put(tier, 0L);
            }
            budget.put(Tier.GPU, gpuBudget);
            budget.put(Tier.CPU, cpuBudget);
        }

        private long bytes(List<String> keys) {
            return keys.stream().mapToLong(sizes::get).sum();
        }

        private void arrive(String key, Tier tier) {
            long size = sizes.get(key);
            long capacity = budget.containsKey(tier) ? budget.get(tier) : bytes(t1.get(tier)) + bytes(t2.get(tier));
            List<String> g1 = b1.get(tier);
            List<String> g2 = b2.get(tier);
            if (g1.contains(key)) {
                long ratio = Math.max(1, g2.size() / g1.size());
                g1.remove(key);
                p.put(tier, Math.min(capacity, p.get(tier) + ratio * size));
                t2.get(tier).add(key);
            } else if (g2.contains(key)) {
                long ratio = Math.max(1, g1.size() / g2.size());
                g2.remove(key);
                p.put(tier, Math.max(0, p.get(tier) - ratio * size));
                t2.get(tier).add(key);
            } else {
                t1.get(tier).add(key);
            }
        }

        private void leave(String key, Tier tier, boolean evicted) {
            int c = t1.get(tier).size() + t2.get(tier).size();
            boolean wasT1 = t1.get(tier).remove(key);
            if (!wasT1 && !t2.get(tier).remove(key)) {
                throw new AssertionError(key + " not on " + tier);
            }
            if (!evicted) {
                return;
            }
            (wasT1 ? b1 : b2).get(tier).add(key);
            List<String> g1 = b1.get(tier);
            List<String> g2 = b2.get(tier);
            while (!g1.isEmpty() && t1.get(tier).size() + g1.size() > c) {
                g1.remove(0);
            }
            while (t1.get(tier).size() + t2.get(tier).size() + g1.size() + g2.size() > 2 * c) {
                (g2.isEmpty() ? g1 : g2).remove(0);
            }
        }

        @Override
        public void registered(String key, long size, Tier tier) {
            sizes.put(key, size);
            arrive(key, tier);
        }

        @Override
        public void used(String key, Tier tier) {
            if (!t1.get(tier).remove(key)) {
                t2.get(tier).remove(key);
            }
            t2.get(tier).add(key);
        }

        @Override
        public void demoted(String key, Tier from, Tier to) {
            leave(key, from, true);
            arrive(key, to);
        }

        @Override
        public void promoted(String key, Tier from, Tier to) {
            leave(key, from, false);
            arrive(key, to);
        }

        @Override
        public void rolledBack(String key, Tier from, Tier to) {
            leave(key, from, false);
            b1.get(to).remove(key);
            b2.get(to).remove(key);
            t1.get(to).add(key);
        }

        @Override
        public void removed(String key, Tier tier) {
            leave(key, tier, false);
            sizes.remove(key);
        }

        @Override
        public List<String> candidates(Tier tier, long needed) {
            // ARC's replacement taken step by step on copies: T1's oldest while T1 is above p (or T2 is empty).
            List<String> a = new ArrayList<>(t1.get(tier));
            List<String> b = new ArrayList<>(t2.get(tier));
            List<String> order = new ArrayList<>();
            while (!a.isEmpty() || !b.isEmpty()) {
                if (!a.isEmpty() && (bytes(a) > p.get(tier) || b.isEmpty())) {
                    order.add(a.remove(0));
                } else {
                    order.add(b.remove(0));
                }
            }
            return upTo(order, sizes, needed);
        }
    }
}
