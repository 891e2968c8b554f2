package dev.kvtier.store;

/**
 * A built-in tracker's record of one segment, linked into one of its per-tier queues: the part of
 * the store's {@link SegmentEntry} (which extends it) that belongs to the store's tracker when that
 * is {@link S3FifoPolicy} or {@link WTinyLfuPolicy}. Not thread-safe: used under the store's lock.
 *
 * <p>Why inside the entry rather than a separate node in {@link DemotionPolicy.Segment#policyNode}:
 * one object fewer per segment, and a touch then changes one object instead of chasing a pointer
 * to another (a cache miss at 10^6 segments). A store has exactly one tracker, so the fields are
 * never shared.
 */
abstract class PolicyNode {
    final String key;
    final long sizeBytes;
    /** The key's hash, spread, for frequency sketches. */
    final int hash;
    PolicyNode previous;
    PolicyNode next;
    /** The queue holding this node, or null while it is in none. */
    Queue queue;
    /** S3-FIFO's use counter (0..3). */
    int uses;
    /** W-TinyLFU: entered probation from the window and not used since (an admission candidate). */
    boolean fromWindow;
    /** S3-FIFO: held on its tier by the caller ({@link DemotionPolicy.Tracker#held}): kept in place, not named. */
    boolean held;

    PolicyNode(String key, long sizeBytes) {
        this.key = key;
        this.sizeBytes = sizeBytes;
        int h = key.hashCode() * 0x9E3779B9;
        this.hash = h ^ (h >>> 16);
    }

    /** The node of {@code segment}: the store's entry itself (only the store calls a tracker). */
    static PolicyNode of(DemotionPolicy.Segment segment) {
        return (PolicyNode) segment;
    }

    /**
     * An intrusive doubly linked FIFO of nodes with their byte total: oldest at {@link #head},
     * newest at {@link #tail}. O(1) append and unlink.
     */
    static final class Queue {
        final String name;
        PolicyNode head;
        PolicyNode tail;
        long bytes;
        int size;

        Queue(String name) {
            this.name = name;
        }

        void append(PolicyNode node) {
            node.queue = this;
            node.previous = tail;
            node.next = null;
            if (tail == null) {
                head = node;
            } else {
                tail.next = node;
            }
            tail = node;
            bytes += node.sizeBytes;
            size++;
        }

        void unlink(PolicyNode node) {
            if (node.previous == null) {
                head = node.next;
            } else {
                node.previous.next = node.next;
            }
            if (node.next == null) {
                tail = node.previous;
            } else {
                node.next.previous = node.previous;
            }
            node.previous = null;
            node.next = null;
            node.queue = null;
            bytes -= node.sizeBytes;
            size--;
        }

        /** Moves {@code node}, which is in this queue, to the newest end. */
        void moveToTail(PolicyNode node) {
            if (tail != node) {
                unlink(node);
                append(node);
            }
        }

        @Override
        public String toString() {
            return name + "[size=" + size + ", bytes=" + bytes + "]";
        }
    }
}
