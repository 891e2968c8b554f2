package dev.kvtier.bench.store;

import java.util.HexFormat;
import java.util.SplittableRandom;

/**
 * What both store benchmarks share: {@code n} segments of {@link #SEGMENT_BYTES} each, all on the
 * GPU tier with budgets roomy enough for every move, and a fixed pseudo-random key sequence so the
 * two stores see the same accesses.
 *
 * <p>Two key styles ({@link #KEY_STYLES}): {@code sequential} names {@code "seg-0", "seg-1", ...}, whose String
 * hashes are nearly consecutive, so a {@code HashMap} (which masks the low bits) files them almost in key order;
 * {@code random} names {@code "kvblock:"} and 32 random hex digits, the shape of the prefix cache's block keys, whose
 * hashes are scattered. Why both: a store can win or lose on the first through placement alone (the order of the
 * table decides the order in which the collector copies the entries), which says nothing about real keys.
 */
final class StoreWorkload {
    static final long SEGMENT_BYTES = 4_096;
    /** A few candidates: this many segments' worth of bytes is asked for. */
    static final int CANDIDATES_WANTED = 4;
    /** Keys registered and removed again by the register benchmark, on top of the {@code n} resident ones. */
    static final int SPARE_KEYS = 1_024;
    /**
     * The fewest draws in the key sequence; a population of {@code n} segments gets the next power of two at or above
     * {@code 2n} if that is more (see {@link #sequenceLength}).
     */
    static final int MIN_SEQUENCE = 1 << 16;

    /**
     * The seed port's record of a workload segment named {@code key}: positions [0, 16), {@link #SEGMENT_BYTES}.
     * The one shape every port-based store (the port, and the floors built on it) registers.
     */
    static SeedPortStore.Meta seedRecord(String key) {
        return new SeedPortStore.Meta(key, 0, 16, SEGMENT_BYTES);
    }

    /** The key styles, by name: see the class comment. */
    static final String[] KEY_STYLES = {"sequential", "random"};

    final String[] keys;
    final String[] spareKeys;
    private final int[] randomIndices;
    private final int sequenceMask;
    private int cursor;
    private int spareCursor;

    /** {@code segments} keys of the {@code sequential} style. */
    StoreWorkload(int segments) {
        this(segments, "sequential");
    }

    /**
     * {@code segments} keys of {@code keyStyle}, one of {@link #KEY_STYLES}.
     *
     * @throws IllegalArgumentException if {@code keyStyle} is none of them
     */
    StoreWorkload(int segments, String keyStyle) {
        boolean randomKeys = switch (keyStyle) {
            case "sequential" -> false;
            case "random" -> true;
            default -> throw new IllegalArgumentException("key style must be sequential or random, was " + keyStyle);
        };
        SplittableRandom names = new SplittableRandom(7);
        keys = new String[segments];
        for (int i = 0; i < segments; i++) {
            keys[i] = randomKeys ? randomKey(names) : "seg-" + i;
        }
        spareKeys = new String[SPARE_KEYS];
        for (int i = 0; i < SPARE_KEYS; i++) {
            spareKeys[i] = randomKeys ? randomKey(names) : "spare-" + i;
        }
        randomIndices = new int[sequenceLength(segments)];
        sequenceMask = randomIndices.length - 1;
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < randomIndices.length; i++) {
            randomIndices[i] = random.nextInt(segments);
        }
    }

    /** A key shaped like the prefix cache's block keys (PrefixBlockCache.keyOf): "kvblock:" and 32 hex digits (a collision is as unlikely as there). */
    private static String randomKey(SplittableRandom names) {
        return "kvblock:" + HexFormat.of().toHexDigits(names.nextLong()) + HexFormat.of().toHexDigits(names.nextLong());
    }

    /**
     * How many draws the cycling key sequence of a population of {@code segments} has: at least {@link #MIN_SEQUENCE},
     * and at least twice the population, so that the sequence reaches at least 86% of the keys (1 - e^-2) and a cycle's working set is
     * the population's. Why: with a fixed 65,536 draws, a 10^6-segment benchmark cycled over ~63,000 keys (6% of
     * them, a working set the size of a last-level cache), so its "10^6" figures measured a hot subset, not random
     * access over 10^6 segments (JMH's port get at 10^5 read 17-19 ns then: cache hits).
     */
    static int sequenceLength(int segments) {
        int wanted = Math.max(MIN_SEQUENCE, 2 * segments);
        return Integer.highestOneBit(wanted - 1) << 1;
    }

    /** Bytes every budget gets: all segments plus the spares fit on any tier. */
    long budget() {
        return (keys.length + (long) SPARE_KEYS) * SEGMENT_BYTES;
    }

    /** The next resident key of the shared pseudo-random sequence. */
    String nextKey() {
        return keys[nextIndex()];
    }

    /** The index in {@link #keys} of the next resident key of the sequence (for callers holding per-key handles). */
    int nextIndex() {
        return randomIndices[cursor++ & sequenceMask];
    }

    /** The next spare slot, cycling. */
    int nextSpare() {
        return spareCursor++ & (SPARE_KEYS - 1);
    }
}
