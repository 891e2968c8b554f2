package dev.kvtier.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.LongRange;

/**
 * Random operation sequences against a naive reference model (a map plus a full sort per
 * candidates query, the seed's algorithm with the agreed tie-break). Every answer must match the
 * model's, and after every step the invariants hold and each tier's whole demotion order equals the
 * model's sorted order.
 */
public class TieredStorePropertyTest {

    /** One random operation; key and transfer choices are indices so shrinking stays meaningful. */
    public sealed interface Op {
        record Register(int key, long start, long length, long size, Tier tier) implements Op {}
        record Demote(int key, Tier to) implements Op {}
        record Promote(int key, Tier to) implements Op {}
        record Remove(int key) implements Op {}
        record Touch(int key) implements Op {}
        record Get(int key) implements Op {}
        record Candidates(Tier tier, long needed) implements Op {}
        /** Rolls back one of the transfers returned so far (often stale, so often refused). */
        record Rollback(int transferIndex) implements Op {}
    }

    /** The reference: obviously correct, slow, written from the seed and the agreed rules. */
    public static final class Model {
        public record Seg(SegmentMeta meta, long lastUse, TierTransfer lastMove) {}

        final long gpuBudget;
        final long cpuBudget;
        final boolean lru;
        public final LinkedHashMap<String, Seg> segs = new LinkedHashMap<>();
        long clock;

        public Model(long gpuBudget, long cpuBudget, boolean lru) {
            this.gpuBudget = gpuBudget;
            this.cpuBudget = cpuBudget;
            this.lru = lru;
        }

        public long used(Tier tier) {
            long sum = 0;
            for (Seg s : segs.values()) {
                if (s.meta.tier() == tier) {
                    sum += s.meta.sizeBytes();
                }
            }
            return sum;
        }

        boolean fits(Tier tier, long size) {
            long budget = switch (tier) {
                case GPU -> gpuBudget;
                case CPU -> cpuBudget;
                case DISK -> Long.MAX_VALUE;
            };
            return size <= budget - used(tier);
        }

        public boolean register(SegmentMeta meta, Tier tier) {
            if (segs.containsKey(meta.key()) || !fits(tier, meta.sizeBytes())) {
                return false;
            }
            segs.put(meta.key(), new Seg(meta.with(tier, meta.accessCount()), ++clock, null));
            return true;
        }

        public Optional<TierTransfer> move(String key, Tier to, boolean promote) {
            Seg s = segs.get(key);
            if (s == null) {
                return Optional.empty();
            }
            Tier from = s.meta.tier();
            boolean rightDirection = promote ? to.isFasterThan(from) : from.isFasterThan(to);
            if (!rightDirection || !fits(to, s.meta.sizeBytes())) {
                return Optional.empty();
            }
            TierTransfer t = new TierTransfer(key, from, to, s.meta.sizeBytes(), s.meta.positions());
            long count = s.meta.accessCount() + (promote ? 1 : 0);
            long lastUse = promote ? ++clock : s.lastUse;
            segs.put(key, new Seg(s.meta.with(to, count), lastUse, t));
            return Optional.of(t);
        }

        public boolean rollback(TierTransfer t) {
            Seg s = segs.get(t.key());
            if (s == null || !t.equals(s.lastMove) || !fits(t.from(), s.meta.sizeBytes())) {
                return false;
            }
            long count = s.meta.accessCount();
            if (t.to().isFasterThan(t.from()) && count > 0) {
                count--;
            }
            segs.put(t.key(), new Seg(s.meta.with(t.from(), count), s.lastUse, null));
            return true;
        }

        public Optional<SegmentMeta> remove(String key) {
            Seg s = segs.remove(key);
            return s == null ? Optional.empty() : Optional.of(s.meta);
        }

        public boolean touch(String key) {
            Seg s = segs.get(key);
            if (s == null) {
                return false;
            }
            segs.put(key, new Seg(s.meta.with(s.meta.tier(), s.meta.accessCount() + 1), ++clock, s.lastMove));
            return true;
        }

