package dev.kvtier.tiering;

import dev.kvtier.RemoteRejection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The remote value format: a sealed value opens to its exact payload; every kind of bad value is refused with its
 * cause and writes nothing; and, fuzzed from fixed seeds (reproducible), no random value, truncation or mutation of a
 * valid value is ever served, and no hostile header makes the decoder allocate what it claims.
 */
class RemoteBlockFormatTest {
    static final byte[] KEY = "0123456789abcdef-deployment-key".getBytes(StandardCharsets.UTF_8);
    static final RemoteBlockFormat.Layout LAYOUT = new RemoteBlockFormat.Layout(256, 16, 2, 1);
    static final long HIGH = 0x1122334455667788L;
    static final long LOW = 0x99AABBCCDDEEFF00L;
    static final long PARENT_HIGH = 7;
    static final long PARENT_LOW = 8;

    private final RemoteBlockFormat format = new RemoteBlockFormat("model-a", KEY, LAYOUT, 1 << 20);

    private byte[] payload(long seed) {
        byte[] bytes = new byte[(int) LAYOUT.bytesPerBlock()];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    private byte[] sealed(RemoteBlockFormat with, byte[] payload) {
        byte[] value = with.newValue();
        System.arraycopy(payload, 0, value, with.payloadOffset(), payload.length);
        with.seal(value, HIGH, LOW, PARENT_HIGH, PARENT_LOW);
        return value;
    }

    /**
     * Opens {@code value} into a sentinel-filled buffer, as a wrapped array and again from the middle of a direct buffer (as a
     * store's receive buffer hands it over), checking both give the same answer; checks that a refusal wrote nothing
     * outside the payload's place, and nothing at all unless the payload was copied to be checked (a checksum or
     * signature refusal).
     */
    private RemoteRejection open(RemoteBlockFormat with, byte[] value) {
        int payloadBytes = (int) LAYOUT.bytesPerBlock();
        byte[] out = new byte[payloadBytes + 8];
        Arrays.fill(out, (byte) 0x5A);
        RemoteRejection rejection = with.open(ByteBuffer.wrap(value), HIGH, LOW, PARENT_HIGH, PARENT_LOW, out, 4);
        if (rejection != null) {
            boolean copiedToCheck = rejection == RemoteRejection.CHECKSUM || rejection == RemoteRejection.SIGNATURE;
            for (int i = 0; i < out.length; i++) {
                if (!copiedToCheck || i < 4 || i >= 4 + payloadBytes) {
                    assertEquals((byte) 0x5A, out[i], "a refused value wrote into the caller's buffer at " + i);
                }
            }
        }
        ByteBuffer received = ByteBuffer.allocateDirect(value.length + 16);
        received.position(7).put(value).limit(7 + value.length).position(7);
        byte[] outFromBuffer = new byte[payloadBytes + 8];
        assertEquals(rejection, with.open(received.asReadOnlyBuffer(), HIGH, LOW, PARENT_HIGH, PARENT_LOW,
                outFromBuffer, 4), "the same value in a direct buffer");
        assertEquals(7, received.position(), "opening moved the buffer's position");
        if (rejection == null) {
            assertArrayEquals(Arrays.copyOfRange(out, 4, 4 + payloadBytes),
                    Arrays.copyOfRange(outFromBuffer, 4, 4 + payloadBytes));
        }
        return rejection;
    }

    @Test
    void aSealedValueOpensToItsExactPayload() {
        byte[] payload = payload(1);
        byte[] value = sealed(format, payload);
        assertEquals(format.valueBytes(), value.length);
        byte[] out = new byte[payload.length + 8];
        assertNull(format.open(ByteBuffer.wrap(value), HIGH, LOW, PARENT_HIGH, PARENT_LOW, out, 4));
        assertArrayEquals(payload, Arrays.copyOfRange(out, 4, 4 + payload.length));
        assertEquals(0, out[0]);
        assertEquals(0, out[out.length - 1]);
    }

    @Test
    void keysAreNamespacedAndShort() {
        String key = format.keyOf(HIGH, LOW);
        assertEquals("kvtier:model-a:112233445566778899aabbccddeeff00", key);
        RemoteBlockFormat longest = new RemoteBlockFormat("n".repeat(128), KEY, LAYOUT, 1 << 20);
        assertTrue(longest.keyOf(HIGH, LOW).getBytes(StandardCharsets.UTF_8).length <= 512);
        assertThrows(IllegalArgumentException.class, () -> new RemoteBlockFormat("n".repeat(129), KEY, LAYOUT, 1 << 20));
        assertThrows(IllegalArgumentException.class, () -> new RemoteBlockFormat("a b", KEY, LAYOUT, 1 << 20));
        assertThrows(IllegalArgumentException.class, () -> new RemoteBlockFormat("a:b", KEY, LAYOUT, 1 << 20));
    }

    @Test
    void aShortKeyOrAMaximumBelowABlockIsRefused() {
        IllegalArgumentException shortKey = assertThrows(IllegalArgumentException.class,
                () -> new RemoteBlockFormat("a", new byte[15], LAYOUT, 1 << 20));
        assertTrue(shortKey.getMessage().contains("15"), shortKey.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new RemoteBlockFormat("a", KEY, LAYOUT, 300));
    }

    @Test
    void anotherNamespaceIsRefused() {
        RemoteBlockFormat other = new RemoteBlockFormat("model-b", KEY, LAYOUT, 1 << 20);
        assertEquals(RemoteRejection.NAMESPACE, open(format, sealed(other, payload(2))));
    }

    @Test
    void anotherLayoutIsRefused() {
        for (RemoteBlockFormat.Layout layout : new RemoteBlockFormat.Layout[] {
                new RemoteBlockFormat.Layout(256, 32, 2, 1), new RemoteBlockFormat.Layout(256, 16, 4, 1),
                new RemoteBlockFormat.Layout(256, 16, 2, 2), new RemoteBlockFormat.Layout(512, 16, 2, 1)}) {
            RemoteBlockFormat other = new RemoteBlockFormat("model-a", KEY, layout, 1 << 20);
            byte[] payload = new byte[(int) layout.bytesPerBlock()];
            assertEquals(RemoteRejection.LAYOUT, open(format, sealed(other, payload)), layout.toString());
        }
    }

    @Test
    void anotherKeyIsRefusedAsABadSignature() {
        byte[] otherKey = KEY.clone();
        otherKey[0] ^= 1;
        RemoteBlockFormat other = new RemoteBlockFormat("model-a", otherKey, LAYOUT, 1 << 20);
        assertEquals(RemoteRejection.SIGNATURE, open(format, sealed(other, payload(3))));
    }

    @Test
    void anotherBlockOrParentIsRefused() {
        byte[] value = sealed(format, payload(4));
        byte[] out = new byte[(int) LAYOUT.bytesPerBlock()];
        assertEquals(RemoteRejection.BLOCK,
                format.open(ByteBuffer.wrap(value), HIGH, LOW + 1, PARENT_HIGH, PARENT_LOW, out, 0));
        assertEquals(RemoteRejection.BLOCK,
                format.open(ByteBuffer.wrap(value), HIGH, LOW, PARENT_HIGH, PARENT_LOW + 1, out, 0));
    }

    @Test
    void aFlippedPayloadBitIsAChecksumFailureAndAFixedUpChecksumIsABadSignature() {
        byte[] value = sealed(format, payload(5));
        value[format.payloadOffset() + 17] ^= 0x10;
        assertEquals(RemoteRejection.CHECKSUM, open(format, value));
        // An attacker who also recomputes the CRC is caught by the signature.
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(value, format.payloadOffset(), (int) LAYOUT.bytesPerBlock());
        ByteBuffer.wrap(value).putInt(RemoteBlockFormat.OFFSET_CRC, (int) crc.getValue());
        assertEquals(RemoteRejection.SIGNATURE, open(format, value));
    }

    @Test
    void hostileLengthsAreRefusedWithoutAllocatingWhatTheyClaim() {
        for (long claimed : new long[] {-1, Long.MIN_VALUE, Long.MAX_VALUE, 1L << 40, Integer.MAX_VALUE}) {
            byte[] value = sealed(format, payload(6));
            ByteBuffer.wrap(value).putLong(RemoteBlockFormat.OFFSET_PAYLOAD_LENGTH, claimed);
            assertEquals(RemoteRejection.HOSTILE_LENGTH, open(format, value), "payload length " + claimed);
        }
        byte[] value = sealed(format, payload(6));
        ByteBuffer.wrap(value).putShort(RemoteBlockFormat.OFFSET_NAMESPACE_LENGTH, (short) 0xFFFF);
        assertEquals(RemoteRejection.HOSTILE_LENGTH, open(format, value));
    }

    @Test
    void aValueLongerThanTheMaximumIsRefusedUnread() {
        RemoteBlockFormat small = new RemoteBlockFormat("model-a", KEY, LAYOUT, format.valueBytes());
        byte[] tooLong = Arrays.copyOf(sealed(format, payload(7)), (int) format.valueBytes() + 1);
        assertEquals(RemoteRejection.TOO_LARGE, open(small, tooLong));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 71, 72, 103, 104, 200, 366})
    void aTruncatedValueIsRefused(int length) {
        byte[] value = sealed(format, payload(8));
        assertTrue(length < value.length);
        assertEquals(RemoteRejection.TRUNCATED, open(format, Arrays.copyOf(value, length)));
    }

