package dev.kvtier.bench.sim;

/** The demotion policy the simulator asks the cache for ({@code --policy}). */
public enum PolicyChoice {
    /** Least-accessed first with a least-recently-used tie-break (the seed's policy). */
    LFU("lfu"),
    /** Least recently used first. */
    LRU("lru"),
    /** S3-FIFO: a small probationary FIFO, a main FIFO with use counts, and ghosts of recent evictions. */
    S3_FIFO("s3-fifo"),
    /** W-TinyLFU: a small LRU window before a frequency-sketch-admitted segmented LRU (as in Caffeine). */
    W_TINYLFU("w-tinylfu"),
    /** LRU-2: segments used once first, then by their second-to-last use, oldest first (LRU-K with K = 2). */
    LRU_2("lru-2"),
    /** ARC: recency and frequency lists with ghosts of each, and a recency target that follows the ghosts' hits. */
    ARC("arc"),
    /** S3-FIFO aware of prefix chains (tails of walks named first): the library's previous default. */
    CHAIN_S3_FIFO("chain-s3-fifo"),
    /**
     * Chain-aware S3-FIFO whose GPU tier switches to retention (keep a stable set) when miniature simulations show
     * it getting more hits: the library's default and the simulator's.
     */
    ADAPTIVE_S3_FIFO("adaptive-s3-fifo"),
    /**
     * The adaptive S3-FIFO with one more simulated behaviour: naming first the GPU segments whose prefix chain is
     * least likely to be walked again, learned online (more hits on multi-turn chat, more CPU per reference).
     */
    ADAPTIVE_CONTINUATION_S3_FIFO("adaptive-continuation-s3-fifo"),
    /**
     * The adaptive S3-FIFO whose GPU tier names least accessed first while miniature simulations show frequency
     * beating recency (document QA): better on the held-out traces' worst cell, not the default (its cost per reference
     * at 10^3 GPU segments is about 2.4x LRU's).
     */
    ADAPTIVE_S3_FIFO_LFU("adaptive-s3-fifo-lfu");

    private final String optionValue;

    PolicyChoice(String optionValue) {
        this.optionValue = optionValue;
    }

    /** The spelling on the command line and in the CSV. */
    public String optionValue() {
        return optionValue;
    }
}
