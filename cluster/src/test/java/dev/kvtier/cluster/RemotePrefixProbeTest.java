package dev.kvtier.cluster;

import dev.kvtier.prefix.BlockHash;
import dev.kvtier.remote.InProcessRemoteBlockStore;
import dev.kvtier.remote.RemoteBlockStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The probe counts the run of leading blocks the store holds, under the caches' keys; a silent store is none. */
class RemotePrefixProbeTest {
    static final List<BlockHash> CHAIN = List.of(new BlockHash(1, 1), new BlockHash(1, 2), new BlockHash(1, 3),
            new BlockHash(1, 4));

    @Test
    void countsTheLeadingRunUnderTheNamespacesKeys() throws Exception {
        try (InProcessRemoteBlockStore store = new InProcessRemoteBlockStore()) {
            Map<String, byte[]> values = new HashMap<>();
            for (int i : new int[] {0, 1, 3}) {
                values.put("kvtier:model-a:" + CHAIN.get(i), new byte[1]);
            }
            values.put("kvtier:model-b:" + CHAIN.get(2), new byte[1]);
            store.putAll(values).get(5, TimeUnit.SECONDS);
            assertEquals(2, new RemotePrefixProbe(store, "model-a", 16, Duration.ofSeconds(5)).heldBlocks(CHAIN));
            assertEquals(0, new RemotePrefixProbe(store, "model-b", 16, Duration.ofSeconds(5)).heldBlocks(CHAIN));
            assertEquals(0, new RemotePrefixProbe(store, "model-a", 16, Duration.ofSeconds(5)).heldBlocks(List.of()));
        }
    }

    @Test
    void aStoreThatDoesNotAnswerHoldsNothingAfterTheTimeout() {
        RemoteBlockStore silent = new RemoteBlockStore() {
            @Override
            public CompletableFuture<boolean[]> containsAll(List<String> keys) {
                return new CompletableFuture<>();
            }

            @Override
            public CompletableFuture<Void> getAllInto(List<String> keys, ValueSink sink) {
                return new CompletableFuture<>();
            }

            @Override
            public CompletableFuture<Void> putAll(Map<String, byte[]> values) {
                return new CompletableFuture<>();
            }

            @Override
            public String describe() {
                return "silent";
            }

            @Override
            public void close() {
            }
        };
        long start = System.nanoTime();
        assertEquals(0, new RemotePrefixProbe(silent, "m", 16, Duration.ofMillis(200)).heldBlocks(CHAIN));
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2));
        assertThrows(IllegalArgumentException.class, () -> new RemotePrefixProbe(silent, "a:b", 16, Duration.ofSeconds(1)));
    }
}
