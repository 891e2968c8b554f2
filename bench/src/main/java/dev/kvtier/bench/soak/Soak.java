package dev.kvtier.bench.soak;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The soak of issue 9: random operations on a {@code KvTierCache} from several threads, every read checked against a
 * model, while faults of every kind the backend allows are injected in turn; it reports faults injected, operations,
 * failures by exception type, wrong bytes, hangs and leaks as a Markdown table (printed, and written to {@code --out}).
 * Run it with {@code ./mvnw -q -Psoak -DskipTests package -Dsoak.args="--duration 10m --backend cuda"}.
 * Exit status 0 when nothing went wrong (no wrong byte, hang, leak or unexpected failure), 1 otherwise, 2 on bad
 * arguments.
 *
 * <p>It lives in bench's main scope, like the simulator, because it is a program one runs for minutes, not a test: the
 * few fault controls it needs (the fake libcudart's {@code kvtierfake_*} calls, tmpfs, truncation, interrupts) are in
 * its own package rather than borrowed from test-jars. {@code SoakTest} runs it briefly in CI.
 */
public final class Soak {
    /** Exit status: nothing went wrong. */
    public static final int OK = 0;
    /** Exit status: a wrong byte, a hang, a leak or an unexpected failure. */
    public static final int FAILED = 1;
    /** Exit status: bad command line. */
    public static final int USAGE = 2;

    private Soak() {
    }

    /** Runs the soak with {@code args}; exits with its status. */
    public static void main(String[] args) {
        if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
            System.setProperty("java.util.logging.SimpleFormatter.format", "%4$s %3$s: %5$s%6$s%n");
        }
        System.exit(run(System.out, System.err, args));
    }

    /** Runs the soak; prints the summary to {@code out}, progress and problems to {@code err}; returns the exit status. */
    public static int run(PrintStream out, PrintStream err, String... args) {
        Options command = new Options();
        CommandLine commandLine = new CommandLine(command);
        SoakOptions options;
        try {
            commandLine.parseArgs(args);
            if (commandLine.isUsageHelpRequested()) {
                commandLine.usage(out);
                return OK;
            }
            options = command.toOptions();
        } catch (ParameterException | IllegalArgumentException e) {
            err.println("soak: " + e.getMessage());
            err.println("soak: --help lists the options");
            return USAGE;
        }
        SoakReport report;
        try {
            report = new SoakRun(options, out, err).run();
        } catch (IOException e) {
            err.println("soak: " + e);
            return FAILED;
        } catch (IllegalArgumentException e) {
            err.println("soak: " + e.getMessage());
            return USAGE;
        }
        String markdown = report.markdown("Soak " + String.join(" ", args));
        out.println(markdown);
        options.out().ifPresent(file -> write(file, markdown, err));
        return report.clean() ? OK : FAILED;
    }

    private static void write(Path file, String markdown, PrintStream err) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Files.writeString(file, markdown);
            err.println("soak: summary written to " + file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the summary to " + file, e);
        }
    }

    /** The command line, as picocli fills it. */
    @Command(name = "soak", sortOptions = false, usageHelpWidth = 110, description = {
            "Random operations from several threads on one KvTierCache per epoch, every read checked against a model,",
            "while faults are injected one kind per epoch: on the fake libcudart sync and async call failures, host",
            "functions that never run, slow copies past the transfer timeout, sticky errors (then close and reopen);",
            "on the host backend a full disk (small tmpfs), truncated extent files; on both interrupts and tiny budgets.",
            "Reports faults, operations, failures, wrong bytes, hangs and leaks (after every close).",
            "Exit status: 0 = clean, 1 = wrong bytes, hangs, leaks or unexpected failures, 2 = bad arguments.", ""})
    static final class Options {
        @Option(names = "--duration", paramLabel = "TIME", defaultValue = "10m", converter = DurationConverter.class,
                description = "how long to run, e.g. 10m, 90s, 1h  (default ${DEFAULT-VALUE})")
        Duration duration;

        @Option(names = "--threads", paramLabel = "N", defaultValue = "4",
                description = "operating threads  (default ${DEFAULT-VALUE})")
        int threads;

        @Option(names = "--backend", paramLabel = "B", defaultValue = "host", converter = BackendConverter.class,
                description = "host | cuda (over the fake libcudart unless --cudart or -Dkvtier.cudart names another)"
                        + "  (default ${DEFAULT-VALUE})")
        SoakOptions.BackendChoice backend;

        @Option(names = "--seed", paramLabel = "N", defaultValue = "42",
                description = "seeds operations, fault schedule and bytes  (default ${DEFAULT-VALUE})")
        long seed;

        @Option(names = "--progress", negatable = true, defaultValue = "true",
                description = "a progress line every 10 s or so on stderr  (default on; --no-progress)")
        boolean progress;

        @Option(names = "--epoch", paramLabel = "TIME", defaultValue = "20s", converter = DurationConverter.class,
                description = "one cache and one fault kind per epoch  (default ${DEFAULT-VALUE})")
        Duration epoch;

        @Option(names = "--keys", paramLabel = "N", defaultValue = "8",
                description = "keys per thread  (default ${DEFAULT-VALUE})")
        int keys;

        @Option(names = "--transfer-timeout", paramLabel = "TIME", defaultValue = "200ms", converter = DurationConverter.class,
                description = "the caches' transfer timeout; a hang is 3x this + 10 s  (default ${DEFAULT-VALUE})")
        Duration transferTimeout;

        @Option(names = "--cudart", paramLabel = "FILE", description = "the libcudart for --backend cuda")
        Path cudart;

        @Option(names = "--out", paramLabel = "FILE",
                description = "write the Markdown summary here, 'none' for nowhere  (default bench/target/soak-<backend>.md)")
        String out;

        @Option(names = "--faults", paramLabel = "LIST", split = ",", converter = FaultConverter.class,
                description = "only these fault kinds, e.g. truncate-extent,interrupts (sync-fail, async-fail, "
                        + "host-func-never, copy-delay, sticky, disk-full, truncate-extent, interrupts, tiny-budgets)"
                        + "  (default: every kind of the backend)")
        List<Fault> faults;

        @Option(names = {"-h", "--help"}, usageHelp = true, description = "this text")
        boolean help;

        SoakOptions toOptions() {
            String backendName = backend.name().toLowerCase(Locale.ROOT);
            Optional<Path> outFile = out == null ? Optional.of(Path.of("bench", "target", "soak-" + backendName + ".md"))
                    : out.equals("none") ? Optional.empty() : Optional.of(Path.of(out));
            return new SoakOptions(duration, epoch, threads, keys, backend, Optional.ofNullable(cudart), seed,
                    transferTimeout, progress, outFile, faults == null ? List.of() : faults);
        }
    }

    /** 10m, 90s, 500ms, 1h, 1m30s, or ISO-8601 (PT10M). */
    static final class DurationConverter implements ITypeConverter<Duration> {
        private static final Pattern PART = Pattern.compile("(\\d+)(ms|s|m|h)");

        @Override
        public Duration convert(String value) {
            String text = value.strip().toLowerCase(Locale.ROOT);
            if (text.startsWith("pt")) {
                try {
                    return Duration.parse(text);
                } catch (DateTimeParseException e) {
                    throw new CommandLine.TypeConversionException("'" + value + "' is not a duration (e.g. 10m, 90s, 500ms)");
                }
            }
            if (text.isEmpty()) {
                throw new CommandLine.TypeConversionException("'" + value + "' is not a duration (e.g. 10m, 90s, 500ms)");
            }
            Matcher m = PART.matcher(text);
            Duration total = Duration.ZERO;
            for (int at = 0; at < text.length(); at = m.end()) {
                if (!m.region(at, text.length()).lookingAt()) {
                    throw new CommandLine.TypeConversionException("'" + value + "' is not a duration (e.g. 10m, 90s, 500ms)");
                }
                long n = Long.parseLong(m.group(1));
                total = total.plus(switch (m.group(2)) {
                    case "ms" -> Duration.ofMillis(n);
                    case "s" -> Duration.ofSeconds(n);
                    case "m" -> Duration.ofMinutes(n);
                    default -> Duration.ofHours(n);
                });
            }
            return total;
        }
    }

    /** A fault kind by its name in lower case with dashes (truncate-extent). */
    static final class FaultConverter implements ITypeConverter<Fault> {
        @Override
        public Fault convert(String value) {
            try {
                return Fault.valueOf(value.strip().toUpperCase(Locale.ROOT).replace('-', '_'));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException("'" + value + "' is not a fault kind: "
                        + java.util.Arrays.stream(Fault.values()).map(f -> f.name().toLowerCase(Locale.ROOT).replace('_', '-'))
                        .collect(java.util.stream.Collectors.joining(" | ")));
            }
        }
    }

    /** host | cuda. */
    static final class BackendConverter implements ITypeConverter<SoakOptions.BackendChoice> {
        @Override
        public SoakOptions.BackendChoice convert(String value) {
            return switch (value.strip().toLowerCase(Locale.ROOT)) {
                case "host" -> SoakOptions.BackendChoice.HOST;
                case "cuda" -> SoakOptions.BackendChoice.CUDA;
                default -> throw new CommandLine.TypeConversionException("'" + value + "' is not a backend: host | cuda");
            };
        }
    }
}