        public List<String> candidates(Tier tier, long needed) {
            List<Seg> onTier = new ArrayList<>();
            for (Seg s : segs.values()) {
                if (s.meta.tier() == tier) {
                    onTier.add(s);
                }
            }
            Comparator<Seg> byRecency = Comparator.comparingLong(Seg::lastUse);
            onTier.sort(lru ? byRecency
                    : Comparator.<Seg>comparingLong(s -> s.meta.accessCount()).thenComparing(byRecency));
            // The seed's loop as written (sizes here are small, so freed cannot overflow).
            List<String> keys = new ArrayList<>();
            long freed = 0;
            for (Seg s : onTier) {
                if (freed >= needed) {
                    break;
                }
                keys.add(s.meta.key());
                freed += s.meta.sizeBytes();
            }
            return keys;
        }

        public List<SegmentMeta> snapshot() {
            return segs.values().stream().map(Seg::meta).toList();
        }
    }

    @Property(tries = 400, edgeCases = EdgeCasesMode.NONE)
    void leastAccessedFirstMatchesTheModel(@ForAll("operations") List<Op> ops,
                                           @ForAll @LongRange(max = 1_000) long gpuBudget,
                                           @ForAll @LongRange(max = 1_500) long cpuBudget) {
        run(ops, gpuBudget, cpuBudget, false);
    }

    @Property(tries = 200, edgeCases = EdgeCasesMode.NONE)
    void leastRecentlyUsedMatchesTheModel(@ForAll("operations") List<Op> ops,
                                          @ForAll @LongRange(max = 1_000) long gpuBudget,
                                          @ForAll @LongRange(max = 1_500) long cpuBudget) {
        run(ops, gpuBudget, cpuBudget, true);
    }

    /** The default order through a policy the store does not recognise, so the tree index serves it. */
    @Property(tries = 200, edgeCases = EdgeCasesMode.NONE)
    void customPolicyWithTheDefaultOrderMatchesTheModel(@ForAll("operations") List<Op> ops,
                                                         @ForAll @LongRange(max = 1_000) long gpuBudget,
                                                         @ForAll @LongRange(max = 1_500) long cpuBudget) {
        run(ops, gpuBudget, cpuBudget, false, sameOrderAs(DemotionPolicy.leastAccessedFirst()));
    }

    /** Plain LRU through the tree index. */
    @Property(tries = 100, edgeCases = EdgeCasesMode.NONE)
    void customPolicyWithLruOrderMatchesTheModel(@ForAll("operations") List<Op> ops,
                                                 @ForAll @LongRange(max = 1_000) long gpuBudget,
                                                 @ForAll @LongRange(max = 1_500) long cpuBudget) {
        run(ops, gpuBudget, cpuBudget, true, sameOrderAs(DemotionPolicy.leastRecentlyUsed()));
    }

    private static DemotionPolicy sameOrderAs(DemotionPolicy builtIn) {
        return new DemotionPolicy() {
            @Override
            public String name() {
                return "custom " + builtIn.name();
            }

            @Override
            public Comparator<Usage> demotionOrder() {
                return builtIn.demotionOrder();
            }
        };
    }

    private static void run(List<Op> ops, long gpuBudget, long cpuBudget, boolean lru) {
        run(ops, gpuBudget, cpuBudget, lru,
                lru ? DemotionPolicy.leastRecentlyUsed() : DemotionPolicy.leastAccessedFirst());
    }

    private static void run(List<Op> ops, long gpuBudget, long cpuBudget, boolean lru, DemotionPolicy policy) {
        run(ops, gpuBudget, cpuBudget, lru, policy, true);
    }

    private static void run(List<Op> ops, long gpuBudget, long cpuBudget, boolean lru, DemotionPolicy policy,
                            boolean wholeOrderEveryStep) {
        run(ops, new TieredStore(gpuBudget, cpuBudget, policy), new Model(gpuBudget, cpuBudget, lru),
                wholeOrderEveryStep);
    }

