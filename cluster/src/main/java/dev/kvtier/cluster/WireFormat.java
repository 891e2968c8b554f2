package dev.kvtier.cluster;

import dev.kvtier.cluster.MalformedMessageException.Reason;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The bytes of a {@link WireMessage}: versioned, checksummed, bounded. All integers big-endian.
 *
 * <pre>
 * Frame (every message)
 *   offset size  field
 *   0      4     magic       0x4B565443 ("KVTC")
 *   4      1     version     1
 *   5      1     kind        1 = rank batch, 2 = resync request, 3 = prefetch hint
 *   6      2     flags       rank batch: bit 0 = reset; resync request: bit 0 = all ranks; others 0
 *   8      4     bodyLength  N, 0 &lt;= N &lt;= MAX_MESSAGE_BYTES - 16
 *   12     N     body
 *   12+N   4     crc32c      CRC32C of bytes [0, 12 + N)
 *
 * Rank batch body
 *   0      4     rank        in [0, worldSize)
 *   4      8     epoch       &gt;= 0
 *   12     8     sequence    &gt;= 1
 *   20     1     hostLength  H, 0..255
 *   21     H     host        UTF-8
 *   21+H   4     eventCount  C
 *   then C events, each a type byte and its fields:
 *     1 block stored   tier(1) hash(16) tokens(4, &gt;= 0)     22 bytes
 *     2 block removed  tier(1) hash(16)                      18 bytes
 *     3 block gone     hash(16)                              17 bytes
 *     4 shard updated  layer(4, in [0, numLayers)) seqPos(8, &gt;= 0)   13 bytes
 *     5 shard evicted  layer(4) seqPos(8)                    13 bytes
 *   tier codes: 0 GPU, 1 CPU, 2 DISK (Tier ordinals; a new tier is a new version)
 *
 * Resync request body:  rank(4)  (0 when "all ranks")
 * Prefetch hint body:   rank(4) reusableTokens(8) blockCount(4) hash(16) x blockCount
 * </pre>
 *
 * A decoder checks, in this order: length against the frame, magic, version, checksum, then the body (kinds, counts
 * against the bytes present, ranks and layers against the {@link Limits}, negative values, leftover bytes), and
 * refuses with a {@link MalformedMessageException} whose {@link Reason} says which. Stateless and thread-safe.
 */
public final class WireFormat {
    /** "KVTC". */
    public static final int MAGIC = 0x4B565443;
    /** The only version this build writes and reads. */
    public static final int VERSION = 1;
    /** No message is larger: well under NATS's default 1 MiB payload limit. */
    public static final int MAX_MESSAGE_BYTES = 256 << 10;
    /** Longest host name carried, in UTF-8 bytes. */
    public static final int MAX_HOST_BYTES = 255;

    static final int HEADER_BYTES = 12;
    static final int TRAILER_BYTES = 4;
    static final int KIND_BATCH = 1;
    static final int KIND_RESYNC = 2;
    static final int KIND_HINT = 3;
    static final int FLAG_RESET = 1;
    static final int FLAG_ALL_RANKS = 1;
    static final int EVENT_STORED = 1;
    static final int EVENT_REMOVED = 2;
    static final int EVENT_GONE = 3;
    static final int EVENT_SHARD_UPDATED = 4;
    static final int EVENT_SHARD_EVICTED = 5;
    /** The largest event; a publisher starts a new message before one more event could pass the limit. */
    public static final int MAX_EVENT_BYTES = 22;
    private static final int BATCH_FIXED_BYTES = 4 + 8 + 8 + 1 + 4;
    private static final Tier[] TIERS = Tier.values();

    /**
     * What a receiver accepts: ranks in {@code [0, worldSize)}, layers in {@code [0, numLayers)}.
     *
     * @param worldSize how many ranks
     * @param numLayers how many layers
     */
    public record Limits(int worldSize, int numLayers) {
        /**
         * Checks the bounds.
         *
         * @throws IllegalArgumentException if {@code worldSize < 1} or {@code numLayers < 0}
         */
        public Limits {
            if (worldSize < 1 || numLayers < 0) {
                throw new IllegalArgumentException("worldSize must be >= 1 and numLayers >= 0, got " + worldSize
                        + " and " + numLayers);
            }
        }
    }

    private WireFormat() {
    }

