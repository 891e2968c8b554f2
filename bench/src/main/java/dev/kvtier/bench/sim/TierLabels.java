package dev.kvtier.bench.sim;

import dev.kvtier.store.Tier;

/** How the simulator's report names each {@link Tier}. Stateless. */
final class TierLabels {
    private TierLabels() {
    }

    /** Short name for tables and tier paths, e.g. {@code "GPU"} or {@code "disk"}. */
    static String label(Tier tier) {
        return switch (tier) {
            case GPU -> "GPU";
            case CPU -> "CPU";
            case DISK -> "disk";
        };
    }

    /** How a segment found on this tier reads in the hit-rate line, e.g. {@code "from CPU"}. */
    static String hitLabel(Tier tier) {
        return switch (tier) {
            case GPU -> "on GPU";
            case CPU -> "from CPU";
            case DISK -> "from disk";
        };
    }
}
