package dev.kvtier.prefix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HexFormat;

import org.junit.jupiter.api.Test;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

class BlockHashTest {

    @Property
    void aBlocksKeyIsThePrefixAndItsHexDigits(@ForAll long high, @ForAll long low) {
        BlockHash h = new BlockHash(high, low);
        assertEquals(PrefixBlockCache.KEY_PREFIX + HexFormat.of().toHexDigits(high) + HexFormat.of().toHexDigits(low),
                PrefixBlockCache.keyOf(h));
    }

    @Test
    void keysOfExtremeHashes() {
        assertEquals("kvblock:0000000000000000ffffffffffffffff", PrefixBlockCache.keyOf(new BlockHash(0, -1)));
        assertEquals("kvblock:8000000000000000000000000000000f", PrefixBlockCache.keyOf(new BlockHash(Long.MIN_VALUE, 15)));
    }

    @Test
    void bytesAreBigEndianHighThenLow() {
        BlockHash h = new BlockHash(0x0102030405060708L, 0x090A0B0C0D0E0F10L);
        assertArrayEquals(HexFormat.of().parseHex("0102030405060708090a0b0c0d0e0f10"), h.toBytes());
        assertEquals("0102030405060708090a0b0c0d0e0f10", h.toString());
        assertEquals(h, BlockHash.fromBytes(h.toBytes()));
        assertEquals(h, BlockHash.fromHex("0102030405060708090A0B0C0D0E0F10"));
        assertEquals("00000000000000000000000000000000", BlockHash.ROOT.toString());
        byte[] framed = new byte[20];
        h.writeTo(framed, 3);
        assertEquals(h, BlockHash.fromBytes(framed, 3));
        assertEquals(0, framed[0]);
        assertEquals(0, framed[19]);
    }

    @Test
    void orderIsUnsignedLexicographicOverTheBytes() {
        // A negative high half is a byte 0x80 or above: after every positive one.
        BlockHash small = new BlockHash(0x7FFF_FFFF_FFFF_FFFFL, -1);
        BlockHash large = new BlockHash(0x8000_0000_0000_0000L, 0);
        assertTrue(small.compareTo(large) < 0);
        assertTrue(new BlockHash(5, 1).compareTo(new BlockHash(5, -1)) < 0);
        assertEquals(0, new BlockHash(5, 7).compareTo(new BlockHash(5, 7)));
    }

    @Property(tries = 200)
    void textBytesAndOrderAgree(@ForAll long h1, @ForAll long l1, @ForAll long h2, @ForAll long l2) {
        BlockHash a = new BlockHash(h1, l1);
        BlockHash b = new BlockHash(h2, l2);
        assertEquals(a, BlockHash.fromHex(a.toString()));
        assertEquals(a, BlockHash.fromBytes(a.toBytes()));
        assertEquals(Integer.signum(Arrays.compareUnsigned(a.toBytes(), b.toBytes())), Integer.signum(a.compareTo(b)));
        assertEquals(Integer.signum(a.toString().compareTo(b.toString())), Integer.signum(a.compareTo(b)));
    }

    @Test
    void badTextAndLengthsAreNamed() {
        IllegalArgumentException shortText = assertThrows(IllegalArgumentException.class, () -> BlockHash.fromHex("abc"));
        assertTrue(shortText.getMessage().contains("'abc'"), shortText.getMessage());
        IllegalArgumentException notHex = assertThrows(IllegalArgumentException.class,
                () -> BlockHash.fromHex("0123456789abcdef0123456789abcdeg"));
        assertTrue(notHex.getMessage().contains("character 31 is 'g'"), notHex.getMessage());
        // A sign would be taken by a lenient number parser: not here.
        assertThrows(IllegalArgumentException.class, () -> BlockHash.fromHex("+123456789abcdef0123456789abcdef"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> BlockHash.fromBytes(new byte[15]))
                .getMessage().contains("got 15"));
        assertThrows(IndexOutOfBoundsException.class, () -> BlockHash.fromBytes(new byte[16], 1));
    }
}
