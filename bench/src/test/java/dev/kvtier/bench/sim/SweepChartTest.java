package dev.kvtier.bench.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

class SweepChartTest {

    @Test
    void niceStepsAreOneTwoOrFiveTimesAPowerOfTen() {
        assertEquals(10, SweepChart.niceStep(100, 10), 1e-9);
        assertEquals(20, SweepChart.niceStep(100, 6), 1e-9);
        assertEquals(0.5, SweepChart.niceStep(2.4, 6), 1e-9);
        assertEquals(500, SweepChart.niceStep(2600, 6), 1e-9);
    }

    @Test
    void textIsEscaped() {
        assertEquals("a &lt;b&gt; &amp; &quot;c&quot;", SweepChart.escape("a <b> & \"c\"\u0001"));
    }

    @Test
    void theLatencyAxisSpansWholeDecadesAndPlacesValuesByTheirLogarithm() {
        SweepChart.YAxis axis = SweepChart.YAxis.decades("p99", 1.4, 1871.9, SweepChart::micros);
        assertEquals(List.of(1.0, 10.0, 100.0, 1000.0, 10000.0), axis.ticks());
        assertEquals(0.0, axis.fraction(1), 1e-9);
        assertEquals(0.25, axis.fraction(10), 1e-9);
        assertEquals(0.5, axis.fraction(100), 1e-9, "each decade the same height");
        assertEquals(1.0, axis.fraction(10_000), 1e-9);
        assertEquals(0.0, axis.fraction(0), 1e-9, "zero sits on the bottom, not below it");
        assertEquals(List.of("1 \u00b5s", "10 \u00b5s", "100 \u00b5s", "1 ms", "10 ms"),
                axis.ticks().stream().map(v -> axis.format().apply(v)).toList());
        SweepChart.YAxis flat = SweepChart.YAxis.decades("p99", 0, 0, SweepChart::micros);
        assertEquals(List.of(1.0, 10.0), flat.ticks(), "nothing positive: one decade");
    }

    @Test
    void legendEntriesNeverOverlapAndWrapBeforeTheMargin() {
        List<SweepChart.LegendEntry> entries = new ArrayList<>();
        for (PolicyChoice policy : PolicyChoice.values()) {
            entries.add(new SweepChart.LegendEntry(policy.optionValue(), "#000000", false));
        }
        entries.add(new SweepChart.LegendEntry("optimum", "#000000", true));
        StringBuilder svg = new StringBuilder();
        int plotTop = SweepChart.header(svg, "t", "title", List.of("one subtitle line"), entries);

        Matcher text = Pattern.compile("<g id=\"legend\">(.*?)</g>", Pattern.DOTALL).matcher(svg);
        assertTrue(text.find(), svg.toString());
        Matcher label = Pattern.compile("<text x=\"(\\d+)\" y=\"(\\d+)\">([^<]*)</text>").matcher(text.group(1));
        List<int[]> boxes = new ArrayList<>(); // x from, x to (estimated), y
        while (label.find()) {
            int x = Integer.parseInt(label.group(1));
            boxes.add(new int[] {x - 34, x + SweepChart.textWidth(label.group(3)), Integer.parseInt(label.group(2))});
        }
        assertEquals(entries.size(), boxes.size());
        for (int i = 0; i < boxes.size(); i++) {
            int[] a = boxes.get(i);
            assertTrue(a[0] >= 20 && a[1] <= SweepChart.WIDTH - 20, "inside the margins: " + a[0] + ".." + a[1]);
            assertTrue(a[2] + 20 < plotTop - 12 - 14, "above the panel titles");
            for (int j = i + 1; j < boxes.size(); j++) {
                int[] b = boxes.get(j);
                assertTrue(a[2] != b[2] || a[1] <= b[0] || b[1] <= a[0], "entries " + i + " and " + j + " overlap");
            }
        }
        assertTrue(boxes.stream().mapToInt(b -> b[2]).distinct().count() > 1, "this many entries wrap to a second row");
    }
}
