package dev.kvtier.bench.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
