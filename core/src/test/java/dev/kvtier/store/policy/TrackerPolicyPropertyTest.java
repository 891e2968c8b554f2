package dev.kvtier.store.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TierTransfer;
import dev.kvtier.store.TieredStore;
import dev.kvtier.store.TieredStorePropertyTest.Model;
import dev.kvtier.store.TieredStorePropertyTest.Op;
import dev.kvtier.store.TieredStorePropertyTest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;

/**
 * The tracker policies ({@link DemotionPolicy#s3Fifo()}, {@link DemotionPolicy#wTinyLfu()},
 * {@link DemotionPolicy#chainAwareS3Fifo()}, {@link DemotionPolicy#adaptiveS3Fifo()} and its retention naming
 * pinned on, {@link DemotionPolicy#lru2()}, {@link DemotionPolicy#arc()}) under
 * random histories. Their candidate order is their own, so it is not compared with a model; what
 * is checked is the {@link DemotionPolicy.Tracker} contract: candidates only from the asked tier,
 * each once, never a removed key, stopping exactly when their sizes add up to what was asked (or
 * the whole tier), a whole-tier query naming exactly the tier's segments; the store's own answers
 * and bookkeeping are the model's whatever the policy; and one history always gives one transcript.
 */
class TrackerPolicyPropertyTest {

    @Property(tries = 300, edgeCases = EdgeCasesMode.NONE)
    void s3FifoKeepsTheTrackerContract(@ForAll("operations") List<Op> ops,
                                       @ForAll @LongRange(max = 1_000) long gpuBudget,
                                       @ForAll @LongRange(max = 1_500) long cpuBudget) {
        run(DemotionPolicy.s3Fifo(), ops, gpuBudget, cpuBudget, true);
    }

    @Property(tries = 300, edgeCases = EdgeCasesMode.NONE)
    void chainAwareS3FifoKeepsTheTrackerContract(@ForAll("operations") List<Op> ops,
                                                 @ForAll @LongRange(max = 1_000) long gpuBudget,
                                                 @ForAll @LongRange(max = 1_500) long cpuBudget) {
        run(DemotionPolicy.chainAwareS3Fifo(), ops, gpuBudget, cpuBudget, true);
    }

    /** The adaptive variant, both as it chooses and with its GPU tier always naming by retention. */
    @Property(tries = 300, edgeCases = EdgeCasesMode.NONE)
    void adaptiveS3FifoKeepsTheTrackerContract(@ForAll("operations") List<Op> ops,
                                               @ForAll @LongRange(max = 1_000) long gpuBudget,
                                               @ForAll @LongRange(max = 1_500) long cpuBudget) {
        run(DemotionPolicy.adaptiveS3Fifo(), ops, gpuBudget, cpuBudget, true);
        run(S3FifoPolicy.pinnedRetention(1), ops, gpuBudget, cpuBudget, true);
    }

    /** The adaptive variant that learns chain continuation, as it chooses and with that naming pinned on. */
    @Property(tries = 300, edgeCases = EdgeCasesMode.NONE)
    void adaptiveContinuationS3FifoKeepsTheTrackerContract(@ForAll("operations") List<Op> ops,
                                                           @ForAll @LongRange(max = 1_000) long gpuBudget,
                                                           @ForAll @LongRange(max = 1_500) long cpuBudget) {
        run(DemotionPolicy.adaptiveContinuationS3Fifo(), ops, gpuBudget, cpuBudget, true);
        run(S3FifoPolicy.pinnedContinuation(), ops, gpuBudget, cpuBudget, true);
    }

    /** The adaptive S3-FIFO with least accessed first as a second expert, as it chooses and with that naming pinned on. */
    @Property(tries = 300, edgeCases = EdgeCasesMode.NONE)
    void adaptiveS3FifoLfuKeepsTheTrackerContract(@ForAll("operations") List<Op> ops,
                                                  @ForAll @LongRange(max = 1_000) long gpuBudget,
                                                  @ForAll @LongRange(max = 1_500) long cpuBudget) {
        run(DemotionPolicy.adaptiveS3FifoLfu(), ops, gpuBudget, cpuBudget, true);
        run(FrequencyExpertPolicy.pinnedLeastAccessedFirst(), ops, gpuBudget, cpuBudget, true);
    }

