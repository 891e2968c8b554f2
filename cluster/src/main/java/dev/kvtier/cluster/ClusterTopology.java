package dev.kvtier.cluster;

/**
 * The shape of a cluster: {@code worldSize} ranks (at most {@value #MAX_RANKS}), grouped into tensor-parallel groups
 * of {@code tensorParallelSize} consecutive ranks (group {@code g} is ranks {@code [g * tp, (g + 1) * tp)}), over a
 * model of {@code numLayers} layers. A prefix is reusable on a group only where every rank of the group holds it.
 *
 * @param worldSize ranks in the cluster, {@code 1..64}
 * @param tensorParallelSize ranks per group, {@code >= 1}, dividing {@code worldSize}
 * @param numLayers the model's attention layers, {@code >= 0}
 */
public record ClusterTopology(int worldSize, int tensorParallelSize, int numLayers) {
    /** Ranks are kept as bits of one {@code long} in the index. */
    public static final int MAX_RANKS = 64;

    /**
     * Checks the shape.
     *
     * @throws IllegalArgumentException naming the bad value
     */
    public ClusterTopology {
        if (worldSize < 1 || worldSize > MAX_RANKS) {
            throw new IllegalArgumentException("worldSize must be in [1, " + MAX_RANKS + "], got " + worldSize);
        }
        if (tensorParallelSize < 1 || worldSize % tensorParallelSize != 0) {
            throw new IllegalArgumentException("tensorParallelSize must be >= 1 and divide worldSize " + worldSize
                    + ", got " + tensorParallelSize);
        }
        if (numLayers < 0) {
            throw new IllegalArgumentException("numLayers must be >= 0, got " + numLayers);
        }
    }

    /**
     * Number of tensor-parallel groups.
     *
     * @return {@code worldSize / tensorParallelSize}, at least 1
     */
    public int groups() {
        return worldSize / tensorParallelSize;
    }

    /**
     * Bits of the ranks of group {@code group}.
     *
     * @param group a group index in {@code [0, groups())}; not checked
     * @return a mask with bit {@code r} set for each rank {@code r} of the group
     */
    public long groupMask(int group) {
        long ones = tensorParallelSize == 64 ? -1L : (1L << tensorParallelSize) - 1;
        return ones << (group * tensorParallelSize);
    }

    /**
     * What a receiver of this cluster's messages accepts.
     *
     * @return limits that refuse a rank outside {@code [0, worldSize)} and a layer outside {@code [0, numLayers)}
     */
    public WireFormat.Limits limits() {

        return new WireFormat.Limits(worldSize, numLayers);
    }
}
