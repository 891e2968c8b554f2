package dev.kvtier.bench.soak;

import dev.kvtier.KvTierException;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one epoch saw, counted by every thread of the soak at once (adders and concurrent maps), then merged into the
 * {@link SoakReport} when the epoch ends.
 */
final class EpochCounters {
    /** Examples kept per list: enough to reproduce, few enough to read. */
    static final int EXAMPLES = 8;

    final Fault fault;
    final int epoch;
    final LongAdder[] ops = adders(Op.values().length);
    final LongAdder[] failedOps = adders(Op.values().length);
    /** Operations on a key that was not cached (another thread's key between its remove and put): not failures. */
    final LongAdder[] absent = adders(Op.values().length);
    final Map<String, Failure> failures = new ConcurrentHashMap<>();
    final Map<String, LongAdder> faultsArmed = new ConcurrentHashMap<>();
    final Map<String, LongAdder> faultsFired = new ConcurrentHashMap<>();
    final LongAdder verifiedReads = new LongAdder();
    final LongAdder verifiedBytes = new LongAdder();
    final LongAdder wrongBytes = new LongAdder();
    final LongAdder wrongMetadata = new LongAdder();
    final LongAdder lostSegments = new LongAdder();
    final LongAdder hangs = new LongAdder();
    final List<String> wrongExamples = Collections.synchronizedList(new ArrayList<>());
    final List<String> hangExamples = Collections.synchronizedList(new ArrayList<>());

    /** One exception type (with its root cause's type): how often, whether the soak expects it, the first one. */
    static final class Failure {
        final LongAdder count = new LongAdder();
        final boolean expected;
        final String example;

        Failure(boolean expected, String example) {
            this.expected = expected;
            this.example = example;
        }
    }

    EpochCounters(Fault fault, int epoch) {
        this.fault = fault;
        this.epoch = epoch;
    }

    void op(Op op) {
        ops[op.ordinal()].increment();
    }

    /** Counts a failed operation under its exception type; an unexpected one keeps its stack trace as the example. */
    void failed(Op op, String key, Throwable failure) {
        failedOps[op.ordinal()].increment();
        boolean expected = isExpected(failure);
        String label = isWrongDirection(failure) ? label(failure) + " (a move in the wrong direction: random tiers)"
                : label(failure);
        failures.computeIfAbsent(label, l -> new Failure(expected,
                        "epoch " + epoch + " (" + fault + "), " + op.label + " \"" + key + "\": "
                                + (expected ? String.valueOf(failure) : stackTrace(failure))))
                .count.increment();
    }

    void armed(String fault) {
        faultsArmed.computeIfAbsent(fault, f -> new LongAdder()).increment();
    }

    void fired(String fault) {
        faultsFired.computeIfAbsent(fault, f -> new LongAdder()).increment();
    }

    void wrong(String example) {
        wrongBytes.increment();
        if (wrongExamples.size() < EXAMPLES) {
            wrongExamples.add("epoch " + epoch + " (" + fault + "): " + example);
        }
    }

    /** Metadata that disagrees with the model or the bytes (a tier, positions, a size, presence). */
    void wrongMetadata(String example) {
        wrongMetadata.increment();
        if (wrongExamples.size() < EXAMPLES) {
            wrongExamples.add("epoch " + epoch + " (" + fault + "): metadata: " + example);
        }
    }

    void absent(Op op) {
        absent[op.ordinal()].increment();
    }

    void hang(String example) {
        hangs.increment();
        if (hangExamples.size() < EXAMPLES) {
            hangExamples.add("epoch " + epoch + " (" + fault + "): " + example);
        }
    }

    /**
     * The failures a fault may cause under the cache's contract: its own exceptions (transfer failed, tier full,
     * corrupted, pinned), an unknown key (a failed move's last resort removes a segment, or another thread removed
     * it), a move in the wrong direction (the soak picks tiers at random), and, once the context is dead, whatever
     * the backend says about being unusable. Everything else (a NullPointerException, an Error) is a bug.
     */
    private boolean isExpected(Throwable failure) {
        if (failure instanceof KvTierException) { // SegmentNotFoundException included
            return true;
        }
        if (isWrongDirection(failure)) {
            return true;
        }
        return fault == Fault.STICKY && failure instanceof IllegalStateException;
    }

    /** promote to a slower tier or demote to a faster one: the soak's random choice, refused as documented. */
    private static boolean isWrongDirection(Throwable failure) {
        return failure instanceof IllegalArgumentException e && e.getMessage() != null
                && e.getMessage().startsWith("to must be");
    }

    /** The exception's type, and its root cause's type where that says more (CudaException, a timeout, an I/O error). */
    static String label(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String type = failure.getClass().getSimpleName();
        return root == failure ? type : type + " <- " + root.getClass().getSimpleName();
    }

    private static String stackTrace(Throwable failure) {
        StringWriter text = new StringWriter();
        failure.printStackTrace(new PrintWriter(text));
        return text.toString();
    }

    private static LongAdder[] adders(int n) {
        LongAdder[] adders = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            adders[i] = new LongAdder();
        }
        return adders;
    }
}
