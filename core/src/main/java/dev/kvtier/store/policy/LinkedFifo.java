package dev.kvtier.store.policy;

/**
 * An intrusive doubly linked FIFO of nodes with their byte total and count: oldest at {@link #head}, newest at
 * {@link #tail}; O(1) append, unlink and move to the newest end. The package's one list of linked objects: the
 * trackers' queues ({@link PolicyNode.Queue}, whose nodes are the segments' entries) and {@link ChainContinuation}'s
 * walks link through it. (The miniature simulations in {@link RetentionShadows}, whose entries are not objects, link
 * by number in arrays of their own: see there why.) The links sit in the node ({@link Link}) so that a move is
 * pointer updates, no allocation. Not thread-safe: each list belongs to one tracker, used under the store's lock.
 *
 * @param <N> the node type
 * @param <Q> the concrete list type, which a node's {@link Link#queue} names
 */
abstract class LinkedFifo<N extends LinkedFifo.Link<N, Q>, Q extends LinkedFifo<N, Q>> {
    final String name;
    N head;
    N tail;
    long bytes;
    int size;

    LinkedFifo(String name) {
        this.name = name;
    }

    /**
     * What a {@link LinkedFifo} links: a node in at most one list at a time.
     *
     * @param <N> the node type itself
     * @param <Q> the list type that links it
     */
    abstract static class Link<N extends Link<N, Q>, Q extends LinkedFifo<N, Q>> {
        N previous;
        N next;
        /** The list holding this node, or null while it is in none. */
        Q queue;

        /** The bytes this node adds to its list's total; must not change while it is in a list. */
        abstract long queuedBytes();
    }

    // Q is the subclass's own type (each concrete list passes itself), so the cast holds.
    @SuppressWarnings("unchecked")
    final void append(N node) {
        node.queue = (Q) this;
        node.previous = tail;
        node.next = null;
        if (tail == null) {
            head = node;
        } else {
            tail.next = node;
        }
        tail = node;
        bytes += node.queuedBytes();
        size++;
    }

    final void unlink(N node) {
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
        bytes -= node.queuedBytes();
        size--;
    }

    /** Moves {@code node}, which is in this list, to the newest end. */
    final void moveToTail(N node) {
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