    /**
     * Bytes a rank batch with a host of {@code hostBytes} UTF-8 bytes takes before its events (frame included).
     *
     * @param hostBytes the host name's length in UTF-8 bytes, {@code 0..}{@link #MAX_HOST_BYTES}; not checked
     * @return header, fixed batch fields, host and checksum trailer, in bytes; add {@link #eventBytes} per event
     */
    public static int batchOverhead(int hostBytes) {
        return HEADER_BYTES + BATCH_FIXED_BYTES + hostBytes + TRAILER_BYTES;
    }

    /**
     * Encodes {@code message}.
     *
     * @param message the message to encode
     * @return a new array holding the framed, checksummed message, as {@link #decode} reads it
     * @throws IllegalArgumentException if it would be larger than {@link #MAX_MESSAGE_BYTES} or its host name longer
     *     than {@link #MAX_HOST_BYTES} bytes
     */
    public static byte[] encode(WireMessage message) {
        return switch (message) {
            case WireMessage.RankBatch batch -> encodeBatch(batch);
            case WireMessage.ResyncRequest request -> {
                ByteBuffer body = ByteBuffer.allocate(4).putInt(request.allRanks() ? 0 : request.rank());
                yield frame(KIND_RESYNC, request.allRanks() ? FLAG_ALL_RANKS : 0, body);
            }
            case WireMessage.PrefetchHint hint -> {
                long size = 16L + 16L * hint.blocks().size();
                requireFits(size);
                ByteBuffer body = ByteBuffer.allocate((int) size).putInt(hint.rank()).putLong(hint.reusableTokens())
                        .putInt(hint.blocks().size());
                for (BlockHash block : hint.blocks()) {
                    body.putLong(block.high()).putLong(block.low());
                }
                yield frame(KIND_HINT, 0, body);
            }
        };
    }

    private static byte[] encodeBatch(WireMessage.RankBatch batch) {
        byte[] host = batch.host().getBytes(StandardCharsets.UTF_8);
        if (host.length > MAX_HOST_BYTES) {
            throw new IllegalArgumentException("host must be at most " + MAX_HOST_BYTES + " UTF-8 bytes, got "
                    + host.length + " ('" + batch.host() + "')");
        }
        long size = BATCH_FIXED_BYTES + host.length;
        for (ClusterEvent event : batch.events()) {
            size += eventBytes(event);
        }
        requireFits(size);
        ByteBuffer body = ByteBuffer.allocate((int) size).putInt(batch.rank()).putLong(batch.epoch())
                .putLong(batch.sequence()).put((byte) host.length).put(host).putInt(batch.events().size());
        for (ClusterEvent event : batch.events()) {
            switch (event) {
                case ClusterEvent.BlockStored e -> putHash(body.put((byte) EVENT_STORED).put((byte) e.tier().ordinal()),
                        e.block()).putInt(e.tokens());
                case ClusterEvent.BlockRemoved e -> putHash(body.put((byte) EVENT_REMOVED).put((byte) e.tier().ordinal()),
                        e.block());
                case ClusterEvent.BlockGone e -> putHash(body.put((byte) EVENT_GONE), e.block());
                case ClusterEvent.ShardUpdated e -> body.put((byte) EVENT_SHARD_UPDATED).putInt(e.layer())
                        .putLong(e.seqPos());
                case ClusterEvent.ShardEvicted e -> body.put((byte) EVENT_SHARD_EVICTED).putInt(e.layer())
                        .putLong(e.seqPos());
            }
        }
        return frame(KIND_BATCH, batch.reset() ? FLAG_RESET : 0, body);
    }

    /**
     * Encoded size of one event.
     *
     * @param event the event
     * @return its size inside a batch body in bytes (13 to 22, by kind); independent of its values
     */
    public static int eventBytes(ClusterEvent event) {
        return switch (event) {
            case ClusterEvent.BlockStored _ -> 22;
            case ClusterEvent.BlockRemoved _ -> 18;
            case ClusterEvent.BlockGone _ -> 17;
            case ClusterEvent.ShardUpdated _, ClusterEvent.ShardEvicted _ -> 13;
        };
    }

    private static void requireFits(long bodySize) {
        if (bodySize > MAX_MESSAGE_BYTES - HEADER_BYTES - TRAILER_BYTES) {
            throw new IllegalArgumentException("message of " + (bodySize + HEADER_BYTES + TRAILER_BYTES)
                    + " bytes is larger than MAX_MESSAGE_BYTES = " + MAX_MESSAGE_BYTES + ": split it");
        }
    }

