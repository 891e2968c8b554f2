package dev.kvtier.cluster;

import dev.kvtier.cluster.MalformedMessageException.Reason;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;
import dev.kvtier.sync.CacheRoutingHint;
import dev.kvtier.sync.CacheSyncProtocol;
import dev.kvtier.sync.SyncEvent;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.zip.CRC32C;
import java.util.zip.CheckedOutputStream;

/**
 * What the event stream says the cluster holds: per rank, the blocks in each tier and the seed's shard positions
 * (kept in a {@link CacheSyncProtocol}); per rank, the epoch and last sequence applied; and the last stream sequence
 * applied. Fed by {@link #applyStreamMessage}, queried by {@link #route}; a consumer saves it with {@link #snapshot}
 * and resumes with {@link #restore}, then from {@link #lastStreamSequence()} {@code + 1}.
 *
 * <p><b>Exactly once.</b> A message whose stream sequence is not above the last one applied, or whose (epoch,
 * sequence) the rank has already had, is skipped (counted as a duplicate): replaying any part of the stream changes
 * nothing. A message of an older epoch than the rank's current one is skipped as stale. A <em>reset</em> of the
 * rank's current epoch is a duplicate only when its sequence is within the rank's <em>contiguous</em> run (the
 * sequences applied one after the other since its last reset), not whenever it is below the highest sequence seen:
 * one message with a sequence from the future (forged or corrupt) puts the rank out of sync, and must not make its own
 * resets, which answer that, look like duplicates and lock it out for good.
 *
 * <p><b>Refused.</b> An epoch more than {@link #MAX_EPOCH_AHEAD} ahead of this process's clock (epochs are the wall
 * clock in milliseconds by default, {@link ClusterPublisher#clockEpoch()}), and a batch whose rank is not the sender
 * the bus authenticated ({@link #applyStreamMessage(long, byte[], int, java.util.function.BiConsumer)}), are counted
 * as bad messages ({@link Reason#EPOCH_AHEAD}, {@link Reason#WRONG_SENDER}) and change nothing.
 *
 * <p><b>The stream itself.</b> The state remembers which stream its position refers to ({@link #streamIdentity()},
 * written into snapshots); {@link #streamRecreated} starts over on a new stream: position 0, every rank out of sync.
 *
 * <p><b>Never stale silently.</b> A rank whose own sequence jumps, whose new epoch begins without a reset, or that
 * was first seen mid-epoch is <em>out of sync</em>: its blocks count for no hint until it resets, and
 * {@link #ranksOutOfSync()} names it so that the consumer asks it to re-announce. A jump in the stream sequence
 * (retention dropped what the consumer had not read) puts every rank out of sync. A rank's reset forgets all it held
 * (old epochs are cleared) and puts it back in sync.
 *
 * <p><b>Bad messages</b> are counted by {@link Reason} ({@link #badMessages()}), logged (at most one line a second,
 * saying how many were not logged), and skipped; their stream sequence still counts as read, so they never look like a
 * gap.
 *
 * <p>Thread-safe: one writer at a time (the consumer's delivery thread), readers in parallel under a read lock.
 */
public final class ClusterState {
    private static final System.Logger LOG = System.getLogger(ClusterState.class.getName());
    private final ThrottledLog badMessageLog = new ThrottledLog(LOG, java.time.Duration.ofSeconds(1));
    private static final int SNAPSHOT_MAGIC = 0x4B565453; // "KVTS"
    private static final int SNAPSHOT_VERSION = 2;
    /** How far ahead of this process's clock an epoch may be; a later one is refused ({@link Reason#EPOCH_AHEAD}). */
    public static final java.time.Duration MAX_EPOCH_AHEAD = java.time.Duration.ofMinutes(10);

    /** What {@link #applyStreamMessage} did with one message. */
    public enum Outcome {
        /** Applied in order. */
        APPLIED,
        /** A reset: the rank's earlier state was forgotten, then the message applied. */
        RESET,
        /** Applied, but the rank is now out of sync (a jump in its sequence, or a new epoch without its reset). */
        GAP,
        /** Already applied (same stream sequence, or the rank's same epoch and sequence): nothing changed. */
        DUPLICATE,
        /** From an epoch older than the rank's current one: nothing changed. */
        STALE_EPOCH,
        /** Not a rank batch, or refused by the wire format: nothing changed. */
        BAD_MESSAGE
    }

