package dev.kvtier.bench.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class ZipfSamplerTest {

    @Test
    void probabilitiesFollowTheHarmonicWeights() {
        ZipfSampler zipf = new ZipfSampler(100, 1.0);
        double harmonic = 0;
        for (int k = 1; k <= 100; k++) {
            harmonic += 1.0 / k;
        }
        double sum = 0;
        for (int k = 0; k < 100; k++) {
            assertEquals(1.0 / (k + 1) / harmonic, zipf.probability(k), 1e-12);
            sum += zipf.probability(k);
        }
        assertEquals(1.0, sum, 1e-12);
    }

    @Test
    void sampledFrequenciesMatchTheProbabilities() {
        int n = 50;
        int draws = 200_000;
        ZipfSampler zipf = new ZipfSampler(n, 1.1);
        int[] counts = new int[n];
        SplittableRandom random = new SplittableRandom(123);
        for (int i = 0; i < draws; i++) {
            counts[zipf.sample(random)]++;
        }
        for (int k = 0; k < n; k++) {
            double p = zipf.probability(k);
            double sigma = Math.sqrt(draws * p * (1 - p));
            assertEquals(draws * p, counts[k], 6 * sigma + 1, "rank " + k);
        }
        assertTrue(counts[0] > counts[1] && counts[1] > counts[4] && counts[4] > counts[20]);
    }

    @Test
    void exponentZeroIsUniformAndOneRankIsAlwaysZero() {
        ZipfSampler uniform = new ZipfSampler(4, 0);
        for (int k = 0; k < 4; k++) {
            assertEquals(0.25, uniform.probability(k), 1e-12);
        }
        ZipfSampler one = new ZipfSampler(1, 1.0);
        SplittableRandom random = new SplittableRandom(1);
        for (int i = 0; i < 1000; i++) {
            assertEquals(0, one.sample(random));
        }
    }

    @Test
    void badParametersAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new ZipfSampler(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new ZipfSampler(10, -0.5));
        assertThrows(IllegalArgumentException.class, () -> new ZipfSampler(10, Double.NaN));
    }
}