    @Test
    void notAKvtierValueIsAFormatRefusal() {
        byte[] value = sealed(format, payload(9));
        value[0] = 'X';
        assertEquals(RemoteRejection.FORMAT, open(format, value));
        byte[] newer = sealed(format, payload(9));
        ByteBuffer.wrap(newer).putShort(4, (short) (RemoteBlockFormat.VERSION + 1));
        assertEquals(RemoteRejection.FORMAT, open(format, newer));
    }

    @Test
    void fuzzedRandomValuesAreNeverServed() {
        Random random = new Random(0xF0221L);
        for (int i = 0; i < 20_000; i++) {
            byte[] value = new byte[random.nextInt(2 * (int) format.valueBytes())];
            random.nextBytes(value);
            if (value.length >= 8 && random.nextBoolean()) { // get past the first check now and then
                ByteBuffer.wrap(value).putInt(0, RemoteBlockFormat.MAGIC).putShort(4, (short) 1);
            }
            assertNotNull(open(format, value), "a random value of " + value.length + " bytes was served");
        }
    }

    @Test
    void fuzzedMutationsAndTruncationsOfAValidValueAreNeverServed() {
        Random random = new Random(0xBADC0DEL);
        byte[] valid = sealed(format, payload(10));
        for (int i = 0; i < 20_000; i++) {
            byte[] value;
            if (random.nextInt(4) == 0) {
                value = Arrays.copyOf(valid, random.nextInt(valid.length));
            } else {
                value = valid.clone();
                int changes = 1 + random.nextInt(4);
                boolean changed = false;
                for (int c = 0; c < changes; c++) {
                    int at = random.nextInt(value.length);
                    byte before = value[at];
                    value[at] = (byte) random.nextInt(256);
                    changed |= value[at] != before;
                }
                if (!changed) {
                    continue;
                }
            }
            assertNotNull(open(format, value), "mutation " + i + " was served");
        }
    }
}
