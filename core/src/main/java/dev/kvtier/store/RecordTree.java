package dev.kvtier.store;

import java.util.Arrays;

/**
 * A bucket's records filed out of recency order ({@link UsageBucketIndex}), in ascending (filed last use, key): a
 * B+-tree whose nodes hold the filed last uses inline, next to the records. Not thread-safe: used under the store's
 * lock, as its index is.
 *
 * <p>Why not a {@code TreeSet<Record>}: a segment arriving on a tier out of recency order (a demotion of any but the
 * tier's newest-used segment) is filed here, and at 10^6 segments a binary tree is ~20 levels deep, the lower half of
 * them cache misses: a first demote+promote in random order cost ~3,200 ns against ~460 ns in registration order
 * ({@code FirstMoveCost}; a red-black tree with the records as its nodes took only 4-15% off, so the depth
 * is the cost, not the nodes). Here a level is one node of up to {@link #FANOUT} keys, scanned in order: three or
 * four levels at 10^6, of which only the leaves are out of the caches: that first move now costs ~2,000 ns.
 *
 * <p>Nodes split when full and are dropped when empty, never merged: a tree never deeper than its largest size
 * ever needed, and no rebalancing on the removals a touch or a walk makes.
 */
final class RecordTree {
    /** Keys per node: a leaf's keys are 8 cache lines, scanned in order (the prefetcher's case). */
    static final int FANOUT = 64;

    /**
     * A node; {@code keys[i]} with {@code names[i]} is its i-th key (in an inner node: child i's lower bound). The
     * segment's key is kept rather than its record: a bound outlives the record it was copied from (re-filed, or a
     * dead tail with no segment), and a String never changes.
     */
    private abstract static class Node {
        final long[] keys = new long[FANOUT];
        final String[] names = new String[FANOUT];
        Inner parent;
        int count;
    }

    private static final class Leaf extends Node {
        final UsageBucketIndex.Record[] records = new UsageBucketIndex.Record[FANOUT];
        Leaf next;
        Leaf previous;
    }

    /** Child i holds the records from its key (a lower bound: never above its smallest) up to child i + 1's. */
    private static final class Inner extends Node {
        final Node[] children = new Node[FANOUT];
    }

    private Node root = new Leaf();
    private long size;

    boolean isEmpty() {
        return size == 0;
    }

    long size() {
        return size;
    }

    /**
     * Whether the key (lastUse, name) sorts before the key (otherLastUse, otherName): by filed last use, then by the
     * segment's key. The second part breaks ties, which only touches racing without the lock can make (two stamped
     * alike): a segment's key never changes while it is filed and no two records of a tier share one. Single-threaded
     * it is never compared. The tree's one comparison: descents, positions and the invariant check all use it.
     */
    private static boolean before(long lastUse, String name, long otherLastUse, String otherName) {
        if (lastUse != otherLastUse) {
            return lastUse < otherLastUse;
        }
        return name.compareTo(otherName) < 0;
    }

    /** Whether the key (lastUse, name) sorts before key {@code i} of {@code node}. */
    private static boolean before(long lastUse, String name, Node node, int i) {
        return before(lastUse, name, node.keys[i], node.names[i]);
    }

    /** The leaf where the key (lastUse, name) is or belongs. */
    private Leaf leafFor(long lastUse, String name) {
        Node node = root;
        while (node instanceof Inner inner) {
            int child = 0; // the last child whose lower bound is not above the key
            while (child + 1 < inner.count && !before(lastUse, name, inner, child + 1)) {
                child++;
            }
            node = inner.children[child];
        }
        return (Leaf) node;
    }

    /** The first index in {@code node} whose key is not below (lastUse, name). */
    private static int position(Node node, long lastUse, String name) {
        int i = 0;
        while (i < node.count && before(node.keys[i], node.names[i], lastUse, name)) {
            i++;
        }
        return i;
    }

    /** The smallest record, or null if empty. */
    UsageBucketIndex.Record first() {
        Node node = root;
        while (node instanceof Inner inner) {
            node = inner.children[0];
        }
        return node.count == 0 ? null : ((Leaf) node).records[0];
    }