    private final ClusterTopology topology;
    private final WireFormat.Limits limits;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    // Guarded by lock.
    private final BlockTable blocks;
    private final CacheSyncProtocol positions;
    private final long[] epochs;
    private final long[] lastSequences;
    /** Per rank: the end of the run of sequences applied one after the other since its reset (see "Exactly once"). */
    private final long[] contiguousSequences;
    private final String[] hosts;
    private long outOfSync;
    private long lastStreamSequence;
    private final EnumMap<Reason, Long> bad = new EnumMap<>(Reason.class);
    private long duplicates;
    private long staleEpochs;
    private long streamGaps;
    private long streamRecreations;
    private String streamIdentity = "";

    /** Nothing known yet: every rank out of sync until it resets, stream read up to 0. */
    public ClusterState(ClusterTopology topology, int expectedBlocks) {
        this.topology = topology;
        this.limits = topology.limits();
        this.blocks = new BlockTable(topology.worldSize(), expectedBlocks);
        this.positions = new CacheSyncProtocol(topology.worldSize(), topology.numLayers()).withMaxLogSize(0);
        this.epochs = new long[topology.worldSize()];
        Arrays.fill(epochs, -1);
        this.lastSequences = new long[topology.worldSize()];
        this.contiguousSequences = new long[topology.worldSize()];
        this.hosts = new String[topology.worldSize()];
        Arrays.fill(hosts, "");
        this.outOfSync = allRanks();
    }

    private long allRanks() {
        return topology.worldSize() == 64 ? -1L : (1L << topology.worldSize()) - 1;
    }

    /** The cluster's shape. */
    public ClusterTopology topology() {
        return topology;
    }

    /**
     * Applies the message at {@code streamSequence}: decodes it, checks it for duplicates, staleness and gaps as the
     * class comment says, and applies it.
     */
    public Outcome applyStreamMessage(long streamSequence, byte[] payload) {
        return applyStreamMessage(streamSequence, payload, null);
    }

    /**
     * {@link #applyStreamMessage(long, byte[])}, then, when the message was a rank batch, tells {@code listener}
     * (if not null) the decoded batch and the outcome, outside the lock.
     */
    public Outcome applyStreamMessage(long streamSequence, byte[] payload,
            java.util.function.BiConsumer<WireMessage.RankBatch, Outcome> listener) {
        return applyStreamMessage(streamSequence, payload, SyncBus.UNKNOWN_SENDER, listener);
    }

    /**
     * {@link #applyStreamMessage(long, byte[], java.util.function.BiConsumer)} for a message the bus says was sent by
     * {@code senderRank} ({@link SyncBus#UNKNOWN_SENDER} when it cannot say): a rank batch of another rank is refused
     * and counted as {@link Reason#WRONG_SENDER}.
     */
    public Outcome applyStreamMessage(long streamSequence, byte[] payload, int senderRank,
            java.util.function.BiConsumer<WireMessage.RankBatch, Outcome> listener) {
        WireMessage message;
        try {
            message = WireFormat.decode(payload, limits);
        } catch (MalformedMessageException e) {
            lock.writeLock().lock();
            try {
                if (streamSequence <= lastStreamSequence) {
                    duplicates++;
                    return Outcome.DUPLICATE;
                }
                noteStreamSequence(streamSequence);
                bad.merge(e.reason(), 1L, Long::sum);
            } finally {
                lock.writeLock().unlock();
            }
            badMessageLog.warn("skipped bad message at stream sequence " + streamSequence + ": " + e.getMessage());
            return Outcome.BAD_MESSAGE;
        }
        if (!(message instanceof WireMessage.RankBatch batch)) {
            lock.writeLock().lock();
            try {
                noteStreamSequence(Math.max(streamSequence, lastStreamSequence));
                bad.merge(Reason.BAD_STRUCTURE, 1L, Long::sum);
            } finally {
                lock.writeLock().unlock();
            }
            return Outcome.BAD_MESSAGE;
        }
        Outcome outcome;
        lock.writeLock().lock();
        try {
            if (streamSequence <= lastStreamSequence) {
                duplicates++;
                outcome = Outcome.DUPLICATE;
            } else {
                noteStreamSequence(streamSequence);
                if (senderRank != SyncBus.UNKNOWN_SENDER && senderRank != batch.rank()) {
                    bad.merge(Reason.WRONG_SENDER, 1L, Long::sum);
                    badMessageLog.warn("refused a batch of rank " + batch.rank() + " sent by rank " + senderRank
                            + " at stream sequence " + streamSequence);
                    outcome = Outcome.BAD_MESSAGE;
                } else {
                    outcome = applyBatch(batch);
                }
            }
        } finally {
            lock.writeLock().unlock();
        }
        if (listener != null) {
            listener.accept(batch, outcome);
        }
        return outcome;
    }

