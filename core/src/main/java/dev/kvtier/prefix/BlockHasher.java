package dev.kvtier.prefix;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The reference hasher of KV blocks: a block's {@link BlockHash} is a chained hash of its parent's hash and
 * its own token ids, so equal prefixes give equal blocks and a block's hash names its whole prefix.
 *
 * <h2>Definition (version 1; a wire format, never changed in place)</h2>
 * <pre>
 *   hash(parent, tokens) = first 16 bytes of SHA-256(message)
 *
 *   message = "kvtier/block-hash/v1"     20 bytes, US-ASCII, the domain tag (no terminator)
 *           | parent                     16 bytes: parent.high big-endian, then parent.low big-endian;
 *                                        all zeros ({@link BlockHash#ROOT}) for a chain's first block
 *           | n                          4 bytes, big-endian signed int: the number of tokens in this block
 *           | tokens[0] .. tokens[n-1]   4 bytes each, big-endian two's-complement int
 *
 *   result  = BlockHash(high = digest bytes 0..7 big-endian, low = digest bytes 8..15 big-endian)
 * </pre>
 * SHA-256 is a JDK primitive on every Java platform (required by the {@link MessageDigest} contract), so
 * the same hash comes out on every JVM, host and byte order. The token count makes a block of {@code n}
 * tokens differ from the same tokens cut differently; the tag makes these hashes differ from any other
 * use of SHA-256 over token ids. A later definition gets a new tag ({@code v2}) rather than a change here.
 * Nothing else (model, LoRA adapter, multimodal inputs) goes in: a runtime that must keep those apart
 * gives each such namespace its own first parent instead of {@link BlockHash#ROOT}, its namespace root:
 * <pre>
 *   namespaceRoot(name) = first 16 bytes of SHA-256(message), read as above
 *
 *   message = "kvtier/block-namespace/v1"   25 bytes, US-ASCII, the domain tag (no terminator)
 *           | n                            4 bytes, big-endian signed int: the length of name in UTF-8 bytes
 *           | name                         n bytes, UTF-8
 * </pre>
 * A namespace root is a parent only, never a block: its own tag keeps it from equalling any block's hash.
 * The name is the runtime's (say {@code "meta-llama/Llama-3.1-8B@main"} or
 * {@code "meta-llama/Llama-3.1-8B@main+lora:sql-v2"}); kvtier only hashes it. Decided so (rather than hashing
 * a namespace into every block) because the chain already carries it: one hash per chain, and the block
 * definition stays the one other runtimes use.
 *
 * <h2>Use</h2>
 * Not thread-safe: an instance keeps one {@link MessageDigest} and a scratch buffer; use one per thread
 * (creating one costs about a microsecond). Token arrays are only read, never kept.
 */
public final class BlockHasher {

    /** The version-1 domain tag, the first bytes of every hashed message. */
    public static final String DOMAIN_TAG = "kvtier/block-hash/v1";

    /** The version-1 domain tag of namespace roots ({@link #namespaceRoot}). */
    public static final String NAMESPACE_TAG = "kvtier/block-namespace/v1";

    private static final byte[] TAG = DOMAIN_TAG.getBytes(StandardCharsets.US_ASCII);

    private final MessageDigest sha256;
    private byte[] scratch = new byte[4 * 512];

    /** A hasher with its own SHA-256 digest. */
    public BlockHasher() {
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            // Every Java platform must provide SHA-256 (MessageDigest's Javadoc): this is a broken JDK.
            throw new IllegalStateException("this JDK has no SHA-256 MessageDigest", e);
        }
    }

    /**
     * The first parent of every chain in namespace {@code name} (a model, a model with a LoRA adapter), as
     * defined in the class comment. A pure function: thread-safe, the same on every JVM and host.
     *
     * @param name the namespace, compared as UTF-8 bytes (case matters); not empty
     * @return the parent to hash the first block of the namespace's chains with; not a block (never stored or cached)
     * @throws IllegalArgumentException when {@code name} is null or empty
     */
    public static BlockHash namespaceRoot(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("a namespace name must not be null or empty, was "
                    + (name == null ? "null" : "\"\""));
        }
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        byte[] length = new byte[4];
        putInt(length, 0, utf8.length);
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JDK has no SHA-256 MessageDigest", e);
        }
        digest.update(NAMESPACE_TAG.getBytes(StandardCharsets.US_ASCII));
        digest.update(length);
        digest.update(utf8);
        return BlockHash.fromBytes(digest.digest(), 0);
    }

    /**
     * The hash of a block holding all of {@code tokens} whose parent is {@code parent}.
     *
     * @param parent the hash of the block before this one, or {@link BlockHash#ROOT} for a chain's first block
     * @param tokens the block's token ids, in order; not kept
     * @return the block's hash
     */
    public BlockHash hash(BlockHash parent, int... tokens) {
        return hash(parent, tokens, 0, tokens == null ? 0 : tokens.length);
    }

    /**
     * The hash of a block holding {@code tokens[from .. to)} whose parent is {@code parent}
     * ({@link BlockHash#ROOT} for a chain's first block).
     *
     * @param parent the hash of the block before this one, or {@link BlockHash#ROOT} for a chain's first block
     * @param tokens the array holding the block's token ids; not kept
     * @param from   the index of the block's first token, inclusive
     * @param to     the index after its last token
     * @return the block's hash
     * @throws IllegalArgumentException  when {@code parent} or {@code tokens} is null
     * @throws IndexOutOfBoundsException when {@code [from, to)} is not within {@code tokens}
     */
    public BlockHash hash(BlockHash parent, int[] tokens, int from, int to) {
        if (parent == null) {
            throw new IllegalArgumentException("parent must not be null (use BlockHash.ROOT for a chain's first block)");
        }
        if (tokens == null) {
            throw new IllegalArgumentException("tokens must not be null");
        }
        Objects.checkFromToIndex(from, to, tokens.length);
        int n = to - from;
        int size = BlockHash.BYTES + 4 + 4 * n;
        if (scratch.length < size) {
            scratch = new byte[Math.max(size, 2 * scratch.length)];
        }
        parent.writeTo(scratch, 0);
        putInt(scratch, BlockHash.BYTES, n);
        for (int i = 0; i < n; i++) {
            putInt(scratch, BlockHash.BYTES + 4 + 4 * i, tokens[from + i]);
        }
        sha256.reset();
        sha256.update(TAG);
        sha256.update(scratch, 0, size);
        return BlockHash.fromBytes(sha256.digest(), 0);
    }

    /**
     * Cuts {@code tokens} into blocks of {@code tokensPerBlock} and returns their chained hashes, the first
     * block's parent being {@link BlockHash#ROOT}. A trailing partial block (the last
     * {@code tokens.length % tokensPerBlock} tokens) is <em>not</em> hashed: it is not a block yet, and its
     * hash would change with every token appended to it.
     *
     * @param tokens         the sequence's token ids, from its first position; not kept
     * @param tokensPerBlock tokens in a block, {@code >= 1}
     * @return a new list of {@code tokens.length / tokensPerBlock} hashes, in chain order; empty when no block is
     *         full
     * @throws IllegalArgumentException naming the value when {@code tokensPerBlock < 1}
     */
    public List<BlockHash> chain(int[] tokens, int tokensPerBlock) {
        return chain(BlockHash.ROOT, tokens, tokensPerBlock);
    }

    /**
     * As {@link #chain(int[], int)}, continuing a chain: the first block's parent is {@code parent}
     * (the hash of the block just before {@code tokens[0]}).
     *
     * @param parent         the hash of the block just before {@code tokens[0]}, or {@link BlockHash#ROOT}
     * @param tokens         the token ids that follow it; not kept
     * @param tokensPerBlock tokens in a block, {@code >= 1}
     * @return a new list of {@code tokens.length / tokensPerBlock} hashes, in chain order; empty when no block is
     *         full
     * @throws IllegalArgumentException naming the value when {@code tokensPerBlock < 1}, or the argument when
     *                                  {@code parent} or {@code tokens} is null
     */
    public List<BlockHash> chain(BlockHash parent, int[] tokens, int tokensPerBlock) {
        if (parent == null) {
            throw new IllegalArgumentException("parent must not be null (use BlockHash.ROOT for a chain's first block)");
        }
        if (tokens == null) {
            throw new IllegalArgumentException("tokens must not be null");
        }
        if (tokensPerBlock < 1) {
            throw new IllegalArgumentException("tokensPerBlock must be at least 1, got " + tokensPerBlock);
        }
        int blocks = tokens.length / tokensPerBlock;
        List<BlockHash> hashes = new ArrayList<>(blocks);
        BlockHash previous = parent;
        for (int b = 0; b < blocks; b++) {
            previous = hash(previous, tokens, b * tokensPerBlock, (b + 1) * tokensPerBlock);
            hashes.add(previous);
        }
        return List.copyOf(hashes);
    }

    private static void putInt(byte[] bytes, int offset, int value) {
        bytes[offset] = (byte) (value >>> 24);
        bytes[offset + 1] = (byte) (value >>> 16);
        bytes[offset + 2] = (byte) (value >>> 8);
        bytes[offset + 3] = (byte) value;
    }
}
