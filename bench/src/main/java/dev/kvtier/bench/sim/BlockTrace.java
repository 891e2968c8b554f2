package dev.kvtier.bench.sim;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.kvtier.bench.trace.MooncakeTrace;
import dev.kvtier.bench.trace.TraceRequest;

/**
 * A trace made ready to play: every block reference in play order as a dense block number
 * ({@code 0..uniqueBlocks-1}, in order of first appearance), each request's slice of them, and per block its
 * hash id and its depth (index within the request that first used it, which gives its token positions).
 * Immutable and thread-safe; the arrays are never handed out.
 */
public final class BlockTrace {
    private final String source;
    private final int requests;
    private final int[] references;
    private final int[] requestStart;
    private final long[] hashIdOf;
    private final int[] depthOf;

    private BlockTrace(String source, int requests, int[] references, int[] requestStart, long[] hashIdOf, int[] depthOf) {
        this.source = source;
        this.requests = requests;
        this.references = references;
        this.requestStart = requestStart;
        this.hashIdOf = hashIdOf;
        this.depthOf = depthOf;
    }

    /**
     * @param requests the trace, in play order
     * @param source   where it came from, for the summary (a file name, or how it was generated)
     * @throws IllegalArgumentException when the trace has more than {@code Integer.MAX_VALUE - 8} block references
     */
    public static BlockTrace of(List<TraceRequest> requests, String source) {
        long total = 0;
        for (TraceRequest r : requests) {
            total += r.blocks();
        }
        if (total > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("the trace " + source + " has " + total
                    + " block references; the simulator plays at most " + (Integer.MAX_VALUE - 8));
        }
        int[] references = new int[(int) total];
        int[] requestStart = new int[requests.size() + 1];
        Map<Long, Integer> dense = new HashMap<>();
        long[] hashIdOf = new long[16];
        int[] depthOf = new int[16];
        int n = 0;
        for (int q = 0; q < requests.size(); q++) {
            TraceRequest r = requests.get(q);
            requestStart[q] = n;
            for (int i = 0; i < r.blocks(); i++) {
                long id = r.hashId(i);
                Integer block = dense.get(id);
                if (block == null) {
                    block = dense.size();
                    dense.put(id, block);
                    if (block == hashIdOf.length) {
                        hashIdOf = Arrays.copyOf(hashIdOf, 2 * block);
                        depthOf = Arrays.copyOf(depthOf, 2 * block);
                    }
                    hashIdOf[block] = id;
                    depthOf[block] = i;
                }
                references[n++] = block;
            }
        }
        requestStart[requests.size()] = n;
        int unique = dense.size();
        return new BlockTrace(source, requests.size(), references, requestStart,
                Arrays.copyOf(hashIdOf, unique), Arrays.copyOf(depthOf, unique));
    }

    /** Where the trace came from. */
    public String source() {
        return source;
    }

    /** Number of requests. */
    public int requests() {
        return requests;
    }

    /** Block references of all requests. */
    public int references() {
        return references.length;
    }

    /** Block references of the first {@code requestCount} requests. */
    public int referencesOfFirst(int requestCount) {
        return requestStart[requestCount];
    }

    /** Distinct blocks. */
    public int uniqueBlocks() {
        return hashIdOf.length;
    }

    /** Index of request {@code q}'s first reference. */
    public int start(int q) {
        return requestStart[q];
    }

    /** Index one past request {@code q}'s last reference. */
    public int end(int q) {
        return requestStart[q + 1];
    }

    /** The block of reference {@code i}. */
    public int block(int i) {
        return references[i];
    }

    /** The trace's hash id of {@code block}. */
    long hashId(int block) {
        return hashIdOf[block];
    }

    /** The index within its request at which {@code block} first appeared. */
    public int depth(int block) {
        return depthOf[block];
    }

    /** The first {@code count} references as dense block numbers (a copy), for the offline optimum. */
    public int[] referenceSequence(int count) {
        return Arrays.copyOf(references, count);
    }

    /** Tokens per block (the Mooncake format's). */
    public static int tokensPerBlock() {
        return MooncakeTrace.TOKENS_PER_BLOCK;
    }
}