    /** The smallest record above {@code record}, which is in this tree, or null. */
    UsageBucketIndex.Record higher(UsageBucketIndex.Record record) {
        long lastUse = record.filedLastUse;
        String name = record.entry.key;
        Leaf leaf = leafFor(lastUse, name);
        int i = position(leaf, lastUse, name) + 1;
        if (i < leaf.count) {
            return leaf.records[i];
        }
        return leaf.next == null ? null : leaf.next.records[0]; // a linked leaf is never empty
    }

    /** Adds {@code record}, filed under its {@code filedLastUse}, which is in no tree. */
    void add(UsageBucketIndex.Record record) {
        long lastUse = record.filedLastUse;
        String name = record.entry.key;
        Leaf leaf = leafFor(lastUse, name);
        if (leaf.count == FANOUT) {
            Leaf right = splitLeaf(leaf);
            if (!before(lastUse, name, right, 0)) {
                leaf = right;
            }
        }
        int i = position(leaf, lastUse, name);
        insertAt(leaf, i, lastUse, name);
        System.arraycopy(leaf.records, i, leaf.records, i + 1, leaf.count - 1 - i);
        leaf.records[i] = record;
        size++;
    }

    /** Removes {@code record}, which is in this tree (filed under the same {@code filedLastUse} as when added). */
    void remove(UsageBucketIndex.Record record) {
        long lastUse = record.filedLastUse;
        String name = record.entry.key;
        Leaf leaf = leafFor(lastUse, name);
        int i = position(leaf, lastUse, name);
        if (i == leaf.count || leaf.records[i] != record) {
            throw new IllegalStateException("record of " + name + " is not in this tree");
        }
        removeAt(leaf, i);
        System.arraycopy(leaf.records, i + 1, leaf.records, i, leaf.count - i);
        leaf.records[leaf.count] = null;
        size--;
        if (leaf.count == 0 && leaf != root) {
            if (leaf.previous != null) {
                leaf.previous.next = leaf.next;
            }
            if (leaf.next != null) {
                leaf.next.previous = leaf.previous;
            }
            dropChild(leaf);
        }
    }

    /** Inserts the key (lastUse, name) at {@code i} (a leaf's caller places the record). */
    private static void insertAt(Node node, int i, long lastUse, String name) {
        System.arraycopy(node.keys, i, node.keys, i + 1, node.count - i);
        System.arraycopy(node.names, i, node.names, i + 1, node.count - i);
        node.keys[i] = lastUse;
        node.names[i] = name;
        node.count++;
    }

    /** Removes key {@code i} (a leaf's caller removes the record). */
    private static void removeAt(Node node, int i) {
        int after = node.count - i - 1;
        System.arraycopy(node.keys, i + 1, node.keys, i, after);
        System.arraycopy(node.names, i + 1, node.names, i, after);
        node.count--;
        node.names[node.count] = null;
    }

    /** Moves the upper half of the full {@code leaf} into a new leaf after it, linked into the parent; returns it. */
    private Leaf splitLeaf(Leaf leaf) {
        Leaf right = new Leaf();
        int keep = FANOUT / 2;
        System.arraycopy(leaf.records, keep, right.records, 0, leaf.count - keep);
        Arrays.fill(leaf.records, keep, leaf.count, null);
        moveUpperHalf(leaf, right, keep);
        right.next = leaf.next;
        right.previous = leaf;
        if (leaf.next != null) {
            leaf.next.previous = right;
        }
        leaf.next = right;
        addChildAfter(leaf, right);
        return right;
    }

    private static void moveUpperHalf(Node from, Node to, int keep) {
        int moved = from.count - keep;
        System.arraycopy(from.keys, keep, to.keys, 0, moved);
        System.arraycopy(from.names, keep, to.names, 0, moved);
        Arrays.fill(from.names, keep, from.count, null);
        to.count = moved;
        from.count = keep;
    }

