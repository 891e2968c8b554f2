package dev.kvtier.cluster;

import dev.kvtier.prefix.BlockHash;
import dev.kvtier.remote.RemoteBlockStore;
import dev.kvtier.remote.RemoteBlockStores;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How many leading blocks of a chain a remote block store holds, for a process that has no cache of its own (the
 * cluster router, which treats a prefix in the store as available to every rank): one {@code containsAll} per call,
 * with the keys the caches of {@code namespace} write. It checks presence only: a rank fetching the blocks checks
 * every value (and a value that fails is a miss there). Thread-safe; the store stays its owner's.
 */
public final class RemotePrefixProbe {
    private final RemoteBlockStore store;
    private final String keyPrefix;
    private final long tokensPerBlock;
    private final Duration timeout;

    /**
     * A probe of {@code store} with the keys the caches of {@code namespace} write; it asks the store nothing yet.
     *
     * @param store the store the caches write through to (not closed by this probe)
     * @param namespace their namespace ({@code kvtier.remote.namespace})
     * @param tokensPerBlock tokens per block of their layout, {@code >= 1}
     * @param timeout the longest a call waits for the store's answer, {@code > 0}
     * @throws IllegalArgumentException naming the bad argument
     */
    public RemotePrefixProbe(RemoteBlockStore store, String namespace, long tokensPerBlock, Duration timeout) {
        if (store == null) {
            throw new IllegalArgumentException("store must not be null");
        }
        if (tokensPerBlock < 1) {
            throw new IllegalArgumentException("tokensPerBlock must be >= 1, was " + tokensPerBlock);
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be > 0, was " + timeout);
        }
        this.store = store;
        this.keyPrefix = RemoteBlockStores.blockKeyPrefix(namespace);
        this.tokensPerBlock = tokensPerBlock;
        this.timeout = timeout;
    }

    /**
     * Tokens per block of the caches' layout.
     *
     * @return the tokens each block holds, {@code >= 1}, as given to the constructor
     */
    public long tokensPerBlock() {
        return tokensPerBlock;
    }

    /**
     * How many leading blocks of {@code chain} the store holds now (a run from the first); 0 when it holds none, or
     * fails or does not answer within the timeout (never an exception for the store's failure).
     *
     * @param chain the prompt's block hashes, first block first; may be empty (0, the store not asked)
     * @return the length of the run of held blocks from the first, in {@code [0, chain.size()]}; an interrupt while
     *     waiting answers 0 and keeps the thread's interrupt status set
     * @throws IllegalArgumentException if {@code chain} or a hash in it is null
     */
    public int heldBlocks(List<BlockHash> chain) {
        if (chain == null) {
            throw new IllegalArgumentException("chain must not be null");
        }
        List<String> keys = new ArrayList<>(chain.size());
        for (int i = 0; i < chain.size(); i++) {
            BlockHash hash = chain.get(i);
            if (hash == null) {
                throw new IllegalArgumentException("chain[" + i + "] must not be null");
            }
            keys.add(RemoteBlockStores.blockKey(keyPrefix, hash.high(), hash.low()));
        }
        if (keys.isEmpty()) {
            return 0;
        }
        boolean[] held;
        try {
            held = store.containsAll(keys).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            return 0; // the store away is a miss here as everywhere
        }
        int run = 0;
        while (run < held.length && run < chain.size() && held[run]) {
            run++;
        }
        return run;
    }
}
