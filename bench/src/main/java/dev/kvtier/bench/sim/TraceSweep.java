package dev.kvtier.bench.sim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;

import dev.kvtier.store.Tier;

/**
 * The trace sweep's output: a CSV row per (policy, GPU budget) with the offline optimum beside each policy,
 * and a self-contained SVG (laid out by {@link SweepChart}'s helpers) with two panels against the GPU budget
 * (share of unique blocks): the share of block references found on the GPU, one line per policy and a dashed
 * one for the optimum, and each policy's share of the optimum. Stateless.
 */
final class TraceSweep {
    private static final int PLOT_HEIGHT = SweepChart.PLOT_HEIGHT;
    private static final int PLOT_WIDTH = SweepChart.PLOT_WIDTH;
    private static final String OPTIMUM = "optimum";

    private TraceSweep() {
    }

    /**
     * One run of the sweep.
     *
     * @param policy the policy
     * @param result the run (its settings hold the GPU budget used)
     */
    record Point(PolicyChoice policy, TraceResult result) {
        /** The GPU budget used, as a share of the trace's unique blocks. */
        double gpuShare() {
            long unique = result.uniqueBytes();
            return unique == 0 ? 0 : (double) result.settings().gpuBudgetBytes() / unique;
        }
    }

    /** RFC 4180 CSV, header row, one row per point, {@code \n} line ends. */
    static String csv(List<Point> points) {
        StringBuilder sb = new StringBuilder("policy,gpu_budget_share,gpu_budget_bytes,gpu_blocks,cpu_budget_bytes,"
                + "unique_blocks,block_bytes,requests,block_references,on_gpu_share,from_cpu_share,from_disk_share,"
                + "missing_share,prefix_hit_share,prefix_on_gpu_share,optimum_gpu_share,ratio_to_optimum,"
                + "block_refs_per_s,ttr_p50_us,ttr_p99_us,transfers,bytes_verified,failures,wall_s\n");
        for (Point p : points) {
            TraceResult r = p.result();
            sb.append(String.format(Locale.ROOT,
                    "%s,%.4f,%d,%d,%d,%d,%d,%d,%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.4f,%.1f,%.1f,%.1f,%d,%d,%d,%.3f\n",
                    p.policy().optionValue(), p.gpuShare(), r.settings().gpuBudgetBytes(), r.gpuCapacityBlocks(),
                    r.settings().cpuBudgetBytes(), r.trace().uniqueBlocks(), r.options().blockBytes(), r.requestsDone(),
                    r.references(), r.foundOnShare(Tier.GPU), r.foundOnShare(Tier.CPU), r.foundOnShare(Tier.DISK),
                    r.missingShare(), r.prefixHitShare(), r.prefixOnGpuShare(), r.optimumGpuShare(), r.ratioToOptimum(),
                    r.referencesPerSecond(), r.timeToResidentMicros(50), r.timeToResidentMicros(99),
                    r.cacheCounters().transfers(), r.counters().bytesVerified, r.failures(), r.playedNanos() / 1e9));
        }
        return sb.toString();
    }

    /** A series: a name and its (x %, y) points in x order. */
    private record Series(String name, String colour, boolean dashed, List<double[]> xy) {
    }

