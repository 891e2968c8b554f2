package dev.kvtier.cluster;

import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * What one test rank really holds, changed only through this class, which reports every change to its publisher after
 * making it (events follow bytes). Also its {@link ClusterPublisher.Holdings}. Blocks cover {@link #TOKENS} tokens.
 */
final class RankTruth implements ClusterPublisher.Holdings {
    static final int TOKENS = 16;

    final int rank;
    private final Map<BlockHash, Integer> tiers = new TreeMap<>();
    private ClusterPublisher publisher;

    RankTruth(int rank) {
        this.rank = rank;
    }

    void attach(ClusterPublisher publisher) {
        this.publisher = publisher;
    }

    /** The publisher this rank reports to. */
    ClusterPublisher publisher() {
        return publisher;
    }

    static BlockHash block(int i) {
        return new BlockHash(0x5eed, i);
    }

    synchronized void store(BlockHash block, Tier tier) {
        tiers.merge(block, 1 << tier.ordinal(), (a, b) -> a | b);
        publisher.blockStored(block, tier, TOKENS);
    }

    synchronized void remove(BlockHash block, Tier tier) {
        Integer bits = tiers.get(block);
        if (bits == null) {
            return;
        }
        int left = bits & ~(1 << tier.ordinal());
        if (left == 0) {
            tiers.remove(block);
        } else {
            tiers.put(block, left);
        }
        publisher.blockRemoved(block, tier);
    }

    synchronized void gone(BlockHash block) {
        if (tiers.remove(block) != null) {
            publisher.blockGone(block);
        }
    }

    /** One engine step of random changes over blocks {@code [0, universe)}, then the step boundary. */
    synchronized void randomStep(Random random, int universe, int events) {
        for (int i = 0; i < events; i++) {
            BlockHash block = block(random.nextInt(universe));
            int choice = random.nextInt(10);
            if (choice < 6) {
                store(block, Tier.values()[random.nextInt(3)]);
            } else if (choice < 9) {
                remove(block, Tier.values()[random.nextInt(3)]);
            } else {
                gone(block);
            }
        }
        publisher.endStep();
    }

    /** Sets what a restarted rank recovered, without publishing (the reset announces it). */
    synchronized void load(BlockHash block, int tierBits) {
        tiers.put(block, tierBits);
    }

    /** {@code hash tierBits} per block: what {@link #load} reads back. */
    synchronized List<String> stateLines() {
        List<String> lines = new ArrayList<>();
        tiers.forEach((block, bits) -> lines.add(block + " " + bits));
        return lines;
    }

    /** Keeps only the blocks in {@code tier} (what a persistent disk tier recovers after a restart). */
    synchronized void keepOnly(Tier tier) {
        int bit = 1 << tier.ordinal();
        tiers.replaceAll((block, bits) -> bits & bit);
        tiers.values().removeIf(bits -> bits == 0);
    }

    @Override
    public synchronized void announce(ClusterPublisher.Announcer announcer) {
        for (Map.Entry<BlockHash, Integer> entry : tiers.entrySet()) {
            for (Tier tier : Tier.values()) {
                if ((entry.getValue() & (1 << tier.ordinal())) != 0) {
                    announcer.block(entry.getKey(), tier, TOKENS);
                }
            }
        }
    }

    /** This rank's lines of {@link ClusterState#describeHoldings()}. */
    synchronized List<String> blockLines() {
        List<String> lines = new ArrayList<>();
        tiers.forEach((block, bits) -> lines.add("block " + rank + " " + block + " " + bits + " " + TOKENS));
        return lines;
    }

    /** The block lines of every rank, sorted as {@link ClusterState#describeHoldings()} sorts them. */
    static List<String> expectedBlocks(List<RankTruth> truths) {
        List<String> lines = new ArrayList<>();
        for (RankTruth truth : truths) {
            lines.addAll(truth.blockLines());
        }
        lines.sort(null);
        return lines;
    }

    static List<String> blockLinesOf(ClusterState state) {
        return state.describeHoldings().stream().filter(line -> line.startsWith("block ")).toList();
    }
}
