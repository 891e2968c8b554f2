package dev.kvtier.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import dev.kvtier.testing.FaultLogRouting;

/**
 * What every {@link SyncBus} promises; each implementation's test only says how to open one
 * (Lucene's {@code BaseDirectoryTestCase} pattern).
 */
@Tag(FaultLogRouting.TAG)
abstract class SyncBusContract {
    /** Bounds every wait: a broken bus fails the test instead of hanging it. */
    static final long WAIT_SECONDS = 10;

    private final List<SyncBus> opened = new ArrayList<>();

    /** A fresh bus (own, empty stream) retaining the newest {@code retainedMessages} messages. */
    protected abstract SyncBus newBus(int retainedMessages) throws Exception;

    /** A second handle on the same stream as {@code bus} (another process's view; may be the same object). */
    protected abstract SyncBus sameStream(SyncBus bus) throws Exception;

    SyncBus open(int retainedMessages) throws Exception {
        SyncBus bus = newBus(retainedMessages);
        opened.add(bus);
        return bus;
    }

    /** Closes {@code bus} after the test. */
    void register(SyncBus bus) {
        opened.add(bus);
    }

    @AfterEach
    void closeAll() {
        for (SyncBus bus : opened) {
            bus.close();
        }
    }

    record Delivery(long sequence, byte[] payload) {
        String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }
    }

    static byte[] text(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static Delivery next(LinkedBlockingQueue<Delivery> queue) throws InterruptedException {
        Delivery delivery = queue.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(delivery, "no message within " + WAIT_SECONDS + " s");
        return delivery;
    }

    @Test
    void publishNumbersMessagesFromOneInOrder() throws Exception {
        SyncBus bus = open(100);
        assertEquals(0, bus.lastSequence());
        assertEquals(1, bus.firstSequence());
        for (int i = 1; i <= 5; i++) {
            assertEquals(i, bus.publish(text("m" + i)));
        }
        assertEquals(5, bus.lastSequence());
        assertEquals(1, bus.firstSequence());
    }

    @Test
    void asynchronousPublishesFromOneThreadAreStoredInCallOrder() throws Exception {
        SyncBus bus = open(1000);
        List<java.util.concurrent.CompletableFuture<Long>> acks = new ArrayList<>();
        for (int i = 1; i <= 300; i++) {
            acks.add(bus.publishAsync(text("m" + i)));
        }
        for (int i = 1; i <= 300; i++) {
            assertEquals(i, acks.get(i - 1).get(WAIT_SECONDS, TimeUnit.SECONDS));
        }
        LinkedBlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
        try (SyncBus.Subscription ignored = sameStream(bus).subscribe(1, (s, p) -> got.add(new Delivery(s, p)))) {
            for (int i = 1; i <= 300; i++) {
                assertEquals("m" + i, next(got).text());
            }
        }
        assertTrue(bus.maxMessageBytes() > 0 && bus.maxMessageBytes() <= WireFormat.MAX_MESSAGE_BYTES);
        assertEquals(bus.streamIdentity(), sameStream(bus).streamIdentity(), "one stream, one identity");
    }

    @Test
    void aSubscriberFromOneSeesEveryMessageOnceInOrderThenNewOnes() throws Exception {
        SyncBus bus = open(100);
        bus.publish(text("a"));
        bus.publish(text("b"));
        LinkedBlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
        try (SyncBus.Subscription ignored = sameStream(bus).subscribe(1, (s, p) -> got.add(new Delivery(s, p)))) {
            Delivery first = next(got);
            assertEquals(1, first.sequence());
            assertEquals("a", first.text());
            assertEquals("b", next(got).text());
            bus.publish(text("c"));
            Delivery third = next(got);
            assertEquals(3, third.sequence());
            assertEquals("c", third.text());
            assertNull(got.poll(100, TimeUnit.MILLISECONDS), "delivered more than was published");
        }
    }

    @Test
    void aSubscriberResumesAfterTheSequenceItKept() throws Exception {
        SyncBus bus = open(100);
        for (int i = 1; i <= 6; i++) {
            bus.publish(text("m" + i));
        }
        LinkedBlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
        try (SyncBus.Subscription ignored = sameStream(bus).subscribe(4, (s, p) -> got.add(new Delivery(s, p)))) {
            for (int expected = 4; expected <= 6; expected++) {
                Delivery d = next(got);
                assertEquals(expected, d.sequence());
                assertEquals("m" + expected, d.text());
            }
        }
    }

    @Test
    void retentionDropsTheOldestAndTheGapShowsInTheFirstDeliveredSequence() throws Exception {
        SyncBus bus = open(3);
        for (int i = 1; i <= 7; i++) {
            bus.publish(text("m" + i));
        }
        assertEquals(5, bus.firstSequence());
        assertEquals(7, bus.lastSequence());
        LinkedBlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
        try (SyncBus.Subscription ignored = sameStream(bus).subscribe(2, (s, p) -> got.add(new Delivery(s, p)))) {
            Delivery d = next(got);
            assertEquals(5, d.sequence(), "asked for 2, 2..4 are gone: the first delivered must say so");
            assertEquals("m5", d.text());
        }
    }

    @Test
    void payloadBytesArriveExactlyAndCallersCannotChangeThem() throws Exception {
        SyncBus bus = open(10);
        byte[] payload = new byte[4096];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (i * 31 + 7);
        }
        byte[] expected = payload.clone();
        bus.publish(payload);
        payload[0] ^= 1; // after publish: must not show through
        LinkedBlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
        try (SyncBus.Subscription ignored = sameStream(bus).subscribe(1, (s, p) -> got.add(new Delivery(s, p)))) {
            assertArrayEquals(expected, next(got).payload());
        }
    }

    @Test
    void concurrentPublishersEachGetTheirOwnSequenceAndEveryMessageArrivesOnce() throws Exception {
        SyncBus bus = open(10_000);
        int perThread = 200;
        LinkedBlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
        try (SyncBus.Subscription ignored = sameStream(bus).subscribe(1, (s, p) -> got.add(new Delivery(s, p)))) {
            Set<Long> sequences = java.util.concurrent.ConcurrentHashMap.newKeySet();
            Thread[] threads = new Thread[2];
            for (int t = 0; t < threads.length; t++) {
                int id = t;
                threads[t] = new Thread(() -> {
                    for (int i = 0; i < perThread; i++) {
                        sequences.add(bus.publish(text(id + ":" + i)));
                    }
                });
                threads[t].start();
            }
            for (Thread thread : threads) {
                thread.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS * 3));
            }
            assertEquals(2 * perThread, sequences.size(), "two publishes got the same sequence");
            Set<String> seen = new HashSet<>();
            long previous = 0;
            for (int i = 0; i < 2 * perThread; i++) {
                Delivery d = next(got);
                assertEquals(previous + 1, d.sequence(), "out of order or skipped");
                previous = d.sequence();
                assertTrue(seen.add(d.text()), "delivered twice: " + d.text());
            }
        }
    }

    @Test
    void aClosedSubscriptionGetsNothingMore() throws Exception {
        SyncBus bus = open(10);
        LinkedBlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
        SyncBus.Subscription subscription = sameStream(bus).subscribe(1, (s, p) -> got.add(new Delivery(s, p)));
        bus.publish(text("before"));
        assertEquals("before", next(got).text());
        subscription.close();
        bus.publish(text("after"));
        assertNull(got.poll(200, TimeUnit.MILLISECONDS));
        subscription.close(); // idempotent
    }

    @Test
    void aThrowingHandlerDoesNotStopDelivery() throws Exception {
        SyncBus bus = open(10);
        LinkedBlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
        try (SyncBus.Subscription ignored = sameStream(bus).subscribe(1, (s, p) -> {
            got.add(new Delivery(s, p));
            if (s == 1) {
                throw new IllegalStateException("handler failure on purpose");
            }
        })) {
            bus.publish(text("x"));
            bus.publish(text("y"));
            assertEquals(1, next(got).sequence());
            assertEquals(2, next(got).sequence());
        }
    }

    @Test
    void controlMessagesReachEveryCurrentSubscriber() throws Exception {
        SyncBus bus = open(10);
        SyncBus other = sameStream(bus);
        LinkedBlockingQueue<String> a = new LinkedBlockingQueue<>();
        LinkedBlockingQueue<String> b = new LinkedBlockingQueue<>();
        try (SyncBus.Subscription sa = bus.subscribeControl(p -> a.add(new String(p, StandardCharsets.UTF_8)));
                SyncBus.Subscription sb = other.subscribeControl(p -> b.add(new String(p, StandardCharsets.UTF_8)))) {
            other.sendControl(text("resync"));
            assertEquals("resync", a.poll(WAIT_SECONDS, TimeUnit.SECONDS));
            assertEquals("resync", b.poll(WAIT_SECONDS, TimeUnit.SECONDS));
            assertEquals(0, bus.lastSequence(), "control messages are not stream messages");
        }
    }

    @Test
    void subscribingFromBeforeOneIsRefused() throws Exception {
        SyncBus bus = open(10);
        assertThrows(IllegalArgumentException.class, () -> bus.subscribe(0, (s, p) -> { }));
    }
}
