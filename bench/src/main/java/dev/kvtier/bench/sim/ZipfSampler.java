package dev.kvtier.bench.sim;

import java.util.Arrays;
import java.util.random.RandomGenerator;

/**
 * Draws ranks {@code 0..n-1} with Zipf probabilities: rank {@code k} has weight {@code 1/(k+1)^s}.
 * Rank 0 is the most popular. Immutable and thread-safe; sampling is a binary search over the
 * cumulative distribution, so each draw costs one {@code nextDouble} and {@code O(log n)}.
 */
public final class ZipfSampler {
    private final double exponent;
    private final double[] cumulative;

    /**
     * @param n        number of ranks, at least 1
     * @param exponent the Zipf exponent {@code s}, at least 0 (0 is uniform)
     */
    public ZipfSampler(int n, double exponent) {
        if (n < 1) {
            throw new IllegalArgumentException("n must be at least 1, got " + n);
        }
        if (!(exponent >= 0 && exponent <= 10)) {
            throw new IllegalArgumentException("exponent must be in [0, 10], got " + exponent);
        }
        this.exponent = exponent;
        this.cumulative = new double[n];
        double sum = 0;
        for (int k = 0; k < n; k++) {
            sum += Math.pow(k + 1, -exponent);
            cumulative[k] = sum;
        }
        for (int k = 0; k < n; k++) {
            cumulative[k] /= sum;
        }
        cumulative[n - 1] = 1.0;
    }

    /** Number of ranks. */
    public int size() {
        return cumulative.length;
    }

    /** The exponent {@code s}. */
    public double exponent() {
        return exponent;
    }

    /** Probability of rank {@code k}. */
    public double probability(int k) {
        return k == 0 ? cumulative[0] : cumulative[k] - cumulative[k - 1];
    }

    /** Draws one rank. */
    public int sample(RandomGenerator random) {
        double u = random.nextDouble();
        int index = Arrays.binarySearch(cumulative, u);
        // binarySearch gives -(insertion point) - 1 when absent: the first rank whose cumulative exceeds u.
        int rank = index >= 0 ? index + 1 : -index - 1;
        return Math.min(rank, cumulative.length - 1);
    }
}
