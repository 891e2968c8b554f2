package dev.kvtier.store;

/**
 * A tracker's record of one segment, linked into one of its per-tier queues: what the built-in
 * tracker policies ({@link S3FifoPolicy}, {@link WTinyLfuPolicy}) keep in
 * {@link DemotionPolicy.Segment#policyNode}. Not thread-safe: owned by one tracker, used under its
 * store's lock.
 */
final class PolicyNode {
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
    /** S3-FIFO's chain-tail rule: where this segment's positions end (set on registration). */
    long endPosition;

    PolicyNode(DemotionPolicy.Segment segment) {
        this.key = segment.key();
        this.sizeBytes = segment.sizeBytes();
        int h = key.hashCode() * 0x9E3779B9;
        this.hash = h ^ (h >>> 16);
    }

    /** The node a tracker attached to {@code segment}; fails loudly if the store lost it. */
    static PolicyNode of(DemotionPolicy.Segment segment) {
        if (segment.policyNode() instanceof PolicyNode node) {
            return node;
        }
        throw new IllegalStateException("segment " + segment.key() + " has no node of this tracker");
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
