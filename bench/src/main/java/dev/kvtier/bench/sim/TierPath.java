package dev.kvtier.bench.sim;

import java.util.ArrayDeque;

import dev.kvtier.store.Tier;

/**
 * The tiers a segment was seen on, in order, as the simulator observed them (when written and before
 * each time it was made resident); consecutive repeats are collapsed and only the last
 * {@value #KEPT} observations are kept. Moves the cache made between two observations are not
 * visible here. Thread-safe.
 */
final class TierPath {
    static final int KEPT = 16;

    private final ArrayDeque<Tier> seen = new ArrayDeque<>();
    private int dropped;

    synchronized void observe(Tier tier) {
        if (tier == seen.peekLast()) {
            return;
        }
        if (seen.size() == KEPT) {
            seen.removeFirst();
            dropped++;
        }
        seen.addLast(tier);
    }

    /** E.g. {@code "GPU > CPU > disk > GPU"}, prefixed with {@code "... > "} when older observations were dropped. */
    @Override
    public synchronized String toString() {
        StringBuilder sb = new StringBuilder(dropped > 0 ? "... > " : "");
        for (Tier tier : seen) {
            if (sb.length() > 0 && !sb.toString().endsWith("> ")) {
                sb.append(" > ");
            }
            sb.append(TierLabels.label(tier));
        }
        return sb.toString();
    }
}
