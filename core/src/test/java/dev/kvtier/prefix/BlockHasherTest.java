package dev.kvtier.prefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The version-1 definition against fixed vectors. These hashes travel between hosts and versions: a change
 * here is a wire-format change, and must come with a new domain tag, not new expected values.
 */
class BlockHasherTest {
    private final BlockHasher hasher = new BlockHasher();

    /**
     * Cross-checked outside Java. The message for tokens [1, 2, 3, 4] after ROOT is the 20 tag bytes, 16 zero
     * bytes, the count 4 and the four ids, each a 4-byte big-endian int:
     * <pre>
     * printf 'kvtier/block-hash/v1\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00\x04' \
     *   | sha256sum | cut -c1-32
     * 0d1bd004d8f28ec6db6f1d68a6812672
     * </pre>
     * and the same with Python: {@code hashlib.sha256(b"kvtier/block-hash/v1" + bytes(16) + struct.pack(">5i", 4, 1, 2, 3, 4)).hexdigest()[:32]}.
     */
    @Test
    void theVectorCheckedWithSha256sum() {
        assertEquals("0d1bd004d8f28ec6db6f1d68a6812672", hasher.hash(BlockHash.ROOT, 1, 2, 3, 4).toString());
        assertEquals(new BlockHash(0x0d1bd004d8f28ec6L, 0xdb6f1d68a6812672L), hasher.hash(BlockHash.ROOT, 1, 2, 3, 4));
    }

    /** Computed once (Python hashlib over the definition's bytes) and fixed here. */
    @Test
    void fixedVectors() {
        assertEquals("3b749d63d4dfb87e40d1fb35fe24ef5b", hasher.hash(BlockHash.ROOT).toString(), "empty block");
        assertEquals("98c86a663e36c7a528dd7feeefbd7a63",
                hasher.hash(BlockHash.ROOT, -1, Integer.MAX_VALUE, Integer.MIN_VALUE).toString(),
                "ids are two's complement, big-endian");
        BlockHash first = hasher.hash(BlockHash.ROOT, 0, 1, 2, 3);
        assertEquals("b235b5dd0572c26cabfc5299ce0bc055", first.toString());
        assertEquals("8a852ce35561290e5fd6e01ca6fdb30a", hasher.hash(first, 4, 5, 6, 7).toString(), "chained");
    }

    @Test
    void aChainOfFullBlocksLeavesTheTrailingPartialBlockUnhashed() {
        int[] tokens = new int[1029];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = (int) ((long) i * 7919 % 128256);
        }
        List<BlockHash> chain = hasher.chain(tokens, 512);
        assertEquals(List.of(BlockHash.fromHex("0d7e86fcb67fcc486cce9bb728f7f1ca"),
                BlockHash.fromHex("c9b6ded087614d12fd7c978b58cda890")), chain);
        assertEquals(List.of(BlockHash.fromHex("b235b5dd0572c26cabfc5299ce0bc055"),
                        BlockHash.fromHex("8a852ce35561290e5fd6e01ca6fdb30a")),
                hasher.chain(new int[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 4), "8 of 10 tokens hashed");
        assertEquals(List.of(), hasher.chain(new int[3], 4));
        // Continuing a chain from its last hash gives the same blocks as hashing the whole.
        int[] tail = java.util.Arrays.copyOfRange(tokens, 512, 1024);
        assertEquals(chain.subList(1, 2), hasher.chain(chain.get(0), tail, 512));
    }

    @Test
    void equalPrefixesShareBlocksAndADifferenceChangesEveryLaterBlock() {
        int[] a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        int[] b = a.clone();
        b[5] = 99;
        List<BlockHash> ha = hasher.chain(a, 4);
        List<BlockHash> hb = hasher.chain(b, 4);
        assertEquals(ha.get(0), hb.get(0));
        assertNotEquals(ha.get(1), hb.get(1));
        assertNotEquals(ha.get(2), hb.get(2), "block 3's tokens are equal, its parent is not");
        // The count is hashed: four tokens as one block differ from the same tokens after an empty block.
        assertNotEquals(hasher.hash(BlockHash.ROOT, 1, 2, 3, 4), hasher.hash(hasher.hash(BlockHash.ROOT), 1, 2, 3, 4));
    }

    @Test
    void aHasherIsReusableAndRangesHashLikeCopies() {
        int[] big = new int[5000];
        for (int i = 0; i < big.length; i++) {
            big[i] = i * 31;
        }
        BlockHash whole = hasher.hash(BlockHash.ROOT, big);
        assertEquals(whole, new BlockHasher().hash(BlockHash.ROOT, big), "the scratch buffer grew and stayed right");
        assertEquals(hasher.hash(BlockHash.ROOT, 62, 93), hasher.hash(BlockHash.ROOT, big, 2, 4));
    }

    @Test
    void namespaceRootsAreFixedVectorsComputedIndependently() {
        // Computed with Python's hashlib over the bytes the class comment draws:
        // sha256(b"kvtier/block-namespace/v1" + struct.pack(">i", len(utf8)) + utf8)[:16]
        assertEquals("7d0d18e87eac02873cd93f4e72185078", BlockHasher.namespaceRoot("meta-llama/Llama-3.1-8B@main").toString());
        assertEquals("e76b2622be0b03cfa5cd51b13ab4f0cb", BlockHasher.namespaceRoot("m").toString());
        assertEquals("81b97a097474d985435eace244aaea1a", BlockHasher.namespaceRoot("\u00e9").toString(), "UTF-8, not UTF-16 or Latin-1");
        // The first block of a chain under that namespace: the same block definition, another first parent.
        assertEquals("ef6cd452391c1ee9c61f7171af434d02",
                hasher.hash(BlockHasher.namespaceRoot("meta-llama/Llama-3.1-8B@main"), 1, 2, 3, 4).toString());
        assertNotEquals(hasher.hash(BlockHash.ROOT, 1, 2, 3, 4),
                hasher.hash(BlockHasher.namespaceRoot("m"), 1, 2, 3, 4), "a namespace separates equal token ids");
        assertThrows(IllegalArgumentException.class, () -> BlockHasher.namespaceRoot(""));
        assertThrows(IllegalArgumentException.class, () -> BlockHasher.namespaceRoot(null));
    }

    @Test
    void badArgumentsAreNamed() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> hasher.chain(new int[8], 0))
                .getMessage().contains("got 0"));
        assertThrows(IllegalArgumentException.class, () -> hasher.hash(null, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> hasher.hash(BlockHash.ROOT, new int[4], 3, 5));
    }
}
