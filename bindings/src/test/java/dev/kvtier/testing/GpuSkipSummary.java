package dev.kvtier.testing;

import java.util.Map;
import java.util.TreeMap;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestTag;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Says once, at the end of a module's tests, how many {@code gpu}-tagged tests were skipped and why (the
 * assumption's message: "no usable CUDA device: ..."), instead of leaving the reader to add up the skipped counts
 * of each class. Prints nothing when none was skipped. Registered for every module's tests through
 * {@code META-INF/services} in the bindings test-jar. Thread-safe.
 */
public final class GpuSkipSummary implements TestExecutionListener {
    private static final TestTag GPU = TestTag.create("gpu");

    private final Map<String, Integer> skippedByReason = new TreeMap<>();

    @Override
    public synchronized void executionSkipped(TestIdentifier test, String reason) {
        if (test.getTags().contains(GPU)) {
            skippedByReason.merge(reason, test.isTest() ? 1 : 0, Integer::sum);
        }
    }

    @Override
    public synchronized void executionFinished(TestIdentifier test, TestExecutionResult result) {
        if (test.isTest() && result.getStatus() == TestExecutionResult.Status.ABORTED && test.getTags().contains(GPU)) {
            String reason = result.getThrowable().map(Throwable::getMessage).orElse("no reason given");
            skippedByReason.merge(reason.replaceFirst("^Assumption failed: ", ""), 1, Integer::sum);
        }
    }

    @Override
    public synchronized void testPlanExecutionFinished(TestPlan plan) {
        skippedByReason.forEach((reason, count) -> {
            if (count > 0) {
                System.out.printf("%nkvtier: %d gpu-tagged test%s skipped: %s%n", count, count == 1 ? "" : "s", reason);
            }
        });
        skippedByReason.clear();
    }
}
