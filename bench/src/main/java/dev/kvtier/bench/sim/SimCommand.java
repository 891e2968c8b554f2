package dev.kvtier.bench.sim;

import dev.kvtier.ByteSizes;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

import dev.kvtier.Backend;
import dev.kvtier.RemoteStoreConfig;
import dev.kvtier.bench.trace.TraceGenerator;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * The simulator's command line as picocli sees it: one annotated field per option, typed, each with its
 * default; picocli parses, converts and writes the help. {@link SimOptions#parse} turns the filled fields
 * into the immutable {@link SimOptions} and every picocli error into one {@link UsageException} that names
 * the option, the value and what was expected. One instance parses once; not thread-safe.
 */
@Command(name = "simulate", sortOptions = false, usageHelpWidth = 118, synopsisHeading = "Usage: ",
        customSynopsis = "simulate [options]     (every option also as --name=value)",
        descriptionHeading = "%n",
        description = {
                "Plays a serving workload against kvtier's KvTierCache and checks every byte it gets back.",
                "  chat (default): each request picks a session (Zipf popularity), makes all its earlier turns resident",
                "    on the GPU tier in order, verifies their bytes, then appends the new turn.",
                "  trace: plays a block-level trace (Mooncake JSON lines, one 512-token block per hash id) in order on",
                "    one thread: a cached block is made resident on the GPU, a new one is put there, every 16th block",
                "    reference is read back and compared; budgets are shares of the trace's unique blocks, and the GPU",
                "    hit rate is set against the offline optimum (Belady) for the same GPU capacity.",
                "  --generate-trace KIND --trace FILE writes a generated trace (--requests, --seed) and exits;",
                "    with --workload trace it is played too (without --trace: generated in memory and played).",
                "Exit status: 0 = no failures, 1 = a failure, 2 = bad arguments.",
                ""},
        footer = {"", "Sizes: 4096, 512KiB, 64MiB, 1.5GiB (binary; kB/MB/GB are powers of 1000)."})
final class SimCommand {
    /** Whole-number options and their ranges: checked after parsing, and named in every error about them. */
    static final Map<String, long[]> WHOLE_RANGES = Map.ofEntries(
            Map.entry("--layers", new long[] {1, 1024}),
            Map.entry("--kv-heads", new long[] {1, 1024}),
            Map.entry("--head-dim", new long[] {1, 65536}),
            Map.entry("--dtype-bytes", new long[] {1, 16}),
            Map.entry("--sessions", new long[] {1, 10_000_000}),
            Map.entry("--requests", new long[] {1, 100_000_000}),
            Map.entry("--ranks", new long[] {1, 64}),
            Map.entry("--max-turns", new long[] {1, 100_000}),
            Map.entry("--threads", new long[] {1, 1024}),
            Map.entry("--max-seconds", new long[] {0, 1_000_000}),
            Map.entry("--sweep-steps", new long[] {1, 100}),
            Map.entry("--warmup-requests", new long[] {0, 100_000_000}),
            Map.entry("--seed", new long[] {Long.MIN_VALUE, Long.MAX_VALUE}));
    /** Decimal options and their ranges. */
    static final Map<String, double[]> DECIMAL_RANGES = Map.of("--zipf", new double[] {0, 10});

    // ------------------------------------------------------------------ workload

    @Option(names = "--workload", paramLabel = "W", defaultValue = "chat", converter = WorkloadConverter.class,
            description = "chat (generated multi-turn chat) | trace (a block-level trace)  (default ${DEFAULT-VALUE})")
    SimOptions.WorkloadKind workload;

    @Option(names = "--trace", paramLabel = "FILE", converter = PathConverter.class,
            description = "the trace (Mooncake JSON lines) to play, or to write with --generate-trace")
    Path trace;

    @Option(names = "--generate-trace", paramLabel = "KIND", converter = TraceKindConverter.class,
            description = "generate a trace: chat | tool-agent | doc-qa | chat-sessions | conversation | agent-loop | doc-qa-long"
                    + " | burst-chat | stress, with --requests requests from --seed")
    TraceGenerator.Kind generateTrace;

    @Option(names = "--block-bytes", paramLabel = "SIZE", defaultValue = "4KiB", converter = BlockBytesConverter.class,
            description = "bytes of KV per trace block (one hash id), or 'model': 512 tokens of --model  (default 4 KiB)")
    int blockBytes;

    @Option(names = "--trace-api", paramLabel = "API", defaultValue = "prefix", converter = TraceApiConverter.class,
            description = "prefix (ensurePrefixResident, storeBlocks per request) | segments (one segment"
                    + " per block, ensureResident or put per reference)  (default ${DEFAULT-VALUE})")
    SimOptions.TraceApi traceApi;

    @Option(names = "--ranks", paramLabel = "N", defaultValue = "1",
            description = "play the trace across N rank processes (own cache each, budgets divided by N) over a JetStream"
                    + " bus with one cluster router; 1 = one cache in this process  (default ${DEFAULT-VALUE})")
    int ranks;

    @Option(names = "--routing", paramLabel = "R", defaultValue = "router", converter = RoutingConverter.class,
            description = "with --ranks: router (the rank holding the longest prefix, else least loaded) | round-robin"
                    + "  (default ${DEFAULT-VALUE})")
    SimOptions.Routing routing;

    @Option(names = "--remote", paramLabel = "URI", converter = RemoteUriConverter.class,
            description = {"with --workload trace --trace-api prefix: share prefix blocks' bytes through a remote block"
                    + " store: every stored block is written through to it, and a request's blocks missing locally are"
                    + " fetched from it (redis://host:port, or inprocess:NAME within this process: not with --ranks)."
                    + " Keys are in namespace sim-s<seed>-b<block bytes>, whose blocks all have the same bytes"})
    URI remote;

    @Option(names = "--remote-key", paramLabel = "TEXT", defaultValue = SimOptions.SIMULATION_REMOTE_KEY,
            description = "the HMAC key values in the --remote store are signed with, at least 16 bytes of UTF-8"
                    + "  (default: a fixed key for simulation only, '${DEFAULT-VALUE}': never for a real deployment)")
    String remoteKey;

    @Option(names = "--remote-write-through", paramLabel = "WHEN", converter = WriteThroughConverter.class,
            description = "with --remote: when a block is written to the store: store (as it is stored) | disk (as it"
                    + " is demoted to DISK) | never (the cache only reads the store); the configuration's"
                    + " kvtier.remote.write.through  (default store)")
    RemoteStoreConfig.WriteThrough remoteWriteThrough;

    @Option(names = "--remote-prefill-rate", paramLabel = "TOKENS_PER_S", converter = PrefillRateConverter.class,
            description = "with --remote: the cost gate's prefill rate: remote blocks are fetched only when fetching"
                    + " them is estimated faster than recomputing them at this many tokens/s; 0 = always fetched; the"
                    + " configuration's kvtier.remote.prefill.tokens.per.second  (default 0)")
    Double remotePrefillRate;

    @Option(names = "--model", paramLabel = "NAME", defaultValue = "tiny", converter = ModelConverter.class,
            description = "tiny | llama-3.1-8b | llama-3.1-70b  (default ${DEFAULT-VALUE})")
    ModelShape model;

    @Option(names = "--layers", paramLabel = "N", description = "override the model's layers")
    Integer layers;

    @Option(names = "--kv-heads", paramLabel = "N", description = "override the model's KV heads")
    Integer kvHeads;

    @Option(names = "--head-dim", paramLabel = "N", description = "override the model's head dimension")
    Integer headDim;

    @Option(names = "--dtype-bytes", paramLabel = "N", description = "override the model's bytes per element")
    Integer dtypeBytes;

    @Option(names = "--sessions", paramLabel = "N", defaultValue = "32",
            description = "chat sessions  (default ${DEFAULT-VALUE})")
    int sessions;

    @Option(names = "--requests", paramLabel = "N", defaultValue = "2000",
            description = "requests, one new turn each; also the length of a generated trace  (default ${DEFAULT-VALUE})")
    int requests;

    @Option(names = "--turn-tokens", paramLabel = "SPEC", defaultValue = "32..512", converter = TurnLengthsConverter.class,
            description = "N | MIN..MAX | lognormal:MEDIAN,SIGMA[,CAP]  (default ${DEFAULT-VALUE})")
    TurnLengths turnLengths;

    @Option(names = "--max-turns", paramLabel = "N", defaultValue = "12",
            description = "turns per conversation before it starts over  (default ${DEFAULT-VALUE})")
    int maxTurns;

    @Option(names = "--zipf", paramLabel = "S", defaultValue = "1.0",
            description = "session popularity exponent, 0 = uniform  (default ${DEFAULT-VALUE})")
    double zipfExponent;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "42",
            description = "same seed, same requests, same bytes  (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--threads", paramLabel = "N", defaultValue = "2",
            description = "request threads (a trace plays on one)  (default ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--max-seconds", paramLabel = "N", defaultValue = "0",
            description = "stop issuing requests after N seconds, 0 = never  (default ${DEFAULT-VALUE})")
    int maxSeconds;

    @Option(names = "--warmup-requests", paramLabel = "N", defaultValue = "0",
            description = "trace: warm the JVM first (as JMH does) by playing N requests of another generated trace of the"
                    + " same kind (seed + 1; chat for a --trace file) through a throwaway cache, closed before the measured"
                    + " run starts on a fresh cold cache; the summary says so. 0 = a cold JVM  (default ${DEFAULT-VALUE})")
    int warmupRequests;

    // ------------------------------------------------------------------ cache

    @Option(names = "--gpu-budget", paramLabel = "SIZE|P%", defaultValue = "25%", converter = BudgetConverter.class,
            description = "GPU tier, e.g. 64MiB, or 25%% of the peak working set (trace: of the unique blocks)  (default 25%%)")
    Budget gpuBudget;

    @Option(names = "--cpu-budget", paramLabel = "SIZE|P%", defaultValue = "40%", converter = BudgetConverter.class,
            description = "pinned host tier  (default 40%%)")
    Budget cpuBudget;

    @Option(names = "--disk-dir", paramLabel = "DIR", converter = PathConverter.class,
            description = "disk tier directory  (default: a temporary directory, deleted)")
    Path diskDirectory;

    @Option(names = "--page-size", paramLabel = "SIZE", converter = PageSizeConverter.class,
            description = "cache page size  (default 64 KiB; trace: the block size rounded up to a power of two, at most 64 KiB)")
    Integer pageSizeBytes;

    @Option(names = "--policy", paramLabel = "P", defaultValue = "adaptive-s3-fifo", converter = PolicyConverter.class,
            description = "adaptive-s3-fifo (the library's default) | adaptive-s3-fifo-lfu | chain-s3-fifo | lfu (the seed's: least-accessed first,"
                    + " LRU tie-break) | lru | lru-2 | arc | s3-fifo | w-tinylfu | adaptive-continuation-s3-fifo"
                    + "  (default ${DEFAULT-VALUE})")
    PolicyChoice policy;

    @Option(names = "--backend", paramLabel = "B", defaultValue = "auto", converter = BackendConverter.class,
            description = "auto | cuda | host  (default ${DEFAULT-VALUE})")
    Backend backend;

    // ------------------------------------------------------------------ checking and output

    @Option(names = "--verify", paramLabel = "MODE", defaultValue = "checksum", converter = VerifyConverter.class,
            description = "checksum (CRC32C) | full (every byte)  (default ${DEFAULT-VALUE})")
    SimOptions.VerifyMode verify;

    @Option(names = "--progress", paramLabel = "MODE", defaultValue = "auto", converter = ProgressConverter.class,
            description = "auto (live line on a terminal) | lines | off  (default ${DEFAULT-VALUE})")
    SimOptions.ProgressMode progress;

    @Option(names = "--sweep", description = "run every GPU budget step for each policy; write CSV and SVG")
    boolean sweep;

    @Option(names = "--sweep-steps", paramLabel = "N", defaultValue = "10",
            description = "GPU budgets 1/N .. N/N of the peak working set (trace: unique blocks)  (default ${DEFAULT-VALUE})")
    int sweepSteps;

    @Option(names = "--sweep-budgets", paramLabel = "LIST", converter = BudgetListConverter.class,
            description = "comma-separated GPU budgets instead of --sweep-steps, e.g. 2%%,5%%,10%%")
    BudgetList sweepBudgets;

    @Option(names = "--sweep-policies", paramLabel = "LIST", defaultValue = "adaptive-s3-fifo,lru", converter = PolicyListConverter.class,
            description = "comma-separated policies  (default ${DEFAULT-VALUE})")
    PolicyList sweepPolicies;

    @Option(names = "--out", paramLabel = "DIR", defaultValue = "target", converter = PathConverter.class,
            description = "where the sweep writes sim-sweep.csv/.svg (trace: sim-trace-sweep.*), relative to the current"
                    + " directory  (default ${DEFAULT-VALUE})")
    Path outDirectory;

    @Option(names = "--jfr", paramLabel = "FILE", converter = PathConverter.class,
            description = "record kvtier's JFR events (transfers, rounds of making room, checksum failures) to FILE")
    Path jfr;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "this text")
    boolean help;

    /** A list of policies as one option value (so an error names the whole value). */
    record PolicyList(List<PolicyChoice> policies) {
    }

    /** A list of budgets as one option value. */
    record BudgetList(List<Budget> budgets) {
    }

    // ------------------------------------------------------------------ parsing

    /** A command line over a fresh instance, configured as the simulator has always parsed: the last value wins. */
    static CommandLine commandLine(SimCommand command) {
        CommandLine cl = new CommandLine(command);
        cl.setOverwrittenOptionsAllowed(true);
        cl.setUnmatchedArgumentsAllowed(false);
        cl.registerConverter(Integer.class, SimCommand::wholeInt);
        cl.registerConverter(Integer.TYPE, SimCommand::wholeInt);
        cl.registerConverter(Long.class, SimCommand::wholeLong);
        cl.registerConverter(Long.TYPE, SimCommand::wholeLong);
        cl.registerConverter(Double.class, SimCommand::decimal);
        cl.registerConverter(Double.TYPE, SimCommand::decimal);
        return cl;
    }

    /** The help text, without colours. */
    static String usage() {
        return commandLine(new SimCommand()).getUsageMessage(CommandLine.Help.Ansi.OFF);
    }

    /**
     * Checks the ranges of the numbers given on the command line (defaults are in range by construction).
     *
     * @throws UsageException naming the option, the value as written and the range
     */
    static void checkRanges(ParseResult result) throws UsageException {
        for (OptionSpec option : result.matchedOptions()) {
            String name = option.longestName();
            List<String> written = option.originalStringValues();
            String text = written.isEmpty() ? "" : written.getLast();
            long[] whole = WHOLE_RANGES.get(name);
            if (whole != null) {
                long value = ((Number) option.getValue()).longValue();
                if (value < whole[0] || value > whole[1]) {
                    throw bad(name, text, expectedWhole(name));
                }
            }
            double[] decimal = DECIMAL_RANGES.get(name);
            if (decimal != null) {
                double value = ((Number) option.getValue()).doubleValue();
                if (!(value >= decimal[0] && value <= decimal[1])) {
                    throw bad(name, text, expectedDecimal(name));
                }
            }
        }
    }

    /** One message for any picocli error: which option, which value, what was expected. */
    static UsageException translate(ParameterException e) {
        if (e instanceof CommandLine.UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
            String first = u.getUnmatched().getFirst();
            if (first.startsWith("-")) {
                int eq = first.indexOf('=');
                List<String> suggestions = u.getSuggestions();
                // picocli ranks the suggestions by similarity: the first is the likeliest meant.
                String hint = suggestions.isEmpty() ? "" : " (did you mean " + suggestions.getFirst() + "?)";
                return new UsageException("unknown option " + (eq >= 0 ? first.substring(0, eq) : first) + hint);
            }
            return new UsageException("unexpected argument '" + first + "' (options start with --)");
        }
        if (e instanceof CommandLine.MissingParameterException m && !m.getMissing().isEmpty()
                && m.getMissing().getFirst() instanceof OptionSpec option) {
            return new UsageException("option " + option.longestName() + " needs a value");
        }
        ArgSpec spec = e.getArgSpec();
        if (spec instanceof OptionSpec option && e.getValue() != null) {
            String name = option.longestName();
            String why;
            if (WHOLE_RANGES.containsKey(name)) {
                why = expectedWhole(name);
            } else if (DECIMAL_RANGES.containsKey(name)) {
                why = expectedDecimal(name);
            } else {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                why = cause.getMessage();
            }
            return new UsageException("bad value for " + name + ": '" + e.getValue() + "' (" + why + ")");
        }
        return new UsageException(e.getMessage());
    }

    static UsageException bad(String option, String value, String expected) {
        return new UsageException("bad value for " + option + ": '" + value + "' (" + expected + ")");
    }

    private static String expectedWhole(String name) {
        long[] range = WHOLE_RANGES.get(name);
        return range[0] == Long.MIN_VALUE ? "expected a whole number"
                : "expected a whole number from " + range[0] + " to " + range[1];
    }

    private static String expectedDecimal(String name) {
        double[] range = DECIMAL_RANGES.get(name);
        return "expected a number from " + range[0] + " to " + range[1];
    }

    // ------------------------------------------------------------------ converters

    private static long wholeLong(String text) {
        // Underscores as in Java literals (1_000_000): the hand parser took them, so picocli does too.
        return Long.parseLong(text.strip().replace("_", ""));
    }

    private static int wholeInt(String text) {
        long v = wholeLong(text);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new NumberFormatException(text);
        }
        return (int) v;
    }

    private static double decimal(String text) {
        return Double.parseDouble(text.strip());
    }

    /** A converter whose failures say what was expected (picocli puts the message in the error). */
    private abstract static class Expecting<T> implements ITypeConverter<T> {
        @Override
        public T convert(String value) {
            try {
                return parse(value);
            } catch (NumberFormatException e) {
                // Its message is just the input: say what we want instead.
                throw new CommandLine.TypeConversionException("a whole number");
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }

        abstract T parse(String value);
    }

    static <E> E choice(String value, E[] values, Function<E, String> spelling) {
        List<String> names = new ArrayList<>();
        for (E e : values) {
            String s = spelling.apply(e);
            if (s.equalsIgnoreCase(value.strip())) {
                return e;
            }
            names.add(s);
        }
        throw new IllegalArgumentException("expected one of " + String.join(", ", names));
    }

    static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }

    static final class WorkloadConverter extends Expecting<SimOptions.WorkloadKind> {
        @Override
        SimOptions.WorkloadKind parse(String value) {
            return choice(value, SimOptions.WorkloadKind.values(), k -> lower(k.name()));
        }
    }

    static final class TraceApiConverter extends Expecting<SimOptions.TraceApi> {
        @Override
        SimOptions.TraceApi parse(String value) {
            return choice(value, SimOptions.TraceApi.values(), k -> lower(k.name()));
        }
    }

    static final class RoutingConverter extends Expecting<SimOptions.Routing> {
        @Override
        SimOptions.Routing parse(String value) {
            return choice(value, SimOptions.Routing.values(), k -> lower(k.name()).replace('_', '-'));
        }
    }

    static final class TraceKindConverter extends Expecting<TraceGenerator.Kind> {
        @Override
        TraceGenerator.Kind parse(String value) {
            return choice(value, TraceGenerator.Kind.values(), TraceGenerator.Kind::optionValue);
        }
    }

    static final class ModelConverter extends Expecting<ModelShape> {
        @Override
        ModelShape parse(String value) {
            return ModelShape.preset(value.strip()).orElseThrow(() -> new IllegalArgumentException(
                    "expected one of " + String.join(", ", ModelShape.PRESETS.stream().map(ModelShape::name).toList())));
        }
    }

    static final class TurnLengthsConverter extends Expecting<TurnLengths> {
        @Override
        TurnLengths parse(String value) {
            return TurnLengths.parse(value);
        }
    }

    static final class BudgetConverter extends Expecting<Budget> {
        @Override
        Budget parse(String value) {
            return Budget.parse(value);
        }
    }

    static final class BudgetListConverter extends Expecting<BudgetList> {
        @Override
        BudgetList parse(String value) {
            List<Budget> budgets = new ArrayList<>();
            for (String part : value.split(",")) {
                try {
                    budgets.add(Budget.parse(part));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("a comma-separated list of budgets; '" + part + "': " + e.getMessage());
                }
            }
            return new BudgetList(List.copyOf(budgets));
        }
    }

    static final class PageSizeConverter extends Expecting<Integer> {
        @Override
        Integer parse(String value) {
            long size = ByteSizes.parse(value);
            if (size < 512 || size > (1 << 30) || Long.bitCount(size) != 1) {
                throw new IllegalArgumentException("expected a power of two between 512 B and 1 GiB");
            }
            return (int) size;
        }
    }

    /** {@code --block-bytes model}: resolved against the model once every option is known. */
    static final int BLOCK_BYTES_OF_MODEL = 0;
    /** The largest block the simulator plays. */
    static final int MAX_BLOCK_BYTES = 256 << 20;

    static final class BlockBytesConverter extends Expecting<Integer> {
        @Override
        Integer parse(String value) {
            if (value.strip().equalsIgnoreCase("model")) {
                return BLOCK_BYTES_OF_MODEL;
            }
            long size = ByteSizes.parse(value);
            if (size < 16 || size > MAX_BLOCK_BYTES) {
                throw new IllegalArgumentException("expected a size between 16 B and 256 MiB, or 'model'");
            }
            return (int) size;
        }
    }

    static final class PolicyConverter extends Expecting<PolicyChoice> {
        @Override
        PolicyChoice parse(String value) {
            return choice(value, PolicyChoice.values(), PolicyChoice::optionValue);
        }
    }

    static final class PolicyListConverter extends Expecting<PolicyList> {
        @Override
        PolicyList parse(String value) {
            LinkedHashSet<PolicyChoice> policies = new LinkedHashSet<>();
            for (String part : value.split(",")) {
                try {
                    policies.add(choice(part, PolicyChoice.values(), PolicyChoice::optionValue));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("expected a comma-separated list, each " + e.getMessage()
                            .replace("expected ", "") + "; '" + part + "' is not");
                }
            }
            return new PolicyList(List.copyOf(policies));
        }
    }

    static final class BackendConverter extends Expecting<Backend> {
        @Override
        Backend parse(String value) {
            return choice(value, Backend.values(), b -> lower(b.name()));
        }
    }

    static final class VerifyConverter extends Expecting<SimOptions.VerifyMode> {
        @Override
        SimOptions.VerifyMode parse(String value) {
            return choice(value, SimOptions.VerifyMode.values(), m -> lower(m.name()));
        }
    }

    static final class ProgressConverter extends Expecting<SimOptions.ProgressMode> {
        @Override
        SimOptions.ProgressMode parse(String value) {
            return choice(value, SimOptions.ProgressMode.values(), m -> lower(m.name()));
        }
    }

    static final class RemoteUriConverter extends Expecting<URI> {
        @Override
        URI parse(String value) {
            URI uri;
            try {
                uri = new URI(value.strip());
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("expected a store URI such as redis://127.0.0.1:6379 or inprocess:sim: "
                        + e.getReason());
            }
            if (uri.getScheme() == null || uri.getSchemeSpecificPart().isEmpty()) {
                throw new IllegalArgumentException("expected a store URI with a scheme, such as redis://127.0.0.1:6379 or"
                        + " inprocess:sim");
            }
            return uri;
        }
    }

    static final class WriteThroughConverter extends Expecting<RemoteStoreConfig.WriteThrough> {
        @Override
        RemoteStoreConfig.WriteThrough parse(String value) {
            return choice(value, RemoteStoreConfig.WriteThrough.values(), SimOptions::optionValue);
        }
    }

    static final class PrefillRateConverter extends Expecting<Double> {
        @Override
        Double parse(String value) {
            double rate;
            try {
                rate = Double.parseDouble(value.strip());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("expected tokens per second, a number >= 0; 0 = no cost gate");
            }
            if (!Double.isFinite(rate) || rate < 0) {
                throw new IllegalArgumentException("expected tokens per second, a finite number >= 0; 0 = no cost gate");
            }
            return rate;
        }
    }

    static final class PathConverter extends Expecting<Path> {
        @Override
        Path parse(String value) {
            if (value.isBlank()) {
                throw new IllegalArgumentException("expected a path");
            }
            try {
                return Path.of(value);
            } catch (InvalidPathException e) {
                throw new IllegalArgumentException("expected a path: " + e.getReason());
            }
        }
    }
}