    @Property(tries = 300, edgeCases = EdgeCasesMode.NONE)
    void wTinyLfuKeepsTheTrackerContract(@ForAll("operations") List<Op> ops,
                                         @ForAll @LongRange(max = 1_000) long gpuBudget,
                                         @ForAll @LongRange(max = 1_500) long cpuBudget) {
        run(DemotionPolicy.wTinyLfu(), ops, gpuBudget, cpuBudget, true);
    }

    @Property(tries = 300, edgeCases = EdgeCasesMode.NONE)
    void lru2AndArcKeepTheTrackerContract(@ForAll("operations") List<Op> ops,
                                          @ForAll @LongRange(max = 1_000) long gpuBudget,
                                          @ForAll @LongRange(max = 1_500) long cpuBudget) {
        run(DemotionPolicy.lru2(), ops, gpuBudget, cpuBudget, true);
        run(DemotionPolicy.arc(), ops, gpuBudget, cpuBudget, true);
    }

    /**
     * Without whole-tier queries after every step the trackers' queues evolve only by the history
     * (S3-FIFO's queries reorganise its queues), so touch-heavy histories reach main-queue
     * reinsertion, ghost hits and probation/protected moves.
     */
    @Property(tries = 300, edgeCases = EdgeCasesMode.NONE)
    void touchHeavyHistoriesKeepTheContract(@ForAll("touchHeavyOperations") List<Op> ops,
                                            @ForAll @LongRange(max = 1_000) long gpuBudget) {
        run(DemotionPolicy.s3Fifo(), ops, gpuBudget, 1_500, false);
        run(DemotionPolicy.wTinyLfu(), ops, gpuBudget, 1_500, false);
        run(DemotionPolicy.chainAwareS3Fifo(), ops, gpuBudget, 1_500, false);
        run(DemotionPolicy.adaptiveS3Fifo(), ops, gpuBudget, 1_500, false);
        run(S3FifoPolicy.pinnedRetention(1), ops, gpuBudget, 1_500, false);
        run(DemotionPolicy.adaptiveContinuationS3Fifo(), ops, gpuBudget, 1_500, false);
        run(S3FifoPolicy.pinnedContinuation(), ops, gpuBudget, 1_500, false);
        run(DemotionPolicy.lru2(), ops, gpuBudget, 1_500, false);
        run(DemotionPolicy.arc(), ops, gpuBudget, 1_500, false);
        run(DemotionPolicy.adaptiveS3FifoLfu(), ops, gpuBudget, 1_500, false);
        run(FrequencyExpertPolicy.pinnedLeastAccessedFirst(), ops, gpuBudget, 1_500, false);
    }

    @Property(tries = 100, edgeCases = EdgeCasesMode.NONE)
    void oneHistoryGivesOneTranscript(@ForAll("operations") List<Op> ops,
                                      @ForAll @LongRange(max = 1_000) long gpuBudget) {
        for (DemotionPolicy policy : List.of(DemotionPolicy.s3Fifo(), DemotionPolicy.wTinyLfu(),
                DemotionPolicy.chainAwareS3Fifo(), DemotionPolicy.adaptiveS3Fifo(), S3FifoPolicy.pinnedRetention(1),
                DemotionPolicy.adaptiveContinuationS3Fifo(), S3FifoPolicy.pinnedContinuation(), DemotionPolicy.lru2(),
                DemotionPolicy.arc(), DemotionPolicy.adaptiveS3FifoLfu(), FrequencyExpertPolicy.pinnedLeastAccessedFirst())) {
            assertEquals(run(policy, ops, gpuBudget, 1_500, false), run(policy, ops, gpuBudget, 1_500, false),
                    policy.name());
        }
    }

    @Provide
    Arbitrary<List<Op>> operations() {
        return TieredStorePropertyTest.operations(7, 4, 3, 80);
    }

    @Provide
    Arbitrary<List<Op>> touchHeavyOperations() {
        return TieredStorePropertyTest.operations(5, 2, 12, 200);
    }