    private static void run(List<Op> ops, TieredStore store, Model model, boolean wholeOrderEveryStep) {
        Map<String, PositionRange> registeredPositions = new HashMap<>();
        List<TierTransfer> transfers = new ArrayList<>();
        // The latest handle issued per key (stale once that registration is removed): every other step goes
        // through it instead of the key, and must get the model's answer for the key all the same.
        Map<String, SegmentHandle> handles = new HashMap<>();
        int step = 0;
        for (Op op : ops) {
            boolean viaHandle = (step++ & 1) == 1;
            switch (op) {
                case Op.Register r -> {
                    SegmentMeta meta = SegmentMeta.of(key(r.key()), PositionRange.of(r.start(), r.start() + r.length()), r.size());
                    boolean expected = model.register(meta, r.tier());
                    if (viaHandle) {
                        SegmentHandle handle = store.registerHandle(meta, r.tier());
                        assertEquals(expected, handle != null, op.toString());
                        if (handle != null) {
                            handles.put(meta.key(), handle);
                        }
                    } else {
                        assertEquals(expected, store.register(meta, r.tier()), op.toString());
                        if (expected) {
                            handles.put(meta.key(), store.handle(meta.key()));
                        }
                    }
                    if (expected) {
                        registeredPositions.put(meta.key(), meta.positions());
                    }
                }
                case Op.Demote d -> {
                    Optional<TierTransfer> expected = model.move(key(d.key()), d.to(), false);
                    SegmentHandle handle = viaHandle ? handles.get(key(d.key())) : null;
                    assertEquals(expected, handle != null ? store.demote(handle, d.to()) : store.demote(key(d.key()), d.to()),
                            op.toString());
                    expected.ifPresent(transfers::add);
                }
                case Op.Promote p -> {
                    Optional<TierTransfer> expected = model.move(key(p.key()), p.to(), true);
                    SegmentHandle handle = viaHandle ? handles.get(key(p.key())) : null;
                    assertEquals(expected, handle != null ? store.promote(handle, p.to()) : store.promote(key(p.key()), p.to()),
                            op.toString());
                    expected.ifPresent(transfers::add);
                }
                case Op.Remove r -> {
                    SegmentHandle handle = viaHandle ? handles.get(key(r.key())) : null;
                    Optional<SegmentMeta> expected = model.remove(key(r.key()));
                    if ((step & 2) == 2) { // every other removal discards: the same change, answering only whether
                        assertEquals(expected.isPresent(), handle != null ? store.discard(handle) : store.discard(key(r.key())),
                                op.toString());
                    } else {
                        assertEquals(expected, handle != null ? store.remove(handle) : store.remove(key(r.key())), op.toString());
                    }
                }
                case Op.Touch t -> {
                    SegmentHandle handle = viaHandle ? handles.get(key(t.key())) : null;
                    assertEquals(model.touch(key(t.key())), handle != null ? store.touch(handle) : store.touch(key(t.key())),
                            op.toString());
                }
                case Op.Get g -> {
                    SegmentHandle handle = viaHandle ? handles.get(key(g.key())) : null;
                    Optional<SegmentMeta> expected = Optional.ofNullable(model.segs.get(key(g.key()))).map(Model.Seg::meta);
                    assertEquals(expected, handle != null ? store.get(handle) : store.get(key(g.key())), op.toString());
                    if (handle != null) {
                        assertEquals(expected.map(SegmentMeta::tier).orElse(null), store.tierOf(handle), op.toString());
                    }
                }
                case Op.Candidates c -> assertEquals(model.candidates(c.tier(), c.needed()),
                        store.candidatesForDemotion(c.tier(), c.needed()), op.toString());
                case Op.Rollback r -> {
                    if (!transfers.isEmpty()) {
                        TierTransfer t = transfers.get(r.transferIndex() % transfers.size());
                        assertEquals(model.rollback(t), store.rollback(t), op + " of " + t);
                    }
                }
            }
            checkInvariants(store, model, registeredPositions, wholeOrderEveryStep);
        }
        checkInvariants(store, model, registeredPositions, true);
    }

