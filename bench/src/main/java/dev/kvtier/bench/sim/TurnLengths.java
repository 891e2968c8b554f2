package dev.kvtier.bench.sim;

import java.util.Locale;
import java.util.random.RandomGenerator;

/**
 * How many tokens a chat turn adds ({@code --turn-tokens}). Immutable; sampling draws from the
 * generator it is given, so a seeded generator gives a reproducible sequence.
 */
public sealed interface TurnLengths {

    /** Largest turn the simulator accepts, in tokens; keeps one segment well under 2 GiB for every preset. */
    int MAX_TOKENS = 1 << 16;

    /** Draws one turn length in tokens, between {@link #min()} and {@link #max()}. */
    int sample(RandomGenerator random);

    /** Smallest possible turn, in tokens. */
    int min();

    /** Largest possible turn, in tokens. */
    int max();

    /** Expected turn length in tokens (for default budgets and descriptions). */
    double mean();

    /** The spelling {@link #parse} accepts. */
    String spec();

    /** Every turn has exactly {@code tokens} tokens: {@code 256}. */
    record Fixed(int tokens) implements TurnLengths {
        public Fixed {
            checkTokens("tokens", tokens);
        }

        @Override public int sample(RandomGenerator random) { return tokens; }
        @Override public int min() { return tokens; }
        @Override public int max() { return tokens; }
        @Override public double mean() { return tokens; }
        @Override public String spec() { return Integer.toString(tokens); }
    }

    /** Uniform between {@code min} and {@code max} inclusive: {@code 32..512}. */
    record Uniform(int min, int max) implements TurnLengths {
        public Uniform {
            checkTokens("min", min);
            checkTokens("max", max);
            if (max < min) {
                throw new IllegalArgumentException("max " + max + " is below min " + min);
            }
        }

        @Override public int sample(RandomGenerator random) { return random.nextInt(min, max + 1); }
        @Override public double mean() { return (min + (double) max) / 2; }
        @Override public String spec() { return min + ".." + max; }
    }

    /**
     * Log-normal with the given median and shape, clamped to {@code [1, cap]}: chat turns are mostly
     * short with a long tail of pasted documents. {@code lognormal:200,1.0} or {@code lognormal:200,1.0,4096}.
     */
    record LogNormal(int median, double sigma, int cap) implements TurnLengths {
        public LogNormal {
            checkTokens("median", median);
            checkTokens("cap", cap);
            if (!(sigma > 0 && sigma <= 4)) {
                throw new IllegalArgumentException("sigma must be in (0, 4], got " + sigma);
            }
            if (cap < median) {
                throw new IllegalArgumentException("cap " + cap + " is below median " + median);
            }
        }

        @Override
        public int sample(RandomGenerator random) {
            double tokens = median * Math.exp(sigma * random.nextGaussian());
            return (int) Math.max(1, Math.min(cap, Math.round(tokens)));
        }

        @Override public int min() { return 1; }
        @Override public int max() { return cap; }
        @Override public double mean() { return Math.min(cap, median * Math.exp(sigma * sigma / 2)); }
        @Override public String spec() { return String.format(Locale.ROOT, "lognormal:%d,%s,%d", median, sigma, cap); }
    }

    private static void checkTokens(String what, int tokens) {
        if (tokens < 1 || tokens > MAX_TOKENS) {
            throw new IllegalArgumentException(what + " must be between 1 and " + MAX_TOKENS + " tokens, got " + tokens);
        }
    }

    /**
     * Parses {@code N}, {@code MIN..MAX} or {@code lognormal:MEDIAN,SIGMA[,CAP]} (cap defaults to 16 x median,
     * at most {@link #MAX_TOKENS}).
     *
     * @throws IllegalArgumentException saying what was expected
     */
    static TurnLengths parse(String text) {
        String spec = text.strip();
        try {
            if (spec.startsWith("lognormal:")) {
                String[] parts = spec.substring("lognormal:".length()).split(",");
                if (parts.length < 2 || parts.length > 3) {
                    throw new IllegalArgumentException("expected lognormal:MEDIAN,SIGMA[,CAP]");
                }
                int median = Integer.parseInt(parts[0].strip());
                double sigma = Double.parseDouble(parts[1].strip());
                int cap = parts.length == 3 ? Integer.parseInt(parts[2].strip())
                        : (int) Math.min(MAX_TOKENS, 16L * median);
                return new LogNormal(median, sigma, cap);
            }
            int dots = spec.indexOf("..");
            if (dots >= 0) {
                return new Uniform(Integer.parseInt(spec.substring(0, dots).strip()),
                        Integer.parseInt(spec.substring(dots + 2).strip()));
            }
            return new Fixed(Integer.parseInt(spec));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected N, MIN..MAX or lognormal:MEDIAN,SIGMA[,CAP] (token counts)");
        }
    }
}
