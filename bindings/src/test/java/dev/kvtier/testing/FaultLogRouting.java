package dev.kvtier.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.ConsoleHandler;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestTag;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Keeps the build's console for real problems: the {@code java.util.logging} records a test tagged
 * {@value #TAG} causes on purpose (failed copies, sticky CUDA errors, truncated extents, reclaimed directories,
 * stream gaps) go to that test class's log file, {@code target/test-logs/CLASS.log}, and not to the console;
 * records of every other test still reach the console, and go to its class's file too. When a tagged test does
 * not pass, its records are printed to the console after all, so a failure comes with its log.
 *
 * <p>Registered for every module's tests through {@code META-INF/services} in the bindings test-jar. It
 * replaces the root logger's console handlers while the test plan runs and puts them back at its end. Tests
 * of one JVM run one at a time (no parallel execution is configured), so a record belongs to the test that was
 * running when it was logged, whichever thread logged it. Thread-safe.
 */
public final class FaultLogRouting implements TestExecutionListener {
    /** The tag of test classes (or methods) that inject faults and expect the library to log them. */
    public static final String TAG = "injects-faults";

    private static final Path LOG_DIRECTORY = Path.of("target", "test-logs");

    private final Logger root = Logger.getLogger("");
    private final List<Handler> consoles = new ArrayList<>();
    private Routing routing;

    @Override
    public void testPlanExecutionStarted(TestPlan plan) {
        for (Handler handler : root.getHandlers()) {
            if (handler instanceof ConsoleHandler) {
                consoles.add(handler);
                root.removeHandler(handler);
            }
        }
        routing = new Routing(consoles);
        root.addHandler(routing);
    }

    @Override
    public void executionStarted(TestIdentifier test) {
        if (routing != null) {
            routing.enter(className(test), isTagged(test), test.isTest(),
                    test.getSource().filter(ClassSource.class::isInstance).isPresent());
        }
    }

    @Override
    public void executionFinished(TestIdentifier test, TestExecutionResult result) {
        if (routing != null) {
            routing.leave(result.getStatus() != TestExecutionResult.Status.SUCCESSFUL, test.getDisplayName());
        }
    }

    @Override
    public void testPlanExecutionFinished(TestPlan plan) {
        if (routing != null) {
            root.removeHandler(routing);
            routing.close();
            consoles.forEach(root::addHandler);
            consoles.clear();
            routing = null;
        }
    }

    private static boolean isTagged(TestIdentifier test) {
        for (TestTag tag : test.getTags()) {
            if (tag.getName().equals(TAG)) {
                return true;
            }
        }
        return false;
    }

    private static String className(TestIdentifier test) {
        return test.getSource().map(source -> switch (source) {
            case ClassSource c -> c.getClassName();
            case MethodSource m -> m.getClassName();
            default -> null;
        }).orElse(null);
    }

    /** Where records go while the plan runs: a stack of the running class and test, each quiet or not. */
    private static final class Routing extends Handler {
        private record Context(String className, boolean quiet, boolean test, boolean ownsFile, List<LogRecord> held) {
        }

        private final List<Handler> consoles;
        private final Deque<Context> running = new ArrayDeque<>();
        private final Map<String, Writer> files = new HashMap<>();
        private final SimpleFormatter format = new SimpleFormatter();

        Routing(List<Handler> consoles) {
            this.consoles = List.copyOf(consoles);
        }

        /**
         * A test class opens its log file when it starts and closes it when it ends, never in between: tests that
         * count the process's open files (the soak's leak check) see it before and after their own work.
         */
        synchronized void enter(String className, boolean quiet, boolean test, boolean testClass) {
            Context outer = running.peek();
            String name = className != null ? className : outer != null ? outer.className() : null;
            boolean ownsFile = testClass && name != null && !files.containsKey(name);
            if (ownsFile) {
                file(name);
            }
            running.push(new Context(name, quiet || outer != null && outer.quiet(), test, ownsFile, new ArrayList<>()));
        }

        synchronized void leave(boolean failed, String displayName) {
            Context done = running.poll();
            if (done == null) {
                return;
            }
            if (done.quiet() && failed && !done.held().isEmpty()) {
                System.err.println("[" + displayName + " did not pass; what it logged on purpose follows]");
                done.held().forEach(this::toConsole);
            }
            if (done.ownsFile()) {
                closeQuietly(files.remove(done.className()));
            }
        }

        private Writer file(String className) {
            return files.computeIfAbsent(className, name -> {
                try {
                    Files.createDirectories(LOG_DIRECTORY);
                    return Files.newBufferedWriter(LOG_DIRECTORY.resolve(name + ".log"), StandardCharsets.UTF_8,
                            StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot open the test log of " + name, e);
                }
            });
        }

        private static void closeQuietly(Writer file) {
            if (file != null) {
                try {
                    file.close();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }

        @Override
        public synchronized void publish(LogRecord record) {
            if (!isLoggable(record)) {
                return;
            }
            Context context = running.peek();
            String className = context != null && context.className() != null ? context.className() : "outside-tests";
            try {
                file(className).write(format.format(record));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write the test log of " + className, e);
            }
            if (context != null && context.quiet()) {
                if (context.test()) {
                    context.held().add(record);
                }
            } else {
                toConsole(record);
            }
        }

        private void toConsole(LogRecord record) {
            for (Handler console : consoles) {
                console.publish(record);
                console.flush();
            }
        }

        @Override
        public synchronized void flush() {
            for (Writer file : files.values()) {
                try {
                    file.flush();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }

        @Override
        public synchronized void close() {
            flush();
            files.values().forEach(Routing::closeQuietly);
            files.clear();
        }
    }
}
