package dev.kvtier.bench.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.HashSet;
import java.util.Set;

import dev.kvtier.bench.trace.TraceGenerator;
import org.junit.jupiter.api.Test;

/** The held-out split: disjoint, and covering every family the generator has. */
class PolicyHeldOutTest {

    @Test
    void theSplitIsDisjointAndCoversEveryFamily() {
        Set<TraceGenerator.Kind> tuning = EnumSet.copyOf(PolicyHeldOut.TUNING_FAMILIES);
        Set<TraceGenerator.Kind> heldOut = EnumSet.copyOf(PolicyHeldOut.HELD_OUT_FAMILIES);
        assertTrue(tuning.stream().noneMatch(heldOut::contains), tuning + " / " + heldOut);
        Set<TraceGenerator.Kind> all = EnumSet.copyOf(tuning);
        all.addAll(heldOut);
        assertEquals(EnumSet.allOf(TraceGenerator.Kind.class), all, "a family in neither set was never judged");
        Set<Long> seeds = new HashSet<>(PolicyHeldOut.TUNING_SEEDS);
        assertTrue(PolicyHeldOut.HELD_OUT_SEEDS.stream().noneMatch(seeds::contains));
        assertTrue(PolicyHeldOut.CLASSIC.stream().allMatch(p -> PolicyTraceCheck.policy(p) != null));
    }
}
