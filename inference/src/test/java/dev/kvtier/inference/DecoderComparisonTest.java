package dev.kvtier.inference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The README's decoder comparison runs to its end on a tiny workload: every mode, the restore-beside-prefill figure and
 * the chart. At d98c5ba its last step stored a chain under a namespace root, which the cache refuses
 * as a parent that is not cached, and the command failed after printing its tables.
 */
class DecoderComparisonTest {
    @TempDir
    Path out;

    @Test
    void theComparisonRunsToItsEndAndWritesItsSummaryAndChart() throws Exception {
        DecoderComparison.main(new String[] {"size=tiny", "users=2", "turns=2", "budgets=5", "out=" + out});
        String summary = Files.readString(out.resolve("summary.txt"));
        assertTrue(summary.contains("restore CPU->GPU"), summary);
        assertTrue(summary.contains("kvtier"), summary);
        assertTrue(Files.readString(out.resolve("ttft.svg")).startsWith("<svg"), "an SVG chart");
    }
}
