package dev.kvtier.bench.sim;

/** The demotion policy the simulator asks the cache for ({@code --policy}). */
public enum PolicyChoice {
    /** Least-accessed first with a least-recently-used tie-break (the seed's policy, the default). */
    LFU("lfu"),
    /** Least recently used first. */
    LRU("lru");

    private final String optionValue;

    PolicyChoice(String optionValue) {
        this.optionValue = optionValue;
    }

    /** The spelling on the command line and in the CSV. */
    public String optionValue() {
        return optionValue;
    }
}
