package dev.kvtier.bench.sim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.DoubleFunction;
import java.util.function.ToDoubleFunction;

import dev.kvtier.store.Tier;

/**
 * Renders the sweep as a self-contained SVG (no scripts, fonts or external references): a title naming the
 * workload, a legend on a row of its own (wrapped, never over a panel), and two panels against the GPU budget
 * -- the share of ensureResident calls that found the segment already on the GPU, and the p99
 * time-to-resident on a logarithmic axis (it spans microseconds to milliseconds across the budgets) -- one line
 * per policy. The layout helpers ({@link #legend}, {@link #axes}, {@link YAxis}) are shared with the trace
 * sweep's chart. Stateless.
 */
final class SweepChart {
    static final int WIDTH = 1000;
    static final int PLOT_HEIGHT = 290;
    static final int PLOT_WIDTH = 370;
    static final int[] PANEL_LEFT = {80, 580};
    static final String[] COLOURS = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
            "#17becf"};
    /** Space below the plots for the x ticks and the x axis label. */
    private static final int BELOW_PLOT = 62;
    /** Space between the legend and a plot's top for the panel titles. */
    private static final int ABOVE_PLOT = 40;
    private static final int LEGEND_ROW = 20;
    private static final int MARGIN = 20;

    private SweepChart() {
    }

    /**
     * @param points   the sweep's points, any order
     * @param workload the workload, for the title (e.g. "chat workload (32 sessions, 2,000 requests)")
     * @param subtitle lines under the title (model, workload details, machine, date)
     */
    static String render(List<SweepPoint> points, String workload, List<String> subtitle) {
        Map<PolicyChoice, List<SweepPoint>> byPolicy = new LinkedHashMap<>();
        for (SweepPoint p : points) {
            byPolicy.computeIfAbsent(p.policy(), k -> new ArrayList<>()).add(p);
        }
        byPolicy.values().forEach(list -> list.sort((a, b) -> Double.compare(a.gpuShare(), b.gpuShare())));
        double xMax = Math.max(100, points.stream().mapToDouble(p -> 100 * p.gpuShare()).max().orElse(100));
        double xTickStep = niceStep(xMax, 10);
        xMax = Math.ceil(xMax / xTickStep) * xTickStep;

        double p99Max = points.stream().mapToDouble(p -> p.result().timeToResidentMicros(99)).max().orElse(0);
        double p99Min = points.stream().mapToDouble(p -> p.result().timeToResidentMicros(99)).filter(v -> v > 0)
                .min().orElse(p99Max);
        YAxis hits = YAxis.linear("share of ensureResident calls (%)", 100, 20);
        YAxis latency = YAxis.decades("p99 time-to-resident (log scale)", p99Min, p99Max, SweepChart::micros);

        List<LegendEntry> entries = new ArrayList<>();
        int i = 0;
        for (PolicyChoice policy : byPolicy.keySet()) {
            entries.add(new LegendEntry(describe(policy), COLOURS[i++ % COLOURS.length], false));
        }
        StringBuilder svg = new StringBuilder();
        int plotTop = header(svg, "kvtier simulator: GPU budget sweep",
                capitalized(workload) + ": hit rate and p99 time-to-resident vs GPU budget", subtitle, entries);
        panel(svg, 0, plotTop, "Already on GPU when needed", xMax, xTickStep, hits, byPolicy,
                p -> 100 * p.result().foundOnShare(Tier.GPU));
        panel(svg, 1, plotTop, "p99 time-to-resident", xMax, xTickStep, latency, byPolicy,
                p -> p.result().timeToResidentMicros(99));
        svg.append("</svg>\n");
        return svg.toString();
    }

    /** The text with its first letter in upper case (a title made from a workload's description). */
    static String capitalized(String text) {
        return text.isEmpty() ? text : text.substring(0, 1).toUpperCase(Locale.ROOT) + text.substring(1);
    }

    private static String describe(PolicyChoice policy) {
        return policy == PolicyChoice.LFU ? "lfu (seed)" : policy.optionValue();
    }

    /** A legend entry: a series' name, colour and whether its line is dashed. */
    record LegendEntry(String name, String colour, boolean dashed) {
    }

    /**
     * The document's opening: the SVG element sized for the legend's rows, its accessible title, the visible title,
     * the subtitle lines and the legend. Returns the top of the plots.
     */
    static int header(StringBuilder svg, String accessibleTitle, String title, List<String> subtitle,
                      List<LegendEntry> entries) {
        int legendTop = 52 + 17 * subtitle.size() + 8;
        int rows = legendRows(entries);
        int plotTop = legendTop + LEGEND_ROW * rows + ABOVE_PLOT;
        int height = plotTop + PLOT_HEIGHT + BELOW_PLOT;
        svg.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        svg.append(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                        + "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n", WIDTH, height, WIDTH, height));
        svg.append("<title>").append(escape(accessibleTitle)).append("</title>\n");
        svg.append(String.format(Locale.ROOT, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
                WIDTH, height));
        svg.append("<text x=\"20\" y=\"30\" font-size=\"17\" font-weight=\"bold\">").append(escape(title)).append("</text>\n");
        for (int line = 0; line < subtitle.size(); line++) {
            svg.append(String.format(Locale.ROOT, "<text x=\"20\" y=\"%d\" fill=\"#555555\">", 52 + 17 * line))
                    .append(escape(subtitle.get(line))).append("</text>\n");
        }
        legend(svg, entries, legendTop);
        return plotTop;
    }

    /** Width of a legend entry: its line sample, the gap, its text (estimated) and the space before the next. */
    static int legendEntryWidth(LegendEntry entry) {
        return 34 + textWidth(entry.name()) + 24;
    }

    /**
     * Text width in pixels at 12 px Helvetica/Arial, estimated on the safe side (~0.6 em per character), since an
     * SVG cannot be measured without a renderer.
     */
    static int textWidth(String text) {
        return (int) Math.ceil(7.2 * text.length());
    }

    /** How many rows the legend takes when its entries are laid out left to right and wrapped at the margin. */
    static int legendRows(List<LegendEntry> entries) {
        int rows = entries.isEmpty() ? 0 : 1;
        int x = MARGIN;
        for (LegendEntry entry : entries) {
            int width = legendEntryWidth(entry);
            if (x > MARGIN && x + width > WIDTH - MARGIN) {
                rows++;
                x = MARGIN;
            }
            x += width;
        }
        return rows;
    }

    /** Lays the legend out in rows from {@code top}: the same wrapping as {@link #legendRows}. */
    private static void legend(StringBuilder svg, List<LegendEntry> entries, int top) {
        svg.append("<g id=\"legend\">\n");
        int x = MARGIN;
        int y = top;
        for (LegendEntry entry : entries) {
            int width = legendEntryWidth(entry);
            if (x > MARGIN && x + width > WIDTH - MARGIN) {
                y += LEGEND_ROW;
                x = MARGIN;
            }
            svg.append(String.format(Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2.5\"%s/>"
                            + "<circle cx=\"%d\" cy=\"%d\" r=\"3.5\" fill=\"%s\"/>"
                            + "<text x=\"%d\" y=\"%d\">%s</text>\n",
                    x, y, x + 28, y, entry.colour(), entry.dashed() ? " stroke-dasharray=\"6 4\"" : "",
                    x + 14, y, entry.colour(), x + 34, y + 4, escape(entry.name())));
            x += width;
        }
        svg.append("</g>\n");
    }

    private static void panel(StringBuilder svg, int index, int plotTop, String title, double xMax, double xStep,
                              YAxis yAxis, Map<PolicyChoice, List<SweepPoint>> byPolicy, ToDoubleFunction<SweepPoint> y) {
        int left = PANEL_LEFT[index];
        int bottom = plotTop + PLOT_HEIGHT;
        svg.append(String.format(Locale.ROOT, "<g id=\"panel-%d\">\n", index + 1));
        axes(svg, left, plotTop, title, "GPU budget (% of peak working set)", xMax, xStep, yAxis);
        int i = 0;
        for (Map.Entry<PolicyChoice, List<SweepPoint>> e : byPolicy.entrySet()) {
            String colour = COLOURS[i++ % COLOURS.length];
            StringBuilder coordinates = new StringBuilder();
            StringBuilder markers = new StringBuilder();
            for (SweepPoint p : e.getValue()) {
                double px = left + 100 * p.gpuShare() / xMax * PLOT_WIDTH;
                double py = bottom - yAxis.fraction(y.applyAsDouble(p)) * PLOT_HEIGHT;
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
     * A panel's y axis: where a value sits between the bottom (0) and the top (1) of the plot, and its labelled
     * ticks. Linear from 0, or logarithmic over whole decades.
     *
     * @param label       the axis label
     * @param logarithmic whether values are placed by their logarithm
     * @param min         the value at the bottom (0 for a linear axis; a power of ten for a logarithmic one)
     * @param max         the value at the top
     * @param ticks       the values that get a grid line and a label
     * @param format      a tick's label
     */
    record YAxis(String label, boolean logarithmic, double min, double max, List<Double> ticks,
                 DoubleFunction<String> format) {

        /** 0 to {@code max} (rounded up to a whole step), a tick every {@code step}. */
        static YAxis linear(String label, double max, double step) {
            double top = Math.max(step, Math.ceil(max / step - 1e-9) * step);
            List<Double> ticks = new ArrayList<>();
            for (double v = 0; v <= top + step / 1e6; v += step) {
                ticks.add(v);
            }
            return new YAxis(label, false, 0, top, ticks, v -> tick(v, step));
        }

        /**
         * Whole decades from the one holding {@code minPositive} to the one above {@code max} (at least one decade;
         * 1 to 10 when nothing is positive), a tick at each power of ten. Values at or below the bottom sit on it.
         */
        static YAxis decades(String label, double minPositive, double max, DoubleFunction<String> format) {
            int low = minPositive > 0 ? (int) Math.floor(Math.log10(minPositive) + 1e-9) : 0;
            int high = max > 0 ? (int) Math.ceil(Math.log10(max) - 1e-9) : low + 1;
            high = Math.max(high, low + 1);
            List<Double> ticks = new ArrayList<>();
            for (int d = low; d <= high; d++) {
                ticks.add(Math.pow(10, d));
            }
            return new YAxis(label, true, Math.pow(10, low), Math.pow(10, high), ticks, format);
        }

        /** Where {@code value} sits: 0 at the bottom, 1 at the top, clamped to the plot. */
        double fraction(double value) {
            double f;
            if (!Double.isFinite(value)) {
                f = 0;
            } else if (logarithmic) {
                f = value <= min ? 0 : Math.log10(value / min) / Math.log10(max / min);
            } else {
                f = value / max;
            }
            return Math.clamp(f, 0.0, 1.0);
        }
    }

    /** A time in microseconds as a tick label: 1 µs, 10 µs, 100 µs, 1 ms, 10 ms, 1 s. */
    static String micros(double us) {
        if (us >= 1e6) {
            return trim(us / 1e6) + " s";
        }
        if (us >= 1e3) {
            return trim(us / 1e3) + " ms";
        }
        return trim(us) + " \u00b5s";
    }

    private static String trim(double v) {
        return v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }

    /**
     * One panel's frame: its title, the horizontal grid with y ticks, the x ticks, both axes and their labels
     * (shared by this chart and the trace sweep's).
     */
    static void axes(StringBuilder svg, int left, int plotTop, String title, String xLabel, double xMax, double xStep,
                     YAxis yAxis) {
        int bottom = plotTop + PLOT_HEIGHT;
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">%s</text>\n",
                left, plotTop - 12, escape(title)));
        for (double v : yAxis.ticks()) {
            double py = bottom - yAxis.fraction(v) * PLOT_HEIGHT;
            svg.append(String.format(Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>"
                            + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                    left, py, left + PLOT_WIDTH, py, left - 6, py + 4, escape(yAxis.format().apply(v))));
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
                left, plotTop, left, bottom, left, bottom, left + PLOT_WIDTH, bottom));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                left + PLOT_WIDTH / 2, bottom + 40, escape(xLabel)));
        svg.append(String.format(Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 %d %d)\">%s</text>\n",
                left - 56, plotTop + PLOT_HEIGHT / 2, left - 56, plotTop + PLOT_HEIGHT / 2, escape(yAxis.label())));
    }

    /** A step of 1, 2 or 5 times a power of ten giving about {@code ticks} intervals up to {@code max}. */
    static double niceStep(double max, int ticks) {
        double raw = max / ticks;
        double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
        double fraction = raw / magnitude;
        double nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10;
        return nice * magnitude;
    }

    static String tick(double value, double step) {
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
