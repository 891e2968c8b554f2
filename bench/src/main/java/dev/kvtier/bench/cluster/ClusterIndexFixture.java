package dev.kvtier.bench.cluster;

import dev.kvtier.cluster.ClusterEvent;
import dev.kvtier.cluster.ClusterState;
import dev.kvtier.cluster.ClusterTopology;
import dev.kvtier.cluster.WireFormat;
import dev.kvtier.cluster.WireMessage;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The cluster index the router benchmarks use: {@code chains} prompt chains of {@code chainLength} blocks, each held
 * (all its blocks, GPU tier) by every rank of one randomly chosen tensor-parallel group, so the index holds
 * {@code chains x chainLength} distinct blocks. Block hashes are pseudo-random like real SHA-256 output.
 */
final class ClusterIndexFixture {
    static final int TOKENS_PER_BLOCK = 16;

    final ClusterTopology topology;
    final BlockHash[][] chains;
    final int[] groupOf;

    ClusterIndexFixture(ClusterTopology topology, int chainCount, int chainLength, long seed) {
        this.topology = topology;
        Random random = new Random(seed);
        chains = new BlockHash[chainCount][chainLength];
        groupOf = new int[chainCount];
        for (int c = 0; c < chainCount; c++) {
            groupOf[c] = random.nextInt(topology.groups());
            for (int b = 0; b < chainLength; b++) {
                chains[c][b] = new BlockHash(random.nextLong(), random.nextLong());
            }
        }
    }

    /**
     * The messages that build the index, rank by rank: each rank's first message is its reset; each message stays under
     * the wire format's size bound.
     */
    List<byte[]> messages(long epoch) {
        List<byte[]> messages = new ArrayList<>();
        int perMessage = (WireFormat.MAX_MESSAGE_BYTES - WireFormat.batchOverhead(8)) / WireFormat.MAX_EVENT_BYTES;
        for (int rank = 0; rank < topology.worldSize(); rank++) {
            int group = rank / topology.tensorParallelSize();
            long sequence = 0;
            List<ClusterEvent> events = new ArrayList<>();
            for (int c = 0; c < chains.length; c++) {
                if (groupOf[c] != group) {
                    continue;
                }
                for (BlockHash block : chains[c]) {
                    events.add(new ClusterEvent.BlockStored(block, Tier.GPU, TOKENS_PER_BLOCK));
                    if (events.size() == perMessage) {
                        messages.add(WireFormat.encode(new WireMessage.RankBatch(rank, epoch, ++sequence,
                                sequence == 1, "host" + rank, events)));
                        events.clear();
                    }
                }
            }
            messages.add(WireFormat.encode(new WireMessage.RankBatch(rank, epoch, ++sequence, sequence == 1,
                    "host" + rank, events)));
        }
        return messages;
    }

    /** A state fed {@link #messages} directly (stream sequences 1, 2, ...). */
    ClusterState build() {
        ClusterState state = new ClusterState(topology, chains.length * chains[0].length);
        long streamSequence = 0;
        for (byte[] message : messages(1)) {
            state.applyStreamMessage(++streamSequence, message);
        }
        return state;
    }
}