    /** Caller holds the write lock. A jump means retention dropped messages nobody here has seen. */
    private void noteStreamSequence(long streamSequence) {
        if (streamSequence > lastStreamSequence + 1) {
            streamGaps++;
            outOfSync = allRanks();
            LOG.log(System.Logger.Level.WARNING, "stream gap: read up to " + lastStreamSequence + ", next is "
                    + streamSequence + "; every rank is out of sync until it re-announces");
        }
        lastStreamSequence = streamSequence;
    }

    /**
     * Applies {@code batch} as if it came next on the stream, without a stream sequence (the in-process path when a
     * consumer is fed directly). Same duplicate, stale and gap rules per rank.
     */
    public Outcome applyBatch(WireMessage.RankBatch batch) {
        lock.writeLock().lock();
        try {
            int rank = batch.rank();
            if (rank >= topology.worldSize()) {
                bad.merge(Reason.RANK_OUT_OF_RANGE, 1L, Long::sum);
                return Outcome.BAD_MESSAGE;
            }
            long epoch = batch.epoch();
            long bit = 1L << rank;
            if (epoch > System.currentTimeMillis() + MAX_EPOCH_AHEAD.toMillis()) {
                bad.merge(Reason.EPOCH_AHEAD, 1L, Long::sum);
                badMessageLog.warn("refused a batch of rank " + rank + " with epoch " + epoch + ", more than "
                        + MAX_EPOCH_AHEAD + " ahead of this clock");
                return Outcome.BAD_MESSAGE;
            }
            if (epoch < epochs[rank]) {
                staleEpochs++;
                return Outcome.STALE_EPOCH;
            }
            // A reset is never a duplicate: see the class comment ("Exactly once").
            if (epoch == epochs[rank] && batch.sequence()
                    <= (batch.reset() ? contiguousSequences[rank] : lastSequences[rank])) {
                duplicates++;
                return Outcome.DUPLICATE;
            }
            Outcome outcome;
            if (batch.reset()) {
                forgetRankLocked(rank);
                outOfSync &= ~bit;
                outcome = Outcome.RESET;
            } else if (epoch != epochs[rank]) {
                // A new incarnation whose reset we never saw (or a rank first met mid-epoch): its old blocks are
                // stale and its new ones incomplete.
                forgetRankLocked(rank);
                outOfSync |= bit;
                outcome = Outcome.GAP;
            } else if (batch.sequence() != lastSequences[rank] + 1) {
                outOfSync |= bit;
                outcome = Outcome.GAP;
            } else {
                outcome = (outOfSync & bit) != 0 ? Outcome.GAP : Outcome.APPLIED;
            }
            if (batch.reset() || (epoch == epochs[rank] && batch.sequence() == contiguousSequences[rank] + 1)) {
                contiguousSequences[rank] = batch.sequence();
            } else if (epoch != epochs[rank]) {
                contiguousSequences[rank] = 0;
            }
            epochs[rank] = epoch;
            lastSequences[rank] = batch.sequence();
            if (!batch.host().isEmpty()) {
                hosts[rank] = batch.host();
            }
            for (ClusterEvent event : batch.events()) {
                applyEvent(rank, event);
            }
            return outcome;
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * The stream this state has read was replaced by {@code newStreamIdentity} (recreated with an empty store, or
     * deleted and created again): the position starts over at 0, every rank is out of sync until it resets (its
     * holdings count for no hint meanwhile), and it counts as a stream gap and a recreation.
     */
    public void streamRecreated(String newStreamIdentity) {
        lock.writeLock().lock();
        try {
            LOG.log(System.Logger.Level.WARNING, "the stream was recreated (" + streamIdentity + " -> "
                    + newStreamIdentity + ") after reading up to " + lastStreamSequence
                    + "; every rank is out of sync until it re-announces");
            streamIdentity = newStreamIdentity;
            lastStreamSequence = 0;
            outOfSync = allRanks();
            streamGaps++;
            streamRecreations++;
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * Names the stream this state is about to read ({@link SyncBus#streamIdentity()}) when it has none yet (a new
     * state); a state already tied to another stream is not changed (see {@link #streamRecreated}).
     *
     * @return whether the state is now tied to {@code identity}
     */
    public boolean adoptStream(String identity) {
        lock.writeLock().lock();
        try {
            if (streamIdentity.isEmpty() && lastStreamSequence == 0) {
                streamIdentity = identity;
            }
            return streamIdentity.equals(identity);
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** The identity of the stream this state's position refers to; empty before {@link #adoptStream}. */
    public String streamIdentity() {
        lock.readLock().lock();
        try {
            return streamIdentity;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** How many times the stream was found recreated ({@link #streamRecreated}). */
    public long streamRecreations() {
        lock.readLock().lock();
        try {
            return streamRecreations;
        } finally {
            lock.readLock().unlock();
        }
    }

    private void forgetRankLocked(int rank) {
        blocks.forgetRank(rank);
        positions.forgetRank(rank);
    }

    private void applyEvent(int rank, ClusterEvent event) {
        switch (event) {
            case ClusterEvent.BlockStored e -> blocks.store(e.block().high(), e.block().low(), rank,
                    1 << e.tier().ordinal(), e.tokens());
            case ClusterEvent.BlockRemoved e -> blocks.remove(e.block().high(), e.block().low(), rank,
                    1 << e.tier().ordinal());
            case ClusterEvent.BlockGone e -> blocks.remove(e.block().high(), e.block().low(), rank, 0xF);
            case ClusterEvent.ShardUpdated e -> positions.recordEvent(new SyncEvent.ShardUpdated(rank, e.layer(), e.seqPos()));
            case ClusterEvent.ShardEvicted e -> positions.recordEvent(new SyncEvent.ShardEvicted(rank, e.layer(), e.seqPos()));
        }
    }

    /**
     * The hint for a request whose prompt is the chain {@code blocks} (first block first): the ranks of the
     * tensor-parallel group(s) holding the longest prefix of it, where a group counts a block only when every rank
     * of the group holds it (in any tier) and is in sync; the reusable tokens of that prefix; the ranks' hosts. When
     * several groups hold equally long prefixes all their ranks are listed, group by group in rank order. No group
     * holding even the first block gives a hint with no ranks and 0 tokens. {@code prefixId} is the high half of the
     * last reusable block's hash (0 when none). O(blocks x groups) at worst; each block costs one hash probe.
     */
    public CacheRoutingHint route(List<BlockHash> chain) {
        lock.readLock().lock();
        try {
            int groups = topology.groups();
            long trusted = ~outOfSync;
            long alive = groups == 64 ? -1L : (1L << groups) - 1; // groups holding every block so far
            int matched = 0;
            long tokens = 0;
            for (BlockHash block : chain) {
                int slot = blocks.slotOf(block.high(), block.low());
                long holding = blocks.holdersAtSlot(slot) & trusted;
                if (holding == 0) {
                    break;
                }
                long stillAlive = 0;
                for (long rest = alive; rest != 0; rest &= rest - 1) {
                    int group = Long.numberOfTrailingZeros(rest);
                    long groupMask = topology.groupMask(group);
                    if ((holding & groupMask) == groupMask) {
                        stillAlive |= 1L << group;
                    }
                }
                if (stillAlive == 0) {
                    break;
                }
                alive = stillAlive;
                matched++;
                tokens += blocks.tokensAt(slot);
            }
            if (matched == 0) {
                return new CacheRoutingHint(0, List.of(), 0, List.of());
            }
            List<Integer> ranks = new ArrayList<>();
            List<String> rankHosts = new ArrayList<>();
            for (long rest = alive; rest != 0; rest &= rest - 1) {
                int group = Long.numberOfTrailingZeros(rest);
                for (int rank = group * topology.tensorParallelSize(); rank < (group + 1) * topology.tensorParallelSize(); rank++) {
                    ranks.add(rank);
                    rankHosts.add(hosts[rank]);
                }
            }
            return new CacheRoutingHint(chain.get(matched - 1).high(), ranks, tokens, rankHosts);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * {@link #route(List)}, where the first {@code sharedBlocks} blocks of {@code chain} are also in a store every rank
     * can fetch from (a remote block store): when they are more reusable tokens than the ranks' own longest prefix,
     * the hint lists every rank (a rank without them fetches them), so a scheduler may pick by load; otherwise it is
     * {@link #route(List)}'s.
     *
     * @param sharedBlocks   leading blocks of {@code chain} the shared store holds, in {@code [0, chain.size()]}
     * @param tokensPerBlock tokens of each of those blocks, {@code >= 1}
     * @throws IllegalArgumentException naming a count out of range
     */
    public CacheRoutingHint route(List<BlockHash> chain, int sharedBlocks, long tokensPerBlock) {
        if (sharedBlocks < 0 || sharedBlocks > chain.size()) {
            throw new IllegalArgumentException("sharedBlocks must be in [0, " + chain.size() + "], was " + sharedBlocks);
        }
        if (tokensPerBlock < 1) {
            throw new IllegalArgumentException("tokensPerBlock must be >= 1, was " + tokensPerBlock);
        }
        CacheRoutingHint local = route(chain);
        long sharedTokens = sharedBlocks * tokensPerBlock;
        if (sharedTokens <= local.reusableTokens()) {
            return local;
        }
        List<Integer> ranks = new ArrayList<>(topology.worldSize());
        List<String> rankHosts = new ArrayList<>(topology.worldSize());
        lock.readLock().lock();
        try {
            for (int rank = 0; rank < topology.worldSize(); rank++) {
                ranks.add(rank);
                rankHosts.add(hosts[rank]);
            }
        } finally {
            lock.readLock().unlock();
        }
        return new CacheRoutingHint(chain.get(sharedBlocks - 1).high(), ranks, sharedTokens, rankHosts);
    }

    /** Ranks out of sync (their blocks count for no hint until they reset), as bits. */
    public long ranksOutOfSync() {
        lock.readLock().lock();
        try {
            return outOfSync;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The last stream sequence read (applied, skipped as duplicate/stale, or refused as bad). */
    public long lastStreamSequence() {
        lock.readLock().lock();
        try {
            return lastStreamSequence;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The current epoch of {@code rank}, or empty before any of its messages. */
    public OptionalLong epoch(int rank) {
        lock.readLock().lock();
        try {
            return epochs[rank] < 0 ? OptionalLong.empty() : OptionalLong.of(epochs[rank]);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The last sequence of {@code rank} applied within its current epoch (0 before any). */
    public long lastSequence(int rank) {
        lock.readLock().lock();
        try {
            return lastSequences[rank];
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The tiers in which {@code rank} holds {@code block}, as bits of {@link Tier} ordinals; 0 when none. */
    public int tiersOf(BlockHash block, int rank) {
        lock.readLock().lock();
        try {
            return blocks.tierBits(block, rank);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The latest shard position of ({@code rank}, {@code layer}), as the seed's protocol keeps it. */
    public OptionalLong latestPosition(int rank, int layer) {
        return positions.latestPosition(rank, layer);
    }

    /** Distinct blocks held by at least one rank. */
    public int blockCount() {
        lock.readLock().lock();
        try {
            return blocks.size();
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Bad messages skipped, by reason (only reasons seen). */
    public Map<Reason, Long> badMessages() {
        lock.readLock().lock();
        try {
            return new EnumMap<>(bad);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Messages skipped as already applied. */
    public long duplicates() {
        lock.readLock().lock();
        try {
            return duplicates;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Messages skipped as from an older epoch. */
    public long staleEpochs() {
        lock.readLock().lock();
        try {
            return staleEpochs;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Jumps seen in the stream sequence. */
    public long streamGaps() {
        lock.readLock().lock();
        try {
            return streamGaps;
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Everything held, as {@code rank -> (block -> tier bits)} text lines sorted, for comparing two states in tests
     * and tools: one line per (rank, block): {@code rank block tierBits tokens}, then one per rank:
     * {@code rank epoch lastSequence inSync}.
     */
    public List<String> describeHoldings() {
        lock.readLock().lock();
        try {
            List<String> lines = new ArrayList<>();
            blocks.forEach((high, low, holderBits, blockTokens, words, offset) -> {
                for (long rest = holderBits; rest != 0; rest &= rest - 1) {
                    int rank = Long.numberOfTrailingZeros(rest);
                    lines.add("block " + rank + " " + new BlockHash(high, low) + " "
                            + BlockTable.tierBitsIn(words, offset, rank) + " " + blockTokens);
                }
            });
            lines.sort(null);
            for (int rank = 0; rank < topology.worldSize(); rank++) {
                lines.add("rank " + rank + " epoch " + epochs[rank] + " seq " + lastSequences[rank] + " inSync "
                        + ((outOfSync & (1L << rank)) == 0));
            }
            return lines;
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Writes the whole state (ranks, positions, blocks, last stream sequence) to {@code out}, checksummed. The
     * format, big-endian:
     * <pre>
     *   magic "KVTS"(4) version(4) worldSize(4) tensorParallelSize(4) numLayers(4) lastStreamSequence(8) outOfSync(8)
     *   streamIdentityLength(2) streamIdentity(UTF-8)      (the stream lastStreamSequence counts in; version 2)
     *   per rank: epoch(8) lastSequence(8) contiguousSequence(8, version 2) hostLength(2) host(UTF-8)
     *   per rank, per layer: position(8), -1 when none
     *   blockCount(4), per block: high(8) low(8) tokens(4) tierWords(8 x ceil(worldSize / 16))
     *   crc32c(4) of everything before
     * </pre>
     * Holds the read lock while writing, so the snapshot is one consistent state. Does not close {@code out}.
     */
    public void snapshot(OutputStream out) throws IOException {
        CRC32C crc = new CRC32C();
        DataOutputStream data = new DataOutputStream(new BufferedOutputStream(new CheckedOutputStream(
                nonClosing(out), crc), 1 << 16));
        lock.readLock().lock();
        try {
            data.writeInt(SNAPSHOT_MAGIC);
            data.writeInt(SNAPSHOT_VERSION);
            data.writeInt(topology.worldSize());
            data.writeInt(topology.tensorParallelSize());
            data.writeInt(topology.numLayers());
            data.writeLong(lastStreamSequence);
            data.writeLong(outOfSync);
            byte[] identity = streamIdentity.getBytes(StandardCharsets.UTF_8);
            data.writeShort(identity.length);
            data.write(identity);
            for (int rank = 0; rank < topology.worldSize(); rank++) {
                data.writeLong(epochs[rank]);
                data.writeLong(lastSequences[rank]);
                data.writeLong(contiguousSequences[rank]);
                byte[] host = hosts[rank].getBytes(StandardCharsets.UTF_8);
                data.writeShort(host.length);
                data.write(host);
            }
            for (int rank = 0; rank < topology.worldSize(); rank++) {
                for (int layer = 0; layer < topology.numLayers(); layer++) {
                    data.writeLong(positions.latestPosition(rank, layer).orElse(-1));
                }
            }
            data.writeInt(blocks.size());
            int tierWords = blocks.tierWords();
            IOException[] failure = new IOException[1];
            blocks.forEach((high, low, holderBits, blockTokens, words, offset) -> {
                if (failure[0] != null) {
                    return;
                }
                try {
                    data.writeLong(high);
                    data.writeLong(low);
                    data.writeInt(blockTokens);
                    for (int i = 0; i < tierWords; i++) {
                        data.writeLong(words[offset + i]);
                    }
                } catch (IOException e) {
                    failure[0] = e;
                }
            });
            if (failure[0] != null) {
                throw failure[0];
            }
            data.flush();
            new DataOutputStream(out).writeInt((int) crc.getValue());
            out.flush();
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Reads a state written by {@link #snapshot} for the same topology. Whether it still applies to the stream is the
     * caller's to check: compare {@link #streamIdentity()} with the bus's.
     *
     * @throws IOException naming what is wrong when the bytes are not a whole, intact snapshot of this topology
     *     (wrong magic, version or shape, truncated, checksum mismatch); the caller then starts from nothing
     */
    public static ClusterState restore(InputStream in, ClusterTopology topology) throws IOException {
        // Read whole and check the checksum first: nothing is parsed from damaged bytes, and one bulk CRC over the
        // buffer is far cheaper than checksumming field by field through a stream.
        byte[] bytes = in.readAllBytes();
        if (bytes.length < 4) {
            throw new IOException("cluster snapshot is truncated (" + bytes.length + " bytes)");
        }
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - 4);
        java.nio.ByteBuffer data = java.nio.ByteBuffer.wrap(bytes);
        int expected = data.getInt(bytes.length - 4);
        if ((int) crc.getValue() != expected) {
            throw new IOException("cluster snapshot checksum mismatch (crc32c 0x" + Integer.toHexString((int) crc.getValue())
                    + ", file says 0x" + Integer.toHexString(expected) + "): damaged or truncated");
        }
        data.limit(bytes.length - 4);
        try {
            if (data.getInt() != SNAPSHOT_MAGIC) {
                throw new IOException("not a kvtier cluster snapshot (bad magic)");
            }
            int version = data.getInt();
            if (version != SNAPSHOT_VERSION) {
                throw new IOException("cluster snapshot version " + version + ", this build reads " + SNAPSHOT_VERSION);
            }
            int worldSizeRead = data.getInt();
            int tensorParallelRead = data.getInt();
            int layersRead = data.getInt();
            if (worldSizeRead != topology.worldSize() || tensorParallelRead != topology.tensorParallelSize()
                    || layersRead != topology.numLayers()) {
                throw new IOException("cluster snapshot is of worldSize " + worldSizeRead + ", tensorParallelSize "
                        + tensorParallelRead + ", numLayers " + layersRead + "; expected " + topology);
            }
            long streamSequence = data.getLong();
            long outOfSync = data.getLong();
            byte[] identity = new byte[data.getShort() & 0xFFFF];
            data.get(identity);
            int worldSize = topology.worldSize();
            long[] epochs = new long[worldSize];
            long[] sequences = new long[worldSize];
            long[] contiguous = new long[worldSize];
            String[] hosts = new String[worldSize];
            for (int rank = 0; rank < worldSize; rank++) {
                epochs[rank] = data.getLong();
                sequences[rank] = data.getLong();
                contiguous[rank] = data.getLong();
                byte[] host = new byte[data.getShort() & 0xFFFF];
                data.get(host);
                hosts[rank] = new String(host, StandardCharsets.UTF_8);
            }
            long[] positions = new long[worldSize * topology.numLayers()];
            for (int i = 0; i < positions.length; i++) {
                positions[i] = data.getLong();
            }
            int count = data.getInt();
            ClusterState state = new ClusterState(topology, count);
            int tierWords = state.blocks.tierWords();
            if (count < 0 || (long) count * (20 + 8L * tierWords) != data.remaining()) {
                throw new IOException("cluster snapshot says " + count + " blocks but holds " + data.remaining()
                        + " bytes of blocks");
            }
            for (int i = 0; i < count; i++) {
                long high = data.getLong();
                long low = data.getLong();
                int tokens = data.getInt();
                for (int word = 0; word < tierWords; word++) {
                    long bits = data.getLong();
                    for (int r = 0; r < 16 && word * 16 + r < worldSize; r++) {
                        int tiers = (int) (bits >>> (4 * r)) & 0xF;
                        if (tiers != 0) {
                            state.blocks.store(high, low, word * 16 + r, tiers, tokens);
                        }
                    }
                }
            }
            state.lastStreamSequence = streamSequence;
            state.outOfSync = outOfSync;
            state.streamIdentity = new String(identity, StandardCharsets.UTF_8);
            System.arraycopy(epochs, 0, state.epochs, 0, worldSize);
            System.arraycopy(sequences, 0, state.lastSequences, 0, worldSize);
            System.arraycopy(contiguous, 0, state.contiguousSequences, 0, worldSize);
            System.arraycopy(hosts, 0, state.hosts, 0, worldSize);
            for (int rank = 0; rank < worldSize; rank++) {
                for (int layer = 0; layer < topology.numLayers(); layer++) {
                    long position = positions[rank * topology.numLayers() + layer];
                    if (position >= 0) {
                        state.positions.recordEvent(new SyncEvent.ShardUpdated(rank, layer, position));
                    }
                }
            }
            return state;
        } catch (java.nio.BufferUnderflowException e) {
            throw new IOException("cluster snapshot is truncated", e);
        }
    }

    private static OutputStream nonClosing(OutputStream out) {
        return new java.io.FilterOutputStream(out) {
            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                out.write(b, off, len);
            }

            @Override
            public void close() throws IOException {
                flush();
            }
        };
    }
}