    private static void checkInvariants(TieredStore store, Model model,
                                        Map<String, PositionRange> registeredPositions,
                                        boolean wholeOrder) {
        List<SegmentMeta> all = store.segments();
        assertEquals(model.snapshot(), all);
        assertEquals(all.size(), store.numSegments());
        assertEquals(model.used(Tier.GPU), store.gpuUsed());
        assertEquals(model.used(Tier.CPU), store.cpuUsed());
        for (Tier tier : Tier.values()) {
            assertEquals(all.stream().filter(meta -> meta.tier() == tier).count(), store.segmentsOn(tier), tier.name());
        }
        assertEquals(model.used(Tier.DISK), store.diskUsed());
        assertTrue(store.gpuUsed() <= store.gpuBudget());
        assertTrue(store.cpuUsed() <= store.cpuBudget());
        assertEquals(store.gpuBudget() - store.gpuUsed(), store.gpuFree());
        assertEquals(store.cpuBudget() - store.cpuUsed(), store.cpuFree());
        for (SegmentMeta meta : all) {
            assertEquals(registeredPositions.get(meta.key()), meta.positions(), "positions of " + meta.key());
        }
        for (Tier tier : wholeOrder ? Tier.values() : new Tier[0]) {
            assertEquals(model.candidates(tier, Long.MAX_VALUE), store.candidatesForDemotion(tier, Long.MAX_VALUE),
                    "whole demotion order of " + tier);
        }
    }

    private static String key(int index) {
        return "k" + index;
    }

    /**
     * Few keys, many touches and promotions: counts drift apart and leave runs of emptied buckets,
     * so the bucket index's neighbour look-ups, lazy frees and sweeps are all exercised.
     */
    @Property(tries = 300, edgeCases = EdgeCasesMode.NONE)
    void touchHeavyHistoriesMatchTheModel(@ForAll("touchHeavyOperations") List<Op> ops,
                                          @ForAll @LongRange(max = 1_000) long gpuBudget) {
        // Reading the whole order after every step would free emptied buckets each time; read it
        // only when an op asks for candidates and at the end, so empty buckets pile up and get swept.
        run(ops, new TieredStore(gpuBudget, 1_500, DemotionPolicy.leastAccessedFirst(), TINY_EMPTY_BUCKET_SLACK),
                new Model(gpuBudget, 1_500, false), false);
    }

    /** Small enough that a short history sweeps emptied buckets (the default is far larger). */
    private static final int TINY_EMPTY_BUCKET_SLACK = 2;

    @Provide
    Arbitrary<List<Op>> operations() {
        return operations(7, 4, 3, 80);
    }

    @Provide
    Arbitrary<List<Op>> touchHeavyOperations() {
        return operations(3, 1, 12, 200);
    }

    /** Random histories; also used by {@link TrackerPolicyPropertyTest}. */
    public static Arbitrary<List<Op>> operations(int maxKey, int registerWeight, int touchWeight, int maxOps) {
        Arbitrary<Integer> keys = Arbitraries.integers().between(0, maxKey);
        Arbitrary<Tier> tiers = Arbitraries.of(Tier.class);
        Arbitrary<Op> register = Combinators.combine(keys, Arbitraries.longs().between(0, 1_000),
                        Arbitraries.longs().between(0, 64), Arbitraries.longs().between(0, 400), tiers)
                .as(Op.Register::new);
        Arbitrary<Op> demote = Combinators.combine(keys, tiers).as(Op.Demote::new);
        Arbitrary<Op> promote = Combinators.combine(keys, tiers).as(Op.Promote::new);
        Arbitrary<Op> remove = keys.map(Op.Remove::new);
        Arbitrary<Op> touch = keys.map(Op.Touch::new);
        Arbitrary<Op> get = keys.map(Op.Get::new);
        Arbitrary<Op> candidates = Combinators.combine(tiers, Arbitraries.longs().between(-10, 1_500)).as(Op.Candidates::new);
        Arbitrary<Op> rollback = Arbitraries.integers().between(0, 1_000).map(Op.Rollback::new);
        return Arbitraries.frequencyOf(
                        Tuple.of(registerWeight, register), Tuple.of(3, demote),
                        Tuple.of(3, promote), Tuple.of(1, remove),
                        Tuple.of(touchWeight, touch), Tuple.of(1, get),
                        Tuple.of(2, candidates), Tuple.of(2, rollback))
                .list().ofMaxSize(maxOps);
    }
}
