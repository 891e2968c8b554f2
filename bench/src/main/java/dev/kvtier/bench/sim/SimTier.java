package dev.kvtier.bench.sim;

/**
 * The three tiers as the simulator reports them, fastest first. Kept apart from the library's own
 * tier enum so that the simulator's statistics and output do not depend on the adapter behind them.
 */
public enum SimTier {
    GPU("GPU", "on GPU"),
    CPU("CPU", "from CPU"),
    DISK("disk", "from disk");

    private final String label;
    private final String hitLabel;

    SimTier(String label, String hitLabel) {
        this.label = label;
        this.hitLabel = hitLabel;
    }

    /** Short name for tables and tier paths, e.g. {@code "GPU"} or {@code "disk"}. */
    public String label() {
        return label;
    }

    /** How a segment found on this tier reads in the hit-rate line, e.g. {@code "from CPU"}. */
    public String hitLabel() {
        return hitLabel;
    }
}
