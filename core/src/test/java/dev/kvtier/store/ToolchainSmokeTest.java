package dev.kvtier.store;
import org.junit.jupiter.api.Test;
import net.jqwik.api.*;
import static org.junit.jupiter.api.Assertions.*;
class ToolchainSmokeTest {
  @Test void runsOnJdk22OrNewer() { assertTrue(Runtime.version().feature() >= 22); }
  @Property(tries = 10) void jqwikRuns(@ForAll int x) { assertEquals(x, x); }
}
