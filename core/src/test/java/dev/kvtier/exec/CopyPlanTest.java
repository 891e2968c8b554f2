package dev.kvtier.exec;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class CopyPlanTest {

    @Test
    void regionsRespectBothSidesRunBoundaries() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(3);
            MemorySegment b = arena.allocate(5);
            MemorySegment c = arena.allocate(4);
            MemorySegment d = arena.allocate(4);
            CopyPlan plan = CopyPlan.between(MemoryKind.HOST, List.of(a, b), MemoryKind.DEVICE, List.of(c, d));
            assertEquals(List.of(3L, 1L, 4L), plan.regions().stream().map(CopyRegion::byteSize).toList());
            assertEquals(8, plan.totalBytes());
            assertEquals(b.address(), plan.regions().get(1).source().address());
            assertEquals(c.address() + 3, plan.regions().get(1).destination().address());
            assertEquals(1, CopyPlan.between(MemoryKind.HOST, List.of(b), MemoryKind.HOST, List.of(b)).regions().size(),
                    "contiguous on both sides: one copy");
            assertEquals(0, CopyPlan.between(MemoryKind.HOST, List.of(), MemoryKind.HOST, List.of()).regions().size());
            assertThrows(IllegalArgumentException.class,
                    () -> CopyPlan.between(MemoryKind.HOST, List.of(a), MemoryKind.HOST, List.of(b)));
            assertThrows(IllegalArgumentException.class, () -> new CopyRegion(a, b));
        }
    }
}