    private static ByteBuffer putHash(ByteBuffer buffer, BlockHash hash) {
        return buffer.putLong(hash.high()).putLong(hash.low());
    }

    private static byte[] frame(int kind, int flags, ByteBuffer body) {
        int bodyLength = body.position();
        ByteBuffer out = ByteBuffer.allocate(HEADER_BYTES + bodyLength + TRAILER_BYTES);
        out.putInt(MAGIC).put((byte) VERSION).put((byte) kind).putShort((short) flags).putInt(bodyLength)
                .put(body.array(), 0, bodyLength);
        CRC32C crc = new CRC32C();
        crc.update(out.array(), 0, out.position());
        out.putInt((int) crc.getValue());
        return out.array();
    }

    /**
     * Decodes and checks {@code bytes} against {@code limits}.
     *
     * @param bytes  a message as received; not kept
     * @param limits the receiver's topology bounds for ranks and layers
     * @return the decoded message, its lists unmodifiable
     * @throws MalformedMessageException
 naming the {@link Reason} and the bad value
     */
    public static WireMessage decode(byte[] bytes, Limits limits) throws MalformedMessageException {
        if (bytes.length > MAX_MESSAGE_BYTES) {
            throw new MalformedMessageException(Reason.TOO_LARGE, bytes.length + " bytes > " + MAX_MESSAGE_BYTES);
        }
        if (bytes.length < HEADER_BYTES + TRAILER_BYTES) {
            throw new MalformedMessageException(Reason.TRUNCATED, bytes.length + " bytes, shorter than a frame ("
                    + (HEADER_BYTES + TRAILER_BYTES) + ")");
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        int magic = in.getInt();
        if (magic != MAGIC) {
            throw new MalformedMessageException(Reason.BAD_MAGIC, "magic 0x" + Integer.toHexString(magic));
        }
        int version = in.get() & 0xFF;
        if (version != VERSION) {
            throw new MalformedMessageException(Reason.BAD_VERSION, "version " + version + ", this build reads "
                    + VERSION);
        }
        int kind = in.get() & 0xFF;
        int flags = in.getShort() & 0xFFFF;
        int bodyLength = in.getInt();
        if (bodyLength < 0 || (long) HEADER_BYTES + bodyLength + TRAILER_BYTES > bytes.length) {
            throw new MalformedMessageException(Reason.TRUNCATED, "body length " + bodyLength + " but " + bytes.length
                    + " bytes in all");
        }
        int end = HEADER_BYTES + bodyLength;
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, end);
        int expected = ByteBuffer.wrap(bytes, end, TRAILER_BYTES).getInt();
        if ((int) crc.getValue() != expected) {
            throw new MalformedMessageException(Reason.BAD_CHECKSUM, "crc32c 0x" + Integer.toHexString((int) crc.getValue())
                    + ", message says 0x" + Integer.toHexString(expected));
        }
        if (end + TRAILER_BYTES != bytes.length) {
            throw new MalformedMessageException(Reason.BAD_STRUCTURE, (bytes.length - end - TRAILER_BYTES)
                    + " bytes after the checksum");
        }
        ByteBuffer body = ByteBuffer.wrap(bytes, HEADER_BYTES, bodyLength).slice();
        try {
            WireMessage message = switch (kind) {
                case KIND_BATCH -> decodeBatch(body, (flags & FLAG_RESET) != 0, limits);
                case KIND_RESYNC -> {
                    int rank = body.getInt();
                    boolean all = (flags & FLAG_ALL_RANKS) != 0;
                    if (!all) {
                        requireRank(rank, limits);
                    }
                    yield new WireMessage.ResyncRequest(all, all ? 0 : rank);
                }
                case KIND_HINT -> decodeHint(body, limits);
                default -> throw new MalformedMessageException(Reason.BAD_STRUCTURE, "unknown message kind " + kind);
            };
            if (body.hasRemaining()) {
                throw new MalformedMessageException(Reason.BAD_STRUCTURE, body.remaining()
                        + " bytes left after the body");
            }
            return message;
        } catch (BufferUnderflowException e) {
            throw new MalformedMessageException(Reason.TRUNCATED, "body ends inside a field (" + bodyLength
                    + " body bytes)");
        }
    }

