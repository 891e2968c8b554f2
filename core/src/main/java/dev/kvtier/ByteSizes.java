package dev.kvtier;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parsing and printing byte counts such as {@code 64MiB}, {@code 1.5GiB}, {@code 4096}, and shares such
 * as {@code 25%}: the one parser behind {@link KvTierConfig#from(java.util.Map)} and the simulator's
 * command line. Stateless and thread-safe.
 */
public final class ByteSizes {
    private static final Pattern SIZE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([a-zA-Z]*)");
    private static final String[] BINARY_UNITS = {"B", "KiB", "MiB", "GiB", "TiB"};

    private ByteSizes() {
    }

    /**
     * Parses a size: a number (decimals allowed) with an optional unit. Units are binary -- B, K/KiB,
     * M/MiB, G/GiB, T/TiB -- except the SI spellings kB, MB, GB, TB, which mean powers of 1000.
     *
     * @param text the size, such as {@code 64GiB}, {@code 1.5 MiB} or {@code 4096}
     * @return the number of bytes, rounded down
     * @throws IllegalArgumentException naming the text when it is null or not a size
     */
    public static long parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("text must not be null");
        }
        Matcher m = SIZE.matcher(text.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException("not a size: '" + text + "' (expected e.g. 64MiB, 1.5GiB, 4096)");
        }
        double number = Double.parseDouble(m.group(1));
        long multiplier = switch (m.group(2)) {
            case "", "B", "b" -> 1L;
            case "K", "k", "KiB", "kiB", "Ki" -> 1L << 10;
            case "M", "m", "MiB", "Mi" -> 1L << 20;
            case "G", "g", "GiB", "Gi" -> 1L << 30;
            case "T", "t", "TiB", "Ti" -> 1L << 40;
            case "kB", "KB" -> 1_000L;
            case "MB" -> 1_000_000L;
            case "GB" -> 1_000_000_000L;
            case "TB" -> 1_000_000_000_000L;
            default -> throw new IllegalArgumentException("unknown unit '" + m.group(2) + "' in size '" + text
                    + "' (use B, KiB, MiB, GiB, TiB, or kB, MB, GB, TB)");
        };
        double bytes = number * multiplier;
        if (bytes >= Long.MAX_VALUE) {
            throw new IllegalArgumentException("size too large: '" + text + "'");
        }
        return (long) bytes;
    }

    /**
     * Whether {@code text} is written as a share: a number followed by {@code %} ({@link #parseShare}).
     *
     * @param text the text to look at, or null
     * @return true when {@code text}, stripped, ends with {@code %}; false for null (whether the number parses is
     *         {@link #parseShare}'s to say)
     */
    public static boolean isShare(String text) {
        return text != null && text.strip().endsWith("%");
    }

    /**
     * Parses a share such as {@code 25%} or {@code 12.5%} into a fraction ({@code 0.25}, {@code 0.125}). What
     * it is a share of is the caller's (physical memory for a CPU budget, the working set in the simulator),
     * and so is its range.
     *
     * @param text the share, a number followed by {@code %}
     * @return the fraction, {@code > 0}; above 1 for shares above 100%
     * @throws IllegalArgumentException naming the text when it is not a positive, finite percentage
     */
    public static double parseShare(String text) {
        if (text == null) {
            throw new IllegalArgumentException("text must not be null");
        }
        if (!isShare(text)) {
            throw new IllegalArgumentException("not a share: '" + text + "' (expected a percentage like 25%)");
        }
        String number = text.strip();
        double percent;
        try {
            percent = Double.parseDouble(number.substring(0, number.length() - 1).strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a share: '" + text + "' (expected a percentage like 25%)");
        }
        if (!(percent > 0) || Double.isInfinite(percent)) {
            throw new IllegalArgumentException("a share must be a positive percentage, was '" + text + "'");
        }
        return percent / 100;
    }

    /**
     * Prints a byte count with a binary unit and up to one decimal, e.g. {@code 1.5 MiB}, {@code 512 B}.
     *
     * @param bytes the count of bytes
     * @return the count for a person to read; not meant to be parsed back exactly
     */
    public static String format(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        double value = bytes;
        int unit = 0;
        while (value >= 1024 && unit < BINARY_UNITS.length - 1) {
            value /= 1024;
            unit++;
        }
        String number = value == Math.rint(value) ? String.format(Locale.ROOT, "%.0f", value)
                : String.format(Locale.ROOT, "%.1f", value);
        return number + " " + BINARY_UNITS[unit];
    }
}