    /**
     * The SVG: a title naming the trace ({@code source}), the {@code subtitle} lines under it, the legend on a row of
     * its own, and the two panels.
     */
    static String chart(List<Point> points, String source, List<String> subtitle) {
        Map<PolicyChoice, List<Point>> byPolicy = new LinkedHashMap<>();
        for (Point p : points) {
            byPolicy.computeIfAbsent(p.policy(), k -> new ArrayList<>()).add(p);
        }
        byPolicy.values().forEach(list -> list.sort((a, b) -> Double.compare(a.gpuShare(), b.gpuShare())));
        List<Series> hits = new ArrayList<>();
        List<Series> ratios = new ArrayList<>();
        TreeMap<Double, Double> optimum = new TreeMap<>();
        int i = 0;
        for (Map.Entry<PolicyChoice, List<Point>> e : byPolicy.entrySet()) {
            String colour = SweepChart.COLOURS[i++ % SweepChart.COLOURS.length];
            List<double[]> h = new ArrayList<>();
            List<double[]> r = new ArrayList<>();
            for (Point p : e.getValue()) {
                double x = 100 * p.gpuShare();
                h.add(new double[] {x, 100 * p.result().foundOnShare(Tier.GPU)});
                r.add(new double[] {x, p.result().ratioToOptimum()});
                optimum.put(x, 100 * p.result().optimumGpuShare());
            }
            hits.add(new Series(e.getKey().optionValue(), colour, false, h));
            ratios.add(new Series(e.getKey().optionValue(), colour, false, r));
        }
        List<double[]> o = new ArrayList<>();
        optimum.forEach((x, y) -> o.add(new double[] {x, y}));
        hits.add(new Series(OPTIMUM, "#000000", true, o));

        double xMax = points.stream().mapToDouble(p -> 100 * p.gpuShare()).max().orElse(100);
        double xStep = SweepChart.niceStep(Math.max(xMax, 1e-3), 10);
        xMax = Math.max(xStep, Math.ceil(xMax / xStep) * xStep);
        double hitMax = hits.stream().flatMap(s -> s.xy().stream()).mapToDouble(p -> p[1]).max().orElse(0);
        double hitStep = SweepChart.niceStep(Math.max(hitMax, 1), 5);
        double ratioMax = Math.max(1, ratios.stream().flatMap(s -> s.xy().stream()).mapToDouble(p -> p[1])
                .filter(Double::isFinite).max().orElse(1));
        double ratioStep = SweepChart.niceStep(ratioMax, 5);

        List<SweepChart.LegendEntry> entries = hits.stream()
                .map(s -> new SweepChart.LegendEntry(s.name(), s.colour(), s.dashed())).toList();
        StringBuilder svg = new StringBuilder();
        int plotTop = SweepChart.header(svg, "kvtier simulator: trace GPU budget sweep against the offline optimum",
                SweepChart.capitalized(source) + ": GPU hits vs GPU budget, against the optimum", subtitle, entries);
        panel(svg, 0, plotTop, "Block references found on GPU", xMax, xStep,
                SweepChart.YAxis.linear("share of block references (%)", hitMax, hitStep), hits);
        panel(svg, 1, plotTop, "Policy / optimum", xMax, xStep,
                SweepChart.YAxis.linear("GPU hits of the policy / of the optimum", ratioMax, ratioStep), ratios);
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static void panel(StringBuilder svg, int index, int plotTop, String title, double xMax, double xStep,
                              SweepChart.YAxis yAxis, List<Series> series) {
        int left = SweepChart.PANEL_LEFT[index];
        int bottom = plotTop + PLOT_HEIGHT;
        svg.append(String.format(Locale.ROOT, "<g id=\"panel-%d\">\n", index + 1));
        SweepChart.axes(svg, left, plotTop, title, "GPU budget (% of unique blocks)", xMax, xStep, yAxis);
        for (Series s : series) {
            StringBuilder coordinates = new StringBuilder();
            StringBuilder markers = new StringBuilder();
            for (double[] p : s.xy()) {
                double px = left + p[0] / xMax * PLOT_WIDTH;
                double py = bottom - yAxis.fraction(p[1]) * PLOT_HEIGHT;
                coordinates.append(coordinates.isEmpty() ? "" : " ").append(String.format(Locale.ROOT, "%.1f,%.1f", px, py));
                markers.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>", px, py, s.colour()));
            }
            svg.append(String.format(Locale.ROOT,
                    "<polyline class=\"series\" data-series=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2.5\"%s points=\"%s\"/>\n",
                    SweepChart.escape(s.name()), s.colour(), s.dashed() ? " stroke-dasharray=\"6 4\"" : "", coordinates));
            svg.append(markers).append('\n');
        }
        svg.append("</g>\n");
    }
}