    /** Links the new {@code right} into {@code left}'s parent right after {@code left} (a new root if none). */
    private void addChildAfter(Node left, Node right) {
        Inner parent = left.parent;
        if (parent == null) {
            parent = new Inner();
            parent.keys[0] = left.keys[0];
            parent.names[0] = left.names[0];
            parent.children[0] = left;
            parent.count = 1;
            left.parent = parent;
            root = parent;
        } else if (parent.count == FANOUT) {
            Inner upper = new Inner();
            int keep = FANOUT / 2;
            moveUpperHalf(parent, upper, keep);
            System.arraycopy(parent.children, keep, upper.children, 0, upper.count);
            Arrays.fill(parent.children, keep, FANOUT, null);
            for (int c = 0; c < upper.count; c++) {
                upper.children[c].parent = upper;
            }
            addChildAfter(parent, upper);
            if (left.parent == upper) {
                parent = upper;
            }
        }
        int at = indexOf(parent, left) + 1;
        insertAt(parent, at, right.keys[0], right.names[0]);
        System.arraycopy(parent.children, at, parent.children, at + 1, parent.count - 1 - at);
        parent.children[at] = right;
        right.parent = parent;
    }

    /** Unlinks the empty {@code child} from its parent, dropping emptied ancestors and a root of one child. */
    private void dropChild(Node child) {
        Inner parent = child.parent;
        int at = indexOf(parent, child);
        removeAt(parent, at);
        System.arraycopy(parent.children, at + 1, parent.children, at, parent.count - at);
        parent.children[parent.count] = null;
        child.parent = null;
        if (parent.count == 0) {
            dropChild(parent); // never the root: a root inner node keeps at least two children (collapsed below)
        }
        while (root instanceof Inner inner && inner.count == 1) {
            root = inner.children[0];
            root.parent = null;
        }
    }

    private static int indexOf(Inner parent, Node child) {
        for (int c = 0; c < parent.count; c++) {
            if (parent.children[c] == child) {
                return c;
            }
        }
        throw new IllegalStateException("a node is missing from its parent");
    }

    /**
     * For tests: checks the order across the leaves, every node's parent link and count, and that each child's
     * lower bound in its parent is at most its smallest record; returns the depth.
     *
     * @throws IllegalStateException naming the first broken invariant
     */
    int checkInvariants() {
        if (root.parent != null) {
            throw new IllegalStateException("the root has a parent");
        }
        int depth = 1;
        Node node = root;
        while (node instanceof Inner inner) {
            node = inner.children[0];
            depth++;
        }
        long seen = 0;
        String lastName = null;
        long lastKey = 0;
        Leaf previous = null;
        for (Leaf leaf = (Leaf) node; leaf != null; leaf = leaf.next) {
            if (leaf.previous != previous) {
                throw new IllegalStateException("broken previous link");
            }
            if (leaf.count == 0 && leaf != root) {
                throw new IllegalStateException("an empty leaf is linked");
            }
            for (int i = 0; i < leaf.count; i++) {
                if (leaf.keys[i] != leaf.records[i].filedLastUse || !leaf.names[i].equals(leaf.records[i].entry.key)) {
                    throw new IllegalStateException("a key differs from its record's filed key");
                }
                if (lastName != null && !before(lastKey, lastName, leaf, i)) {
                    throw new IllegalStateException("out of order at " + leaf.names[i]);
                }
                lastName = leaf.names[i];
                lastKey = leaf.keys[i];
                seen++;
            }
            checkBounds(leaf, depth);
            previous = leaf;
        }
        if (seen != size) {
            throw new IllegalStateException("size " + size + " but " + seen + " records");
        }
        return depth;
    }

    /** Checks {@code leaf}'s path to the root: parent links, and each lower bound at most the subtree's first key. */
    private void checkBounds(Leaf leaf, int depth) {
        Node node = leaf;
        int levels = 1;
        while (node.parent != null) {
            Inner parent = node.parent;
            int at = indexOf(parent, node);
            // Child 0's bound is never read (the descent starts there), so only the others must hold.
            if (at > 0 && node.count > 0 && before(node.keys[0], node.names[0], parent, at)) {
                throw new IllegalStateException("a lower bound above its child's first key");
            }
            node = parent;
            levels++;
        }
        if (node != root || levels != depth) {
            throw new IllegalStateException("a leaf at depth " + levels + " of " + depth + " or off the root");
        }
    }
}
