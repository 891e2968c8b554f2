package dev.kvtier.bench.sim;

import java.util.List;

/** The simulator's summaries as aligned "name  value" lines under a title (one renderer for every mode). */
final class SummaryTable {
    private SummaryTable() {
    }

    static String[] row(String name, String value) {
        return new String[] {name, value};
    }

    /** {@code title}, then each row indented, names padded to the longest. */
    static String render(String title, List<String[]> rows) {
        int width = rows.stream().mapToInt(r -> r[0].length()).max().orElse(0);
        StringBuilder sb = new StringBuilder(title).append(System.lineSeparator());
        for (String[] r : rows) {
            sb.append("  ").append(r[0]).append(" ".repeat(width - r[0].length())).append("  ").append(r[1])
                    .append(System.lineSeparator());
        }
        return sb.toString();
    }
}
