package dev.kvtier.remote;

import org.junit.jupiter.api.Test;

import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the in-process store adds to the contract: its byte budget, sharing by name, and opening by URI. */
class InProcessRemoteBlockStoreTest {

    private static <T> T answer(CompletableFuture<T> future) throws Exception {
        return future.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aFullBudgetEvictsTheOldestValuesFirst() throws Exception {
        try (InProcessRemoteBlockStore store = new InProcessRemoteBlockStore(300)) {
            for (int i = 0; i < 3; i++) {
                answer(store.putAll(Map.of("k" + i, new byte[100])));
            }
            answer(store.putAll(Map.of("k0", new byte[100]))); // replaced: now the newest
            answer(store.putAll(Map.of("k3", new byte[150])));
            assertArrayEquals(new boolean[] {true, false, false, true},
                    answer(store.containsAll(List.of("k0", "k1", "k2", "k3"))));
            assertEquals(250, store.storedBytes());
            assertEquals(2, store.evictions());
        }
    }

    @Test
    void aValueLargerThanTheBudgetIsNotKept() throws Exception {
        try (InProcessRemoteBlockStore store = new InProcessRemoteBlockStore(100)) {
            answer(store.putAll(Map.of("small", new byte[10])));
            answer(store.putAll(Map.of("huge", new byte[101])));
            assertArrayEquals(new boolean[] {true, false}, answer(store.containsAll(List.of("small", "huge"))));
        }
    }

    @Test
    void storesOfOneNameShareTheirContentsUntilTheLastCloses() throws Exception {
        byte[] value = {1, 2, 3};
        try (RemoteBlockStore a = RemoteBlockStores.open(URI.create("inprocess:shared-test"), Map.of())) {
            try (RemoteBlockStore b = RemoteBlockStores.open(URI.create("inprocess:shared-test"), Map.of())) {
                assertNotSame(a, b);
                answer(a.putAll(Map.of("x", value)));
                assertArrayEquals(value, answer(b.getAll(List.of("x"))).get(0));
            }
            assertArrayEquals(value, answer(a.getAll(List.of("x"))).get(0), "closing b dropped a's contents");
        }
        try (RemoteBlockStore again = RemoteBlockStores.open(URI.create("inprocess:shared-test"), Map.of())) {
            assertNull(answer(again.getAll(List.of("x"))).get(0));
        }
    }

    @Test
    void theBudgetComesFromTheUriOrTheSettingsAndMustAgreeWhileShared() {
        try (InProcessRemoteBlockStore store = (InProcessRemoteBlockStore) RemoteBlockStores.open(
                URI.create("inprocess:budgeted?maxBytes=1000"), Map.of())) {
            assertTrue(store.describe().contains("maxBytes=1000"), store.describe());
            IllegalArgumentException other = assertThrows(IllegalArgumentException.class,
                    () -> RemoteBlockStores.open(URI.create("inprocess:budgeted"), Map.of("maxBytes", "2000")));
            assertTrue(other.getMessage().contains("2000"), other.getMessage());
        }
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                () -> RemoteBlockStores.open(URI.create("inprocess:x"), Map.of("maxbytes", "1")));
        assertTrue(unknown.getMessage().contains("maxbytes"), unknown.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> RemoteBlockStores.open(URI.create("inprocess:x?maxBytes=lots"), Map.of()));
        assertThrows(IllegalArgumentException.class,
                () -> RemoteBlockStores.open(URI.create("inprocess:bad/name"), Map.of()));
    }

    @Test
    void anUnknownSchemeNamesItAndTheSchemesFound() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RemoteBlockStores.open(URI.create("memcached://user:secret@host:11211"), Map.of()));
        assertTrue(e.getMessage().contains("'memcached'"), e.getMessage());
        assertTrue(e.getMessage().contains("inprocess"), e.getMessage());
        assertTrue(!e.getMessage().contains("secret"), "the message shows the password: " + e.getMessage());
    }

    @Test
    void closeFailsThePendingFuturesWithIllegalState() throws Exception {
        InProcessRemoteBlockStore store = new InProcessRemoteBlockStore();
        byte[] value = new byte[4 << 20];
        List<CompletableFuture<?>> futures = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            Map<String, byte[]> values = new LinkedHashMap<>();
            values.put("p" + i, value);
            futures.add(store.putAll(values));
        }
        store.close();
        int failed = 0;
        for (CompletableFuture<?> future : futures) {
            assertTrue(future.isDone(), "a future still pending after close()");
            if (future.isCompletedExceptionally()) {
                failed++;
                ExecutionException e = assertThrows(ExecutionException.class, future::get);
                assertInstanceOf(IllegalStateException.class, e.getCause());
            }
        }
        assertTrue(failed > 0, "64 puts of 4 MiB were all done before close() returned; the test proves nothing");
    }
}
