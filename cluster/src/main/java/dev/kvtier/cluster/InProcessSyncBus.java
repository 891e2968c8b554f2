package dev.kvtier.cluster;

import dev.kvtier.concurrent.KvTierThreads;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The embedded {@link SyncBus} for ranks and a router in one JVM: no server, no copies across processes. The stream
 * is a bounded in-memory log that keeps the newest {@code retainedMessages} messages (older ones are dropped, exactly
 * as a JetStream stream with {@code max_msgs} and discard-old would), so gap handling behaves the same on both buses.
 *
 * <p>Each event subscription has its own daemon delivery thread ({@code kvtier-syncbus-*}); a slow subscriber never
 * holds up publishers or other subscribers, and may fall behind retention (it then sees the gap in the sequences).
 * Each control subscription has its own single delivery thread too. Thread-safe; {@link #close()} stops all of them.
 * Messages are copied on publish and on delivery, so no caller can change what another sees.
 */
public final class InProcessSyncBus implements SyncBus {
    private static final System.Logger LOG = System.getLogger(InProcessSyncBus.class.getName());
    private static final ThreadFactory THREADS = KvTierThreads.factory("syncbus");

    private final int retainedMessages;
    private final String identity = "in-process-" + java.util.UUID.randomUUID();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition published = lock.newCondition();
    // Guarded by lock.
    /** Message of sequence {@code s} at {@code (s - 1) % retainedMessages}; sized lazily up to the retention. */
    private byte[][] ring = new byte[16][];
    private long lastSequence;
    private boolean closed;

    private final List<AutoCloseable> subscriptions = new CopyOnWriteArrayList<>();
    private final List<ControlSubscription> controlSubscriptions = new CopyOnWriteArrayList<>();

    /**
     * A bus that retains the newest {@code retainedMessages} messages.
     *
     * @param retainedMessages how many of the newest messages the stream keeps, {@code >= 1}; older ones are dropped
     *                         as JetStream's {@code max_msgs} would
     * @throws
 IllegalArgumentException if {@code retainedMessages < 1}
     */
    public InProcessSyncBus(int retainedMessages) {
        if (retainedMessages < 1) {
            throw new IllegalArgumentException("retainedMessages must be >= 1, got " + retainedMessages);
        }
        this.retainedMessages = retainedMessages;
    }

    @Override
    public long publish(byte[] message) {
        byte[] copy = message.clone();
        lock.lock();
        try {
            if (closed) {
                throw new SyncBusException(describe() + " is closed: cannot publish", null);
            }
            lastSequence++;
            if (ring.length < retainedMessages && lastSequence > ring.length) {
                byte[][] grown = new byte[(int) Math.min(retainedMessages, 2L * ring.length)][];
                System.arraycopy(ring, 0, grown, 0, ring.length); // nothing wrapped yet: lastSequence <= ring.length
                ring = grown;
            }
            ring[slot(lastSequence)] = copy;
            published.signalAll();
            return lastSequence;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public long firstSequence() {
        lock.lock();
        try {
            return first();
        } finally {
            lock.unlock();
        }
    }

    /** Caller holds lock. */
    private long first() {
        return Math.max(1, lastSequence - retainedMessages + 1);
    }

    /** Caller holds lock. */
    private int slot(long sequence) {
        return (int) ((sequence - 1) % retainedMessages);
    }

    @Override
    public long lastSequence() {
        lock.lock();
        try {
            return lastSequence;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Subscription subscribe(long fromSequence, EventHandler handler) {
        if (fromSequence < 1) {
            throw new IllegalArgumentException("fromSequence must be >= 1, got " + fromSequence);
        }
        EventSubscription subscription = new EventSubscription(fromSequence, handler);
        subscriptions.add(subscription);
        subscription.thread.start();
        return subscription;
    }

    @Override
    public void sendControl(byte[] message) {
        for (ControlSubscription subscription : controlSubscriptions) {
            subscription.deliver(message.clone());
        }
    }

    @Override
    public Subscription subscribeControl(ControlHandler handler) {
        ControlSubscription subscription = new ControlSubscription(handler);
        controlSubscriptions.add(subscription);
        return subscription;
    }

    /** One stream per bus object: its identity is fixed for its lifetime. */
    @Override
    public String streamIdentity() {
        return identity;
    }

    @Override
    public String describe() {
        return "in-process bus (retains " + retainedMessages + " messages)";
    }

    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            published.signalAll();
        } finally {
            lock.unlock();
        }
        for (AutoCloseable subscription : subscriptions) {
            ((Subscription) subscription).close();
        }
        for (ControlSubscription subscription : controlSubscriptions) {
            subscription.close();
        }
    }

    private final class EventSubscription implements Subscription {
        private final Thread thread;
        private volatile boolean stopped;

        EventSubscription(long fromSequence, EventHandler handler) {
            this.thread = THREADS.newThread(() -> deliverFrom(fromSequence, handler));
        }

        private void deliverFrom(long fromSequence, EventHandler handler) {
            long next = fromSequence;
            while (true) {
                byte[] message;
                long sequence;
                lock.lock();
                try {
                    while (!stopped && !closed && next > lastSequence) {
                        published.awaitUninterruptibly();
                    }
                    if (stopped || closed) {
                        return;
                    }
                    // Retention dropped [next, first()): the gap shows in the delivered sequence.
                    sequence = Math.max(next, first());
                    message = ring[slot(sequence)];
                } finally {
                    lock.unlock();
                }
                try {
                    handler.onMessage(sequence, message.clone());
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "event handler failed on stream sequence " + sequence
                            + " of " + describe() + "; delivery goes on", e);
                }
                next = sequence + 1;
            }
        }

        @Override
        public void close() {
            stopped = true;
            lock.lock();
            try {
                published.signalAll();
            } finally {
                lock.unlock();
            }
            subscriptions.remove(this);
        }
    }

    private final class ControlSubscription implements Subscription {
        private final ExecutorService delivery = Executors.newSingleThreadExecutor(THREADS);
        private final ControlHandler handler;

        ControlSubscription(ControlHandler handler) {
            this.handler = handler;
        }

        void deliver(byte[] message) {
            try {
                delivery.execute(() -> {
                    try {
                        handler.onControl(message);
                    } catch (RuntimeException e) {
                        LOG.log(System.Logger.Level.WARNING, "control handler failed on " + describe()
                                + "; delivery goes on", e);
                    }
                });
            } catch (RejectedExecutionException closedMeanwhile) {
                // Not persisted by contract: a subscriber that has gone simply misses it.
            }
        }

        @Override
        public void close() {
            controlSubscriptions.remove(this);
            delivery.shutdown();
        }
    }
}
