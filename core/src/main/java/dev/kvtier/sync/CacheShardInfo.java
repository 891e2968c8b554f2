package dev.kvtier.sync;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;

/**
 * One rank's share of a layer-sharded KV cache: which of the model's {@code numLayers} attention
 * layers the device at {@code rank} (of {@code worldSize} devices) is responsible for.
 *
 * <p>{@link #CacheShardInfo(int, int, int)} splits the layers evenly and contiguously: each rank gets
 * {@code numLayers / worldSize} layers and the first {@code numLayers % worldSize} ranks get one more,
 * so rank 0 of 3 with 10 layers holds {@code [0, 1, 2, 3]}, rank 1 holds {@code [4, 5, 6]}, rank 2
 * {@code [7, 8, 9]}. Over all ranks the split covers every layer exactly once.
 * {@link #withLayers(int, int, int, List)} takes an explicit assignment instead.
 *
 * <p>Immutable and therefore safe to share between threads. {@link #ownsLayer(int)} is O(1).
 *
 * <p>Errors: every factory and query throws {@link IllegalArgumentException} naming the argument and
 * value for {@code worldSize <= 0}, {@code rank} outside {@code [0, worldSize)}, {@code numLayers < 0},
 * and layers outside {@code [0, numLayers)}, repeated or {@code null}. (The Rust seed accepted
 * anything in {@code with_layers} and answered {@code false} from {@code owns_layer} for a layer the
 * model does not have; here both are errors.)
 */
public final class CacheShardInfo {
    private final int rank;
    private final int worldSize;
    private final int numLayers;
    /** In the order given (ascending for the even split); unmodifiable. */
    private final List<Integer> layers;
    /** Bit {@code l} set iff this shard owns layer {@code l}: makes {@link #ownsLayer} O(1). */
    private final BitSet owned;

    /**
     * The even contiguous split of {@code numLayers} layers over {@code worldSize} ranks, remainder
     * to the first ranks; this is rank {@code rank}'s part.
     *
     * @param rank      this shard's rank, in {@code [0, worldSize)}
     * @param worldSize how many ranks the layers are split over, {@code >= 1}
     * @param numLayers how many attention layers the whole model has, {@code >= 0}
     * @throws IllegalArgumentException if {@code worldSize <= 0}, {@code rank} is outside
     *     {@code [0, worldSize)} or {@code numLayers < 0}
     */
    public CacheShardInfo(int rank, int worldSize, int numLayers) {
        this(rank, worldSize, numLayers, evenSplit(rank, worldSize, numLayers));
    }

    private CacheShardInfo(int rank, int worldSize, int numLayers, List<Integer> checkedLayers) {
        this.rank = rank;
        this.worldSize = worldSize;
        this.numLayers = numLayers;
        this.layers = checkedLayers;
        this.owned = new BitSet(); // sized by the highest owned layer, not by numLayers
        for (int layer : checkedLayers) {
            owned.set(layer);
        }
    }

    /**
     * A shard with an explicit layer assignment, kept in the given order. The list is copied.
     *
     * @param rank      this shard's rank, in {@code [0, worldSize)}
     * @param worldSize how many ranks the layers are split over, {@code >= 1}
     * @param numLayers how many attention layers the whole model has, {@code >= 0}
     * @param layers    the layers this rank owns, each in {@code [0, numLayers)} and none twice, in the order to
     *                  keep; may be empty
     * @return a new shard owning exactly {@code layers}
     * @throws IllegalArgumentException if {@code worldSize <= 0}, {@code rank} is outside
     *     {@code [0, worldSize)}, {@code numLayers < 0}, {@code layers} is {@code null}, or any layer is
     *     {@code null}, outside {@code [0, numLayers)} or repeated
     */
    public static CacheShardInfo withLayers(int rank, int worldSize, int numLayers, List<Integer> layers) {
        checkShape(rank, worldSize, numLayers);
        if (layers == null) {
            throw new IllegalArgumentException("layers must not be null");
        }
        // Copy first so a list changed by another thread cannot pass the checks and then differ.
        Object[] given = layers.toArray();
        BitSet seen = new BitSet();
        List<Integer> copy = new ArrayList<>(given.length);
        for (int i = 0; i < given.length; i++) {
            if (!(given[i] instanceof Integer layer)) {
                throw new IllegalArgumentException("layers[" + i + "] must not be null");
            }
            Checks.requireIndex("layers[" + i + "]", layer, "numLayers", numLayers);
            if (seen.get(layer)) {
                throw new IllegalArgumentException("layers[" + i + "] = " + layer + " is repeated");
            }
            seen.set(layer);
            copy.add(layer);
        }
        return new CacheShardInfo(rank, worldSize, numLayers, Collections.unmodifiableList(copy));
    }

    private static void checkShape(int rank, int worldSize, int numLayers) {
        Checks.requireWorldSize(worldSize);
        Checks.requireIndex("rank", rank, "worldSize", worldSize);
        Checks.requireNonNegative("numLayers", numLayers);
    }

    private static List<Integer> evenSplit(int rank, int worldSize, int numLayers) {
        checkShape(rank, worldSize, numLayers);
        int perRank = numLayers / worldSize;
        int remainder = numLayers % worldSize;
        int start = perRank * rank + Math.min(rank, remainder);
        int count = perRank + (rank < remainder ? 1 : 0);
        List<Integer> layers = new ArrayList<>(count);
        for (int layer = start; layer < start + count; layer++) {
            layers.add(layer);
        }
        return Collections.unmodifiableList(layers);
    }

    /**
     * Rank of the device holding this shard, in {@code [0, worldSize)}.
     *
     * @return the rank, in {@code [0, worldSize)}
     */
    public int rank() {
        return rank;
    }

    /**
     * Number of devices (ranks) the cache is split over; at least 1.
     *
     * @return the number of ranks, {@code >= 1}
     */
    public int worldSize() {
        return worldSize;
    }

    /**
     * Number of attention layers in the whole model; at least 0.
     *
     * @return the number of layers, {@code >= 0}
     */
    public int numLayers() {
        return numLayers;
    }

    /**
     * The layers this shard is responsible for, as an unmodifiable list (ascending for the even split).
     *
     * @return the layers this shard owns, unmodifiable; empty when it owns none
     */
    public List<Integer> layers() {
        return layers;
    }

    /**
     * Whether this shard owns {@code layer}. O(1).
     *
     * @param layer a layer of the model, in {@code [0, numLayers)}
     * @return true when {@code layer} is one of {@link #layers()}
     * @throws IllegalArgumentException if {@code layer} is outside {@code [0, numLayers)}
     */
    public boolean ownsLayer(int layer) {
        Checks.requireIndex("layer", layer, "numLayers", numLayers);
        return owned.get(layer);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof CacheShardInfo that
                && rank == that.rank
                && worldSize == that.worldSize
                && numLayers == that.numLayers
                && layers.equals(that.layers);
    }

    @Override
    public int hashCode() {
        return ((rank * 31 + worldSize) * 31 + numLayers) * 31 + layers.hashCode();
    }

    @Override
    public String toString() {
        return "CacheShardInfo[rank=" + rank + ", worldSize=" + worldSize + ", numLayers=" + numLayers
                + ", layers=" + layers + "]";
    }
}
