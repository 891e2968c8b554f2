package dev.kvtier.bench.sim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class JvmActivityTest {

    /** A thread's name may hold spaces and parentheses: the fields are counted from the last ')'. */
    @Test
    void statFieldsAreReadAfterTheLastParenthesis() {
        String line = "4242 (C2 Compiler (x) y) S 1 2 3 4 5 6 700 8 9 10 1100 1200 13 14 20 0 1 0 99 1000 5";
        long[] fields = JvmActivity.fields(line);
        assertEquals(700, fields[7], "minflt");
        assertEquals(9, fields[9], "majflt");
        assertEquals(1100, fields[11], "utime");
        assertEquals(1200, fields[12], "stime");
        assertArrayEquals(JvmActivity.fields("1 (java) R 1 2 3 4 5 6 700 8 9 10 1100 1200 13"), fields);
    }

    @Test
    void compilerAndCollectorThreadsAreToldByTheirNames() {
        assertTrue(JvmActivity.isCompiler("C2 CompilerThre"));
        assertTrue(JvmActivity.isCompiler("C1 CompilerThre"));
        assertFalse(JvmActivity.isCompiler("java"));
        assertTrue(JvmActivity.isCollector("GC Thread#1"));
        assertTrue(JvmActivity.isCollector("G1 Conc#0"));
        assertTrue(JvmActivity.isCollector("G1 Refine#0"));
        assertFalse(JvmActivity.isCollector("VM Thread"));
        assertFalse(JvmActivity.isCollector("kvtier-host-cop"));
    }

    /**
     * On Linux every figure is measured; the difference of two snapshots never runs backwards. One snapshot reads
     * the process's faults after the thread's, so it counts at least the thread's; a difference of two snapshots
     * need not (this thread's faults between the two reads of the first snapshot are in the thread's difference
     * and not in the process's: CI once saw 1,066 against 1,065), so only its signs are checked.
     */
    @Test
    void onLinuxASnapshotMeasuresEveryFigureAndTimeMovesForward() {
        Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/thread-self/stat")), "needs Linux's /proc");
        JvmActivity before = JvmActivity.now();
        byte[][] touched = new byte[64][];
        for (int i = 0; i < touched.length; i++) {
            touched[i] = new byte[1 << 16]; // something for this thread to do between the snapshots
        }
        JvmActivity spent = JvmActivity.now().since(before);
        assertTrue(touched[63].length > 0);
        assertTrue(before.threadMinorFaults() >= 0 && before.processMinorFaults() >= before.threadMinorFaults(),
                before.toString());
        assertTrue(before.compilerCpuNanos() >= 0 && before.gcCpuNanos() >= 0, before.toString());
        assertTrue(spent.wallNanos() > 0 && spent.threadCpuNanos() >= 0 && spent.threadMinorFaults() >= 0
                && spent.processMinorFaults() >= 0 && spent.compilerCpuNanos() >= 0
                && spent.collections() >= 0, spent.toString());
    }

    @Test
    void aFigureOneSideCouldNotMeasureStaysUnmeasured() {
        JvmActivity later = new JvmActivity(100, 50, 10, 20, 30, 40, 2, 5, 7);
        JvmActivity earlier = new JvmActivity(40, -1, 4, 5, -1, 10, 1, 2, 3);
        assertEquals(new JvmActivity(60, -1, 6, 15, -1, 30, 1, 3, 4), later.since(earlier));
    }
}
