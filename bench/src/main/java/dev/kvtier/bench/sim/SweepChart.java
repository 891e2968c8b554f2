package dev.kvtier.bench.sim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

import dev.kvtier.store.Tier;

/**
 * Renders the sweep as a self-contained SVG (no scripts, fonts or external references): two panels
 * against the GPU budget -- the share of ensureResident calls that found the segment already on the
 * GPU, and the p99 time-to-resident -- one line per policy, with axes, ticks and a legend. Stateless.
 */
final class SweepChart {
    private static final int WIDTH = 1000;
    private static final int HEIGHT = 490;
    static final int PLOT_TOP = 120;
    static final int PLOT_HEIGHT = 290;
    static final int PLOT_WIDTH = 370;
    private static final int[] PANEL_LEFT = {80, 580};
    private static final String[] COLOURS = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"};

    private SweepChart() {
    }

    /**
     * @param points   the sweep's points, any order
     * @param subtitle lines under the title (model, workload, machine, date)
     */
    static String render(List<SweepPoint> points, List<String> subtitle) {
        Map<PolicyChoice, List<SweepPoint>> byPolicy = new LinkedHashMap<>();
        for (SweepPoint p : points) {
            byPolicy.computeIfAbsent(p.policy(), k -> new ArrayList<>()).add(p);
        }
        byPolicy.values().forEach(list -> list.sort((a, b) -> Double.compare(a.gpuShare(), b.gpuShare())));
        double xMax = Math.max(100, points.stream().mapToDouble(p -> 100 * p.gpuShare()).max().orElse(100));
        double xTickStep = niceStep(xMax, 10);
        xMax = Math.ceil(xMax / xTickStep) * xTickStep;

        double p99Max = points.stream().mapToDouble(p -> p.result().timeToResidentMicros(99)).max().orElse(0);
        boolean millis = p99Max >= 2000;
        double unit = millis ? 1000 : 1;
        double yStep = niceStep(Math.max(p99Max / unit, 1e-3), 6);
        double yMax = Math.max(yStep, Math.ceil(p99Max / unit / yStep) * yStep);

        StringBuilder svg = new StringBuilder();
        svg.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        svg.append(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                        + "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n", WIDTH, HEIGHT, WIDTH, HEIGHT));
        svg.append("<title>kvtier simulator: GPU budget sweep</title>\n");
        svg.append(String.format(Locale.ROOT, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", WIDTH, HEIGHT));
        svg.append("<text x=\"20\" y=\"30\" font-size=\"18\" font-weight=\"bold\">kvtier simulator: hit rate and time-to-resident vs GPU budget</text>\n");
        for (int line = 0; line < subtitle.size(); line++) {
            svg.append(String.format(Locale.ROOT, "<text x=\"20\" y=\"%d\" fill=\"#555555\">", 52 + 17 * line))
                    .append(escape(subtitle.get(line))).append("</text>\n");
        }

        panel(svg, 0, "Already on GPU when needed", "share of ensureResident calls (%)", xMax, xTickStep, 100, 20,
                byPolicy, p -> 100 * p.result().foundOnShare(Tier.GPU));
        panel(svg, 1, "p99 time-to-resident", "p99 time-to-resident (" + (millis ? "ms" : "\u00b5s") + ")", xMax,
                xTickStep, yMax, yStep, byPolicy, p -> p.result().timeToResidentMicros(99) / unit);

        int legendX = WIDTH - 20 - 110 * byPolicy.size();
        int i = 0;
        for (PolicyChoice policy : byPolicy.keySet()) {
            int x = legendX + 110 * i;
            String colour = COLOURS[i % COLOURS.length];
            svg.append(String.format(Locale.ROOT,
                    "<line x1=\"%d\" y1=\"92\" x2=\"%d\" y2=\"92\" stroke=\"%s\" stroke-width=\"2.5\"/>"
                            + "<circle cx=\"%d\" cy=\"92\" r=\"3.5\" fill=\"%s\"/>"
                            + "<text x=\"%d\" y=\"96\">%s</text>\n",
                    x, x + 28, colour, x + 14, colour, x + 34, escape(describe(policy))));
            i++;
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static String describe(PolicyChoice policy) {
        return policy == PolicyChoice.LFU ? "lfu (seed)" : policy.optionValue();
    }

    private static void panel(StringBuilder svg, int index, String title, String yLabel, double xMax, double xStep,
                              double yMax, double yStep, Map<PolicyChoice, List<SweepPoint>> byPolicy,
                              ToDoubleFunction<SweepPoint> y) {
        int left = PANEL_LEFT[index];
        int bottom = PLOT_TOP + PLOT_HEIGHT;
        svg.append(String.format(Locale.ROOT, "<g id=\"panel-%d\">\n", index + 1));
        axes(svg, left, title, "GPU budget (% of peak working set)", yLabel, xMax, xStep, yMax, yStep);
        int i = 0;
        for (Map.Entry<PolicyChoice, List<SweepPoint>> e : byPolicy.entrySet()) {
            String colour = COLOURS[i++ % COLOURS.length];
            StringBuilder coordinates = new StringBuilder();
            StringBuilder markers = new StringBuilder();
            for (SweepPoint p : e.getValue()) {
                double px = left + 100 * p.gpuShare() / xMax * PLOT_WIDTH;
                double py = bottom - Math.min(y.applyAsDouble(p), yMax) / yMax * PLOT_HEIGHT;
                coordinates.append(coordinates.isEmpty() ? "" : " ").append(String.format(Locale.ROOT, "%.1f,%.1f", px, py));
                markers.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>", px, py, colour));
            }
            svg.append(String.format(Locale.ROOT,
                    "<polyline class=\"series\" data-policy=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2.5\" points=\"%s\"/>\n",
                    e.getKey().optionValue(), colour, coordinates));
            svg.append(markers).append('\n');
        }
        svg.append("</g>\n");
    }

    /**
     * One panel's frame: its title, the horizontal grid with y ticks, the x ticks, both axes and their
     * labels (shared by this chart and the trace sweep's).
     */
    static void axes(StringBuilder svg, int left, String title, String xLabel, String yLabel, double xMax, double xStep,
                     double yMax, double yStep) {
        int bottom = PLOT_TOP + PLOT_HEIGHT;
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">%s</text>\n",
                left, PLOT_TOP - 12, escape(title)));
        for (double v = 0; v <= yMax + yStep / 1e6; v += yStep) {
            double py = bottom - v / yMax * PLOT_HEIGHT;
            svg.append(String.format(Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>"
                            + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                    left, py, left + PLOT_WIDTH, py, left - 6, py + 4, tick(v, yStep)));
        }
        for (double v = 0; v <= xMax + xStep / 1e6; v += xStep) {
            double px = left + v / xMax * PLOT_WIDTH;
            svg.append(String.format(Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333333\"/>"
                            + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                    px, bottom, px, bottom + 5, px, bottom + 19, tick(v, xStep)));
        }
        svg.append(String.format(Locale.ROOT,
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>"
                        + "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>\n",
                left, PLOT_TOP, left, bottom, left, bottom, left + PLOT_WIDTH, bottom));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                left + PLOT_WIDTH / 2, bottom + 40, escape(xLabel)));
        svg.append(String.format(Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 %d %d)\">%s</text>\n",
                left - 48, PLOT_TOP + PLOT_HEIGHT / 2, left - 48, PLOT_TOP + PLOT_HEIGHT / 2, escape(yLabel)));
    }

    /** A step of 1, 2 or 5 times a power of ten giving about {@code ticks} intervals up to {@code max}. */
    static double niceStep(double max, int ticks) {
        double raw = max / ticks;
        double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
        double fraction = raw / magnitude;
        double nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10;
        return nice * magnitude;
    }

    private static String tick(double value, double step) {
        int decimals = step >= 1 ? 0 : (int) Math.ceil(-Math.log10(step));
        return String.format(Locale.ROOT, "%." + decimals + "f", value);
    }

    static String escape(String text) {
        StringBuilder sb = new StringBuilder(text.length());
        for (char c : text.toCharArray()) {
            switch (c) {
                case '<' -> sb.append("&lt;");
                case '>' -> sb.append("&gt;");
                case '&' -> sb.append("&amp;");
                case '"' -> sb.append("&quot;");
                default -> {
                    if (c >= 0x20 || c == '\t') {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.toString();
    }
}
