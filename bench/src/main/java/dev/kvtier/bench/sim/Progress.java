package dev.kvtier.bench.sim;

import java.io.PrintStream;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleFunction;

/**
 * Shows a run's progress from a daemon thread: on a terminal one line rewritten in place ({@code \r})
 * four times a second, otherwise a line every two seconds, or nothing. {@link #stop()} is idempotent.
 */
final class Progress {

    /** Where and how progress goes. */
    record Sink(PrintStream out, Style style) {
        /** Decides the style from the options and whether a terminal is attached. */
        static Sink of(SimOptions.ProgressMode mode, PrintStream out) {
            return new Sink(out, switch (mode) {
                case OFF -> Style.OFF;
                case LINES -> Style.LINES;
                case AUTO -> {
                    java.io.Console console = System.console();
                    // Since JDK 22 System.console() is non-null when redirected too; isTerminal() tells the truth.
                    yield console != null && console.isTerminal() ? Style.LIVE : Style.LINES;
                }
            });
        }

        static Sink off() {
            return new Sink(System.err, Style.OFF);
        }
    }

    /** How progress lines are printed. */
    enum Style { LIVE, LINES, OFF }

    private final Sink sink;
    private final Thread thread;
    private final long start = System.nanoTime();
    private final DoubleFunction<String> line;
    private volatile boolean stopped;
    private int lastLength;

    private Progress(Sink sink, DoubleFunction<String> line) {
        this.sink = sink;
        this.line = line;
        this.thread = sink.style() == Style.OFF ? null : Thread.ofPlatform().daemon().name("sim-progress").unstarted(this::loop);
    }

    /**
     * Starts showing {@code line.apply(secondsSinceStart)}.
     */
    static Progress start(Sink sink, DoubleFunction<String> line) {
        Progress progress = new Progress(sink, line);
        if (progress.thread != null) {
            progress.thread.start();
        }
        return progress;
    }

    private void loop() {
        long period = sink.style() == Style.LIVE ? 250 : 2000;
        while (!stopped) {
            try {
                Thread.sleep(period);
            } catch (InterruptedException e) {
                return;
            }
            if (!stopped) {
                print(false);
            }
        }
    }

    private synchronized void print(boolean last) {
        String text = "  " + line.apply((System.nanoTime() - start) / 1e9);
        if (sink.style() == Style.LIVE) {
            // Pad over the previous line's tail; a live line ends with a newline only once, at the end.
            String padded = text.length() < lastLength ? text + " ".repeat(lastLength - text.length()) : text;
            lastLength = text.length();
            sink.out().print("\r" + padded + (last ? System.lineSeparator() : ""));
        } else {
            sink.out().println(text);
        }
        sink.out().flush();
    }

    /** Stops the thread; on a terminal finishes the live line. */
    void stop() {
        if (thread == null || stopped) {
            return;
        }
        stopped = true;
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (sink.style() == Style.LIVE) {
            print(true);
        }
    }
}
