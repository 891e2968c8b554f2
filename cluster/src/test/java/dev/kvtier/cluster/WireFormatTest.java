package dev.kvtier.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kvtier.cluster.MalformedMessageException.Reason;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.store.Tier;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class WireFormatTest {
    private static final WireFormat.Limits LIMITS = new WireFormat.Limits(8, 32);

    static List<ClusterEvent> randomEvents(Random random, int count) {
        List<ClusterEvent> events = new ArrayList<>();
        Tier[] tiers = Tier.values();
        for (int i = 0; i < count; i++) {
            BlockHash hash = new BlockHash(random.nextLong(), random.nextLong());
            events.add(switch (random.nextInt(5)) {
                case 0 -> new ClusterEvent.BlockStored(hash, tiers[random.nextInt(tiers.length)], random.nextInt(1 << 20));
                case 1 -> new ClusterEvent.BlockRemoved(hash, tiers[random.nextInt(tiers.length)]);
                case 2 -> new ClusterEvent.BlockGone(hash);
                case 3 -> new ClusterEvent.ShardUpdated(random.nextInt(32), random.nextLong() & Long.MAX_VALUE);
                default -> new ClusterEvent.ShardEvicted(random.nextInt(32), random.nextLong() & Long.MAX_VALUE);
            });
        }
        return events;
    }

    private static byte[] validBatch() {
        return WireFormat.encode(new WireMessage.RankBatch(3, 7, 11, false, "host-a", List.of(
                new ClusterEvent.BlockStored(new BlockHash(1, 2), Tier.GPU, 16),
                new ClusterEvent.ShardUpdated(5, 99))));
    }

    /** Recomputes the trailing CRC so that a deliberately bad field gets past the checksum to the check it targets. */
    private static byte[] reseal(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - 4);
        ByteBuffer.wrap(bytes).putInt(bytes.length - 4, (int) crc.getValue());
        return bytes;
    }

    private static Reason refusal(byte[] bytes) {
        return assertThrows(MalformedMessageException.class, () -> WireFormat.decode(bytes, LIMITS)).reason();
    }

    @Test
    void everyMessageKindRoundTrips() throws Exception {
        Random random = new Random(13);
        for (int round = 0; round < 200; round++) {
            WireMessage batch = new WireMessage.RankBatch(random.nextInt(8), random.nextLong() & Long.MAX_VALUE,
                    1 + (random.nextLong() & (Long.MAX_VALUE >> 1)), random.nextBoolean(), round % 3 == 0 ? "" : "h\u00e9te-" + round,
                    randomEvents(random, random.nextInt(50)));
            assertEquals(batch, WireFormat.decode(WireFormat.encode(batch), LIMITS));
        }
        WireMessage one = new WireMessage.ResyncRequest(false, 6);
        WireMessage all = new WireMessage.ResyncRequest(true, 0);
        WireMessage hint = new WireMessage.PrefetchHint(2, 4096, List.of(new BlockHash(-1, 5), new BlockHash(3, -9)));
        for (WireMessage message : List.of(one, all, hint)) {
            assertEquals(message, WireFormat.decode(WireFormat.encode(message), LIMITS));
        }
    }

    @Test
    void everyTruncationIsRefusedAsTruncatedOrBadChecksum() {
        byte[] valid = validBatch();
        for (int length = 0; length < valid.length; length++) {
            byte[] cut = java.util.Arrays.copyOf(valid, length);
            Reason reason = refusal(cut);
            if (reason != Reason.TRUNCATED && reason != Reason.BAD_CHECKSUM) {
                throw new AssertionError("cut at " + length + " gave " + reason);
            }
        }
        // A frame whose checksum is right but whose body stops inside a field.
        byte[] shortBody = validBatch();
        ByteBuffer.wrap(shortBody).putInt(8, 10);
        byte[] resealed = reseal(java.util.Arrays.copyOf(shortBody, 12 + 10 + 4));
        assertEquals(Reason.TRUNCATED, refusal(resealed));
    }

    @Test
    void wrongMagicOrVersionIsRefused() {
        byte[] magic = validBatch();
        magic[0] = 'X';
        assertEquals(Reason.BAD_MAGIC, refusal(magic));
        byte[] version = validBatch();
        version[4] = 2;
        assertEquals(Reason.BAD_VERSION, refusal(reseal(version)));
    }

    @Test
    void everySingleBitFlipIsCaught() {
        byte[] valid = validBatch();
        for (int i = 0; i < valid.length; i++) {
            for (int bit = 0; bit < 8; bit++) {
                byte[] flipped = valid.clone();
                flipped[i] ^= (byte) (1 << bit);
                refusal(flipped); // any reason: what matters is that it is never accepted
            }
        }
        byte[] body = validBatch();
        body[20] ^= 1;
        assertEquals(Reason.BAD_CHECKSUM, refusal(body));
    }

    @Test
    void ranksAndLayersOutOfRangeAreRefused() {
        byte[] rank = validBatch();
        ByteBuffer.wrap(rank).putInt(12, 8); // worldSize is 8
        assertEquals(Reason.RANK_OUT_OF_RANGE, refusal(reseal(rank)));
        ByteBuffer.wrap(rank).putInt(12, -1);
        assertEquals(Reason.RANK_OUT_OF_RANGE, refusal(reseal(rank)));
        byte[] layer = WireFormat.encode(new WireMessage.RankBatch(0, 1, 1, false, "", List.of(
                new ClusterEvent.ShardUpdated(31, 1))));
        int layerOffset = layer.length - 4 - 12;
        ByteBuffer.wrap(layer).putInt(layerOffset, 32);
        assertEquals(Reason.LAYER_OUT_OF_RANGE, refusal(reseal(layer)));
        byte[] hint = WireFormat.encode(new WireMessage.PrefetchHint(7, 1, List.of()));
        ByteBuffer.wrap(hint).putInt(12, 9);
        assertEquals(Reason.RANK_OUT_OF_RANGE, refusal(reseal(hint)));
    }

    @Test
    void negativeValuesAreRefused() {
        byte[] epoch = validBatch();
        ByteBuffer.wrap(epoch).putLong(16, -5);
        assertEquals(Reason.NEGATIVE_VALUE, refusal(reseal(epoch)));
        byte[] sequence = validBatch();
        ByteBuffer.wrap(sequence).putLong(24, 0);
        assertEquals(Reason.NEGATIVE_VALUE, refusal(reseal(sequence)));
        byte[] tokens = WireFormat.encode(new WireMessage.RankBatch(0, 1, 1, false, "", List.of(
                new ClusterEvent.BlockStored(new BlockHash(1, 1), Tier.CPU, 5))));
        ByteBuffer.wrap(tokens).putInt(tokens.length - 8, -5);
        assertEquals(Reason.NEGATIVE_VALUE, refusal(reseal(tokens)));
        byte[] position = WireFormat.encode(new WireMessage.RankBatch(0, 1, 1, false, "", List.of(
                new ClusterEvent.ShardEvicted(1, 5))));
        ByteBuffer.wrap(position).putLong(position.length - 12, -1);
        assertEquals(Reason.NEGATIVE_VALUE, refusal(reseal(position)));
        byte[] count = validBatch();
        int countOffset = 12 + 21 + "host-a".length();
        ByteBuffer.wrap(count).putInt(countOffset, -1);
        assertEquals(Reason.NEGATIVE_VALUE, refusal(reseal(count)));
    }

    @Test
    void unknownKindsTiersEventTypesAndLeftoversAreRefused() {
        byte[] kind = validBatch();
        kind[5] = 9;
        assertEquals(Reason.BAD_STRUCTURE, refusal(reseal(kind)));
        byte[] stored = WireFormat.encode(new WireMessage.RankBatch(0, 1, 1, false, "", List.of(
                new ClusterEvent.BlockStored(new BlockHash(1, 1), Tier.CPU, 5))));
        byte[] tier = stored.clone();
        tier[tier.length - 4 - 22 + 1] = 3;
        assertEquals(Reason.BAD_STRUCTURE, refusal(reseal(tier)));
        byte[] type = stored.clone();
        type[type.length - 4 - 22] = 77;
        assertEquals(Reason.BAD_STRUCTURE, refusal(reseal(type)));
        byte[] count = stored.clone();
        ByteBuffer.wrap(count).putInt(count.length - 4 - 22 - 4, 0); // says no events, 22 bytes follow
        assertEquals(Reason.BAD_STRUCTURE, refusal(reseal(count)));
        byte[] afterChecksum = java.util.Arrays.copyOf(stored, stored.length + 1);
        assertEquals(Reason.BAD_STRUCTURE, refusal(afterChecksum));
    }

    @Test
    void sizesAreBoundedBothWays() {
        assertEquals(Reason.TOO_LARGE, refusal(new byte[WireFormat.MAX_MESSAGE_BYTES + 1]));
        List<ClusterEvent> tooMany = new ArrayList<>();
        for (int i = 0; i < WireFormat.MAX_MESSAGE_BYTES / 17; i++) {
            tooMany.add(new ClusterEvent.BlockGone(new BlockHash(i, i)));
        }
        assertThrows(IllegalArgumentException.class, () -> WireFormat.encode(
                new WireMessage.RankBatch(0, 1, 1, false, "", tooMany)));
        assertThrows(IllegalArgumentException.class, () -> WireFormat.encode(
                new WireMessage.RankBatch(0, 1, 1, false, "x".repeat(256), List.of())));
        byte[] hugeCount = validBatch();
        ByteBuffer.wrap(hugeCount).putInt(12 + 21 + "host-a".length(), Integer.MAX_VALUE);
        assertEquals(Reason.TRUNCATED, refusal(reseal(hugeCount)));
    }
}
