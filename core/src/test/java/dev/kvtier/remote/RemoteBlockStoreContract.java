package dev.kvtier.remote;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The promises of {@link RemoteBlockStore} (its Javadoc), run against every implementation: subclasses only supply a
 * fresh, empty, open store (and, where the engine is slower than memory, a longer {@link #answerTimeout()}).
 * Round trips of empty, 1-byte and multi-MiB values; absent keys answered null / false; answers in the order of the
 * keys; a put replaces; many callers at once; a closed store throws {@link IllegalStateException} and leaves no
 * future pending; a call returns before its work is done (measured on the call's return, not the future's); the
 * caller's arrays are neither changed nor aliased, nor are the returned ones; {@code getAllInto} hands every key's
 * value over exactly once, read-only, null where absent, and a sink that throws fails the call and nothing else.
 */
public abstract class RemoteBlockStoreContract {

    /** The largest value the round trip checks: 4 MiB, the biggest block size the bench measures. */
    protected static final int LARGE_VALUE_BYTES = 4 << 20;

    private RemoteBlockStore store;
    private final String keyPrefix = "contract:" + Long.toHexString(System.nanoTime()) + ":";

    /** A new, empty, open store; the contract closes it. */
    protected abstract RemoteBlockStore newStore();

    /** How long the contract waits for one answer; an engine over the network may need more than memory does. */
    protected Duration answerTimeout() {
        return Duration.ofSeconds(20);
    }

    /**
     * The longest a call may take to return (not its future): the median of several calls that each move
     * {@link #LARGE_VALUE_BYTES} times 8 is compared with it. Far below what moving those bytes takes on any engine.
     */
    protected Duration callReturnBound() {
        return Duration.ofMillis(20);
    }

    @BeforeEach
    public final void openStore() {
        store = newStore();
    }

    @AfterEach
    public final void closeStore() {
        store.close();
    }

    /** The store under test. */
    protected final RemoteBlockStore store() {
        return store;
    }

    /** A key unique to this test run (stores shared between runs, such as a Redis server, keep old keys). */
    protected final String key(String name) {
        return keyPrefix + name;
    }

    protected final <T> T answer(CompletableFuture<T> future) {
        try {
            return future.get(answerTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        } catch (ExecutionException e) {
            throw new AssertionError("store failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("no answer within " + answerTimeout(), e);
        }
    }

    protected static byte[] randomBytes(int length, long seed) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    @Test
    public void emptyOneByteAndMultiMebibyteValuesRoundTripExactly() {
        Map<String, byte[]> values = new LinkedHashMap<>();
        values.put(key("empty"), new byte[0]);
        values.put(key("one"), new byte[] {(byte) 0xA5});
        values.put(key("large"), randomBytes(LARGE_VALUE_BYTES, 1));
        answer(store.putAll(values));

        List<String> keys = List.copyOf(values.keySet());
        List<byte[]> got = answer(store.getAll(keys));
        assertEquals(3, got.size());
        for (int i = 0; i < keys.size(); i++) {
            assertArrayEquals(values.get(keys.get(i)), got.get(i), keys.get(i));
        }
        assertArrayEquals(new boolean[] {true, true, true}, answer(store.containsAll(keys)));
    }

    @Test
    public void getAllIntoHandsEachValueOverOnceReadOnlyAndNullWhereAbsent() {
        Map<String, byte[]> values = new LinkedHashMap<>();
        values.put(key("into-empty"), new byte[0]);
        values.put(key("into-one"), new byte[] {(byte) 0x3C});
        values.put(key("into-large"), randomBytes(LARGE_VALUE_BYTES, 11));
        answer(store.putAll(values));
        List<String> keys = List.of(key("into-large"), key("into-absent"), key("into-empty"), key("into-one"),
                key("into-large"));
        AtomicIntegerArray calls = new AtomicIntegerArray(keys.size());
        byte[][] got = new byte[keys.size()][];
        boolean[] readOnly = new boolean[keys.size()];
        answer(store.getAllInto(keys, (index, value) -> {
            calls.incrementAndGet(index);
            if (value != null) {
                readOnly[index] = value.isReadOnly();
                byte[] copy = new byte[value.remaining()];
                value.get(copy);
                got[index] = copy;
            }
        }));
        for (int i = 0; i < keys.size(); i++) {
            assertEquals(1, calls.get(i), "calls for index " + i);
            if (keys.get(i).equals(key("into-absent"))) {
                assertNull(got[i], "an absent key is handed over as null");
            } else {
                assertArrayEquals(values.get(keys.get(i)), got[i], keys.get(i) + " at index " + i);
                assertTrue(readOnly[i], "the value at index " + i + " was handed over writable");
            }
        }
    }

    @Test
    public void aSinkThatThrowsFailsItsCallWithWhatItThrewAndNothingElse() {
        answer(store.putAll(Map.of(key("t0"), new byte[] {1}, key("t1"), new byte[] {2})));
        IllegalStateException thrown = new IllegalStateException("the sink refuses index 1");
        CompletableFuture<Void> failing = store.getAllInto(List.of(key("t0"), key("t1")), (index, value) -> {
            if (index == 1) {
                throw thrown;
            }
        });
        ExecutionException failure = assertThrows(ExecutionException.class,
                () -> failing.get(answerTimeout().toMillis(), TimeUnit.MILLISECONDS));
        boolean found = false;
        for (Throwable cause = failure.getCause(); cause != null && !found; cause = cause.getCause()) {
            found = cause == thrown;
        }
        assertTrue(found, "the failure does not carry what the sink threw: " + failure.getCause());
        assertArrayEquals(new byte[] {2}, answer(store.getAll(List.of(key("t1")))).get(0),
                "the store answers the next call");
    }

    @Test
    public void absentKeysAreNullAndFalse() {
        List<String> keys = List.of(key("absent-1"), key("absent-2"));
        List<byte[]> got = answer(store.getAll(keys));
        assertEquals(2, got.size());
        assertNull(got.get(0));
        assertNull(got.get(1));
        assertArrayEquals(new boolean[] {false, false}, answer(store.containsAll(keys)));
    }

    @Test
    public void emptyCallsAnswerEmpty() {
        assertEquals(0, answer(store.getAll(List.of())).size());
        assertEquals(0, answer(store.containsAll(List.of())).length);
        answer(store.putAll(Map.of()));
    }

    @Test
    public void answersFollowTheOrderOfTheKeys() {
        Map<String, byte[]> values = new HashMap<>();
        for (int i = 0; i < 32; i += 2) {
            values.put(key("k" + i), randomBytes(100 + i, i));
        }
        answer(store.putAll(values));
        List<String> keys = new ArrayList<>();
        for (int i = 31; i >= 0; i--) { // reversed, with every other key absent
            keys.add(key("k" + i));
        }
        List<byte[]> got = answer(store.getAll(keys));
        boolean[] held = answer(store.containsAll(keys));
        assertEquals(keys.size(), got.size());
        assertEquals(keys.size(), held.length);
        for (int i = 0; i < keys.size(); i++) {
            byte[] expected = values.get(keys.get(i));
            assertEquals(expected != null, held[i], keys.get(i));
            if (expected == null) {
                assertNull(got.get(i), keys.get(i));
            } else {
                assertArrayEquals(expected, got.get(i), keys.get(i));
            }
        }
    }

    @Test
    public void aDuplicateKeyIsAnsweredAtEachPosition() {
        byte[] value = randomBytes(10, 7);
        answer(store.putAll(Map.of(key("dup"), value)));
        List<String> keys = List.of(key("dup"), key("none"), key("dup"));
        List<byte[]> got = answer(store.getAll(keys));
        assertArrayEquals(value, got.get(0));
        assertNull(got.get(1));
        assertArrayEquals(value, got.get(2));
        assertArrayEquals(new boolean[] {true, false, true}, answer(store.containsAll(keys)));
    }

    @Test
    public void putAllReplacesWhatWasThere() {
        answer(store.putAll(Map.of(key("r"), randomBytes(1000, 1))));
        byte[] second = randomBytes(10, 2);
        answer(store.putAll(Map.of(key("r"), second)));
        assertArrayEquals(second, answer(store.getAll(List.of(key("r")))).get(0));
    }

    @Test
    public void keysOfFiveHundredTwelveUtf8BytesWork() {
        String prefix = key("");
        String longest = prefix + "é".repeat((512 - prefix.length()) / 2) + (prefix.length() % 2 == 0 ? "" : "x");
        assertEquals(512, longest.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
        byte[] value = randomBytes(33, 3);
        answer(store.putAll(Map.of(longest, value)));
        assertArrayEquals(value, answer(store.getAll(List.of(longest))).get(0));
    }

    @Test
    public void nullArgumentsAreIllegalArguments() {
        assertThrows(IllegalArgumentException.class, () -> store.getAll(null));
        assertThrows(IllegalArgumentException.class, () -> store.containsAll(null));
        assertThrows(IllegalArgumentException.class, () -> store.putAll(null));
        assertThrows(IllegalArgumentException.class, () -> store.getAll(Arrays.asList(key("a"), null)));
        assertThrows(IllegalArgumentException.class, () -> store.getAllInto(null, (index, value) -> { }));
        assertThrows(IllegalArgumentException.class, () -> store.getAllInto(List.of(key("a")), null));
        Map<String, byte[]> nullValue = new HashMap<>();
        nullValue.put(key("a"), null);
        assertThrows(IllegalArgumentException.class, () -> store.putAll(nullValue));
    }

    @Test
    public void theCallersArraysAreNeitherChangedNorAliased() {
        byte[] value = randomBytes(4096, 11);
        byte[] copy = value.clone();
        answer(store.putAll(Map.of(key("a"), value)));
        assertArrayEquals(copy, value, "putAll changed the caller's array");

        Arrays.fill(value, (byte) 0); // the caller's again once the future completed
        byte[] got = answer(store.getAll(List.of(key("a")))).get(0);
        assertArrayEquals(copy, got, "the store kept a reference to the caller's array");

        Arrays.fill(got, (byte) 1); // a returned array is the caller's too
        assertArrayEquals(copy, answer(store.getAll(List.of(key("a")))).get(0),
                "a returned array aliases the stored value");
    }

    @Test
    public void concurrentCallersEachSeeTheirOwnValues() throws Exception {
        int threads = 8;
        int rounds = 20;
        ExecutorService callers = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int caller = t;
                done.add(callers.submit(() -> {
                    for (int round = 0; round < rounds; round++) {
                        Map<String, byte[]> values = new LinkedHashMap<>();
                        for (int k = 0; k < 4; k++) {
                            values.put(key("c" + caller + "-" + round + "-" + k),
                                    randomBytes(1 + 997 * k, caller * 1000L + round * 10 + k));
                        }
                        CompletableFuture<Void> put = store.putAll(values);
                        answer(put);
                        List<String> keys = List.copyOf(values.keySet());
                        List<byte[]> got = answer(store.getAll(keys));
                        for (int k = 0; k < keys.size(); k++) {
                            assertArrayEquals(values.get(keys.get(k)), got.get(k), keys.get(k));
                        }
                        boolean[] held = answer(store.containsAll(keys));
                        for (boolean h : held) {
                            assertTrue(h);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> future : done) {
                future.get(answerTimeout().toMillis() * 4, TimeUnit.MILLISECONDS);
            }
        } finally {
            callers.shutdownNow();
        }
    }

    @Test
    public void callsReturnBeforeTheirWorkIsDone() {
        Map<String, byte[]> values = new LinkedHashMap<>();
        for (int k = 0; k < 8; k++) {
            values.put(key("big" + k), randomBytes(LARGE_VALUE_BYTES, k));
        }
        List<String> keys = List.copyOf(values.keySet());
        int calls = 5;
        long[] putReturn = new long[calls];
        long[] getReturn = new long[calls];
        List<CompletableFuture<?>> futures = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            long start = System.nanoTime();
            futures.add(store.putAll(values));
            putReturn[i] = System.nanoTime() - start;
            start = System.nanoTime();
            futures.add(store.getAll(keys));
            getReturn[i] = System.nanoTime() - start;
        }
        for (CompletableFuture<?> future : futures) {
            answer(future);
        }
        Arrays.sort(putReturn);
        Arrays.sort(getReturn);
        long bound = callReturnBound().toNanos();
        assertTrue(putReturn[calls / 2] < bound, "putAll of 32 MiB took a median "
                + putReturn[calls / 2] / 1000 + " us to return, bound " + callReturnBound());
        assertTrue(getReturn[calls / 2] < bound, "getAll of 32 MiB took a median "
                + getReturn[calls / 2] / 1000 + " us to return, bound " + callReturnBound());
    }

    @Test
    public void closedStoreThrowsIllegalStateAndCloseIsIdempotent() {
        store.close();
        store.close();
        assertThrows(IllegalStateException.class, () -> store.getAll(List.of(key("a"))));
        assertThrows(IllegalStateException.class, () -> store.getAllInto(List.of(key("a")), (index, value) -> { }));
        assertThrows(IllegalStateException.class, () -> store.containsAll(List.of(key("a"))));
        assertThrows(IllegalStateException.class, () -> store.putAll(Map.of(key("a"), new byte[1])));
        assertNotNull(store.describe());
    }

    @Test
    public void closeLeavesNoFuturePending() throws Exception {
        byte[] value = randomBytes(LARGE_VALUE_BYTES, 5);
        List<CompletableFuture<?>> futures = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            futures.add(store.putAll(Map.of(key("p" + i), value)));
            futures.add(store.getAll(List.of(key("p" + i))));
        }
        store.close();
        for (CompletableFuture<?> future : futures) {
            try {
                future.get(answerTimeout().toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                assertNotNull(e.getCause()); // failing is allowed; staying pending is not
            } catch (TimeoutException e) {
                fail("a future was still pending " + answerTimeout() + " after close()");
            }
        }
    }

    @Test
    public void describeNamesTheStore() {
        String description = store.describe();
        assertNotNull(description);
        assertFalse(description.isBlank());
    }
}