    private static WireMessage.RankBatch decodeBatch(ByteBuffer body, boolean reset, Limits limits)
            throws MalformedMessageException {
        int rank = body.getInt();
        requireRank(rank, limits);
        long epoch = requireNonNegative("epoch", body.getLong());
        long sequence = body.getLong();
        if (sequence < 1) {
            throw new MalformedMessageException(Reason.NEGATIVE_VALUE, "sequence " + sequence + " (must be >= 1)");
        }
        int hostLength = body.get() & 0xFF;
        byte[] hostBytes = new byte[hostLength];
        body.get(hostBytes);
        String host;
        try {
            host = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(hostBytes)).toString();
        } catch (CharacterCodingException e) {
            throw new MalformedMessageException(Reason.BAD_STRUCTURE, "host is not UTF-8");
        }
        int count = body.getInt();
        // The smallest event is 13 bytes: a count the remaining bytes cannot hold is refused before any allocation.
        if (count < 0 || (long) count * 13 > body.remaining()) {
            throw new MalformedMessageException(count < 0 ? Reason.NEGATIVE_VALUE : Reason.TRUNCATED, "event count "
                    + count + " with " + body.remaining() + " bytes left");
        }
        List<ClusterEvent> events = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int type = body.get() & 0xFF;
            events.add(switch (type) {
                case EVENT_STORED -> {
                    Tier tier = tier(body.get());
                    BlockHash hash = hash(body);
                    int tokens = body.getInt();
                    if (tokens < 0) {
                        throw new MalformedMessageException(Reason.NEGATIVE_VALUE, "event " + i + ": tokens " + tokens);
                    }
                    yield new ClusterEvent.BlockStored(hash, tier, tokens);
                }
                case EVENT_REMOVED -> {
                    Tier tier = tier(body.get());
                    yield new ClusterEvent.BlockRemoved(hash(body), tier);
                }
                case EVENT_GONE -> new ClusterEvent.BlockGone(hash(body));
                case EVENT_SHARD_UPDATED, EVENT_SHARD_EVICTED -> {
                    int layer = body.getInt();
                    long seqPos = body.getLong();
                    if (layer < 0 || seqPos < 0) {
                        throw new MalformedMessageException(Reason.NEGATIVE_VALUE, "event " + i + ": layer " + layer
                                + ", seqPos " + seqPos);
                    }
                    if (layer >= limits.numLayers()) {
                        throw new MalformedMessageException(Reason.LAYER_OUT_OF_RANGE, "event " + i + ": layer " + layer
                                + " not in [0, " + limits.numLayers() + ")");
                    }
                    yield type == EVENT_SHARD_UPDATED ? new ClusterEvent.ShardUpdated(layer, seqPos)
                            : new ClusterEvent.ShardEvicted(layer, seqPos);
                }
                default -> throw new MalformedMessageException(Reason.BAD_STRUCTURE, "event " + i + ": unknown type "
                        + type);
            });
        }
        return new WireMessage.RankBatch(rank, epoch, sequence, reset, host, events);
    }

    private static WireMessage.PrefetchHint decodeHint(ByteBuffer body, Limits limits) throws MalformedMessageException {
        int rank = body.getInt();
        requireRank(rank, limits);
        long tokens = requireNonNegative("reusableTokens", body.getLong());
        int count = body.getInt();
        if (count < 0 || (long) count * BlockHash.BYTES > body.remaining()) {
            throw new MalformedMessageException(count < 0 ? Reason.NEGATIVE_VALUE : Reason.TRUNCATED, "block count "
                    + count + " with " + body.remaining() + " bytes left");
        }
        List<BlockHash> blocks = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            blocks.add(hash(body));
        }
        return new WireMessage.PrefetchHint(rank, tokens, blocks);
    }

    private static void requireRank(int rank, Limits limits) throws MalformedMessageException {
        if (rank < 0 || rank >= limits.worldSize()) {
            throw new MalformedMessageException(Reason.RANK_OUT_OF_RANGE, "rank " + rank + " not in [0, "
                    + limits.worldSize() + ")");
        }
    }

    private static long requireNonNegative(String name, long value) throws MalformedMessageException {
        if (value < 0) {
            throw new MalformedMessageException(Reason.NEGATIVE_VALUE, name + " " + value);
        }
        return value;
    }

    private static Tier tier(byte code) throws MalformedMessageException {
        int tier = code & 0xFF;
        if (tier >= TIERS.length) {
            throw new MalformedMessageException(Reason.BAD_STRUCTURE, "unknown tier code " + tier);
        }
        return TIERS[tier];
    }

    private static BlockHash hash(ByteBuffer body) {
        return new BlockHash(body.getLong(), body.getLong());
    }
}
