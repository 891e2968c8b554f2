package dev.kvtier.store.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one intrusive FIFO both the trackers and the retention simulations link through. */
class LinkedFifoTest {
    private static final class Node extends LinkedFifo.Link<Node, Fifo> {
        final String name;
        final long bytes;

        Node(String name, long bytes) {
            this.name = name;
            this.bytes = bytes;
        }

        @Override
        long queuedBytes() {
            return bytes;
        }
    }

    private static final class Fifo extends LinkedFifo<Node, Fifo> {
        Fifo() {
            super("test");
        }
    }

    private static List<String> forward(Fifo fifo) {
        List<String> names = new ArrayList<>();
        for (Node n = fifo.head; n != null; n = n.next) {
            names.add(n.name);
        }
        return names;
    }

    private static List<String> backward(Fifo fifo) {
        List<String> names = new ArrayList<>();
        for (Node n = fifo.tail; n != null; n = n.previous) {
            names.add(n.name);
        }
        return names;
    }

    @Test
    void appendUnlinkAndMoveKeepOrderLinksAndTotals() {
        Fifo fifo = new Fifo();
        Node a = new Node("a", 1);
        Node b = new Node("b", 10);
        Node c = new Node("c", 100);
        fifo.append(a);
        fifo.append(b);
        fifo.append(c);
        assertEquals(List.of("a", "b", "c"), forward(fifo));
        assertEquals(List.of("c", "b", "a"), backward(fifo));
        assertEquals(111, fifo.bytes);
        assertEquals(3, fifo.size);
        assertSame(fifo, b.queue);

        fifo.moveToTail(a);
        assertEquals(List.of("b", "c", "a"), forward(fifo));
        assertEquals(List.of("a", "c", "b"), backward(fifo));
        fifo.moveToTail(a); // already newest: unchanged
        assertEquals(List.of("b", "c", "a"), forward(fifo));
        assertEquals(111, fifo.bytes);

        fifo.unlink(c); // middle
        assertEquals(List.of("b", "a"), forward(fifo));
        assertNull(c.queue);
        assertNull(c.previous);
        assertNull(c.next);
        fifo.unlink(b); // head
        fifo.unlink(a); // head and tail
        assertNull(fifo.head);
        assertNull(fifo.tail);
        assertEquals(0, fifo.bytes);
        assertEquals(0, fifo.size);
        assertEquals("test[size=0, bytes=0]", fifo.toString());
    }

    @Test
    void aNodeMovesBetweenLists() {
        Fifo first = new Fifo();
        Fifo second = new Fifo();
        Node a = new Node("a", 5);
        first.append(a);
        first.unlink(a);
        second.append(a);
        assertSame(second, a.queue);
        assertEquals(0, first.bytes);
        assertEquals(5, second.bytes);
        assertEquals(List.of("a"), forward(second));
    }
}