    /** Plays {@code ops}, checking every answer; returns the transcript of all answers. */
    private static List<String> run(DemotionPolicy policy, List<Op> ops, long gpuBudget, long cpuBudget,
                                    boolean wholeTierEveryStep) {
        TieredStore store = new TieredStore(gpuBudget, cpuBudget, policy);
        Model model = new Model(gpuBudget, cpuBudget, false);
        List<TierTransfer> transfers = new ArrayList<>();
        List<String> transcript = new ArrayList<>();
        for (Op op : ops) {
            Object answer = switch (op) {
                case Op.Register r -> {
                    SegmentMeta meta = SegmentMeta.of("k" + r.key(),
                            PositionRange.of(r.start(), r.start() + r.length()), r.size());
                    boolean expected = model.register(meta, r.tier());
                    assertEquals(expected, store.register(meta, r.tier()), op.toString());
                    yield expected;
                }
                case Op.Demote d -> {
                    Optional<TierTransfer> expected = model.move("k" + d.key(), d.to(), false);
                    assertEquals(expected, store.demote("k" + d.key(), d.to()), op.toString());
                    expected.ifPresent(transfers::add);
                    yield expected;
                }
                case Op.Promote p -> {
                    Optional<TierTransfer> expected = model.move("k" + p.key(), p.to(), true);
                    assertEquals(expected, store.promote("k" + p.key(), p.to()), op.toString());
                    expected.ifPresent(transfers::add);
                    yield expected;
                }
                case Op.Remove r -> {
                    Optional<SegmentMeta> expected = model.remove("k" + r.key());
                    assertEquals(expected, store.remove("k" + r.key()), op.toString());
                    yield expected;
                }
                case Op.Touch t -> {
                    boolean expected = model.touch("k" + t.key());
                    assertEquals(expected, store.touch("k" + t.key()), op.toString());
                    yield expected;
                }
                case Op.Get g -> store.get("k" + g.key());
                case Op.Candidates c -> {
                    List<String> keys = store.candidatesForDemotion(c.tier(), c.needed());
                    checkCandidates(model, c.tier(), c.needed(), keys, policy + " " + op);
                    yield keys;
                }
                case Op.Rollback r -> {
                    if (transfers.isEmpty()) {
                        yield "no transfer";
                    }
                    TierTransfer t = transfers.get(r.transferIndex() % transfers.size());
                    boolean expected = model.rollback(t);
                    assertEquals(expected, store.rollback(t), op + " of " + t);
                    yield expected;
                }
            };
            transcript.add(op + " -> " + answer);
            assertEquals(model.snapshot(), store.segments(), op.toString());
            for (Tier tier : Tier.values()) {
                assertEquals(model.used(tier), switch (tier) {
                    case GPU -> store.gpuUsed();
                    case CPU -> store.cpuUsed();
                    case DISK -> store.diskUsed();
                }, tier + " used after " + op);
                if (wholeTierEveryStep) {
                    checkCandidates(model, tier, Long.MAX_VALUE,
                            store.candidatesForDemotion(tier, Long.MAX_VALUE), policy + " whole " + tier + " after " + op);
                }
            }
        }
        for (Tier tier : Tier.values()) {
            List<String> all = store.candidatesForDemotion(tier, Long.MAX_VALUE);
            checkCandidates(model, tier, Long.MAX_VALUE, all, policy + " whole " + tier + " at the end");
            transcript.add(tier + " " + all);
        }
        return transcript;
    }

    private static void checkCandidates(Model model, Tier tier, long needed, List<String> keys, String what) {
        Map<String, Long> sizeOnTier = model.segs.values().stream()
                .filter(s -> s.meta().tier() == tier)
                .collect(Collectors.toMap(s -> s.meta().key(), s -> s.meta().sizeBytes()));
        if (needed <= 0) {
            assertEquals(List.of(), keys, what);
            return;
        }
        Set<String> distinct = new HashSet<>(keys);
        assertEquals(keys.size(), distinct.size(), what + ": a key named twice in " + keys);
        assertTrue(sizeOnTier.keySet().containsAll(distinct),
                what + ": " + keys + " names a key not on " + tier + " (on it: " + sizeOnTier.keySet() + ")");
        long sum = 0;
        for (int i = 0; i < keys.size(); i++) {
            assertTrue(sum < needed, what + ": went on after the sizes added up: " + keys);
            sum += sizeOnTier.get(keys.get(i));
        }
        if (sum < needed) {
            assertEquals(sizeOnTier.keySet(), distinct, what + ": stopped short of the whole tier");
        }
    }
}
