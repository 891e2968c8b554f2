package dev.kvtier.bench.sim;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;

import dev.kvtier.Backend;

/**
 * Everything a simulator run is told on the command line, validated. Immutable; {@link #parse} is the
 * only way in from text, and every default lives in {@link #defaults()}.
 *
 * @param model         KV shape per token
 * @param sessions      number of chat sessions, popularity Zipf-distributed
 * @param requests      number of requests (one new turn each)
 * @param turnLengths   tokens per turn
 * @param maxTurns      turns after which a conversation ends: its segments are removed and the session starts over
 * @param zipfExponent  popularity skew across sessions (0 = uniform)
 * @param gpuBudget     GPU tier budget
 * @param cpuBudget     pinned host tier budget
 * @param diskDirectory where the disk tier lives; empty means a fresh temporary directory deleted at the end
 * @param pageSizeBytes the cache's page size
 * @param policy        demotion policy
 * @param backend       copy backend
 * @param seed          workload seed: the same seed plays the same requests with the same bytes
 * @param threads       request threads
 * @param verify        how resident bytes are checked
 * @param maxSeconds    stop issuing requests after this long (0 = no limit)
 * @param progress      how progress is shown
 * @param sweep         run the budget sweep instead of one simulation
 * @param sweepSteps    sweep GPU budgets at 1/steps, 2/steps, ... 100% of the peak working set
 * @param sweepPolicies policies compared by the sweep
 * @param outDirectory  where the sweep writes its CSV and SVG
 * @param help          print the usage and exit 0
 */
public record SimOptions(
        ModelShape model,
        int sessions,
        int requests,
        TurnLengths turnLengths,
        int maxTurns,
        double zipfExponent,
        Budget gpuBudget,
        Budget cpuBudget,
        Optional<Path> diskDirectory,
        int pageSizeBytes,
        PolicyChoice policy,
        Backend backend,
        long seed,
        int threads,
        VerifyMode verify,
        int maxSeconds,
        ProgressMode progress,
        boolean sweep,
        int sweepSteps,
        List<PolicyChoice> sweepPolicies,
        Path outDirectory,
        boolean help) {

    /** How resident bytes are verified. */
    public enum VerifyMode {
        /** Read back and compare a CRC32C with the one computed when the segment was written. */
        CHECKSUM,
        /** Read back and compare every byte with freshly generated content. */
        FULL
    }

    /** How progress is shown while a run is going. */
    public enum ProgressMode {
        /** A live line on a terminal, periodic lines otherwise. */
        AUTO,
        /** Always periodic lines (every ~2 s). */
        LINES,
        /** Nothing until the summary. */
        OFF
    }

    public SimOptions {
        sweepPolicies = List.copyOf(sweepPolicies);
    }

    /** The defaults: the {@code tiny} model, 32 sessions, 2000 requests, GPU 25% and CPU 40% of the working set. */
    public static SimOptions defaults() {
        return new SimOptions(ModelShape.TINY, 32, 2000, new TurnLengths.Uniform(32, 512), 12, 1.0,
                new Budget.ShareOfWorkingSet(0.25), new Budget.ShareOfWorkingSet(0.40), Optional.empty(),
                64 * 1024, PolicyChoice.LFU, Backend.AUTO, 42, 2, VerifyMode.CHECKSUM, 0,
                ProgressMode.AUTO, false, 10, List.of(PolicyChoice.LFU, PolicyChoice.LRU),
                Path.of("bench", "results"), false);
    }

    /** The usage text printed by {@code --help} and after a bad argument. */
    public static String usage() {
        SimOptions d = defaults();
        return """
                Usage: simulate [options]     (every option also as --name=value)

                Plays a multi-turn chat serving workload against kvtier's KvTierCache: each request picks a
                session (Zipf popularity), makes all its earlier turns resident on the GPU tier in order, verifies
                their bytes, then appends the new turn. Exit status: 0 = no failures, 1 = a failure, 2 = bad arguments.

                Workload
                  --model NAME           tiny | llama-3.1-8b | llama-3.1-70b              (default %s)
                  --layers N --kv-heads N --head-dim N --dtype-bytes N   override the model's shape
                  --sessions N           chat sessions                                    (default %d)
                  --requests N           requests, one new turn each                      (default %d)
                  --turn-tokens SPEC     N | MIN..MAX | lognormal:MEDIAN,SIGMA[,CAP]       (default %s)
                  --max-turns N          turns per conversation before it starts over     (default %d)
                  --zipf S               session popularity exponent, 0 = uniform         (default %s)
                  --seed N               same seed, same requests, same bytes             (default %d)
                  --threads N            request threads                                  (default %d)
                  --max-seconds N        stop issuing requests after N seconds, 0 = never (default %d)
                Cache
                  --gpu-budget SIZE|P%%   GPU tier, e.g. 64MiB or 25%% of the peak working set (default %s)
                  --cpu-budget SIZE|P%%   pinned host tier                                (default %s)
                  --disk-dir DIR         disk tier directory          (default: a temporary directory, deleted)
                  --page-size SIZE       cache page size                                  (default %s)
                  --policy P             lfu (least-accessed first, LRU tie-break) | lru  (default %s)
                  --backend B            auto | cuda | host                               (default %s)
                Checking and output
                  --verify MODE          checksum (CRC32C) | full (every byte)            (default checksum)
                  --progress MODE        auto (live line on a terminal) | lines | off     (default auto)
                  --sweep                run every GPU budget step for each policy; write CSV and SVG
                  --sweep-steps N        GPU budgets 1/N .. N/N of the peak working set   (default %d)
                  --sweep-policies LIST  comma-separated policies                         (default lfu,lru)
                  --out DIR              where the sweep writes sim-sweep.csv/.svg        (default %s)
                  -h, --help             this text
                Sizes: 4096, 512KiB, 64MiB, 1.5GiB (binary; kB/MB/GB are powers of 1000).
                """.formatted(d.model.name(), d.sessions, d.requests, d.turnLengths.spec(), d.maxTurns,
                d.zipfExponent, d.seed, d.threads, d.maxSeconds, d.gpuBudget.spec(), d.cpuBudget.spec(),
                ByteSizes.format(d.pageSizeBytes), d.policy.optionValue(), optionValue(d.backend),
                d.sweepSteps, d.outDirectory);
    }

    /**
     * Parses a command line ({@code --name value} or {@code --name=value}) over the defaults.
     *
     * @throws UsageException naming the offending option and value
     */
    public static SimOptions parse(String... args) throws UsageException {
        Builder b = new Builder(defaults());
        Integer layers = null, kvHeads = null, headDim = null, dtypeBytes = null;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("-h") || arg.equals("--help")) {
                b.help = true;
                continue;
            }
            if (arg.equals("--sweep")) {
                b.sweep = true;
                continue;
            }
            if (!arg.startsWith("--") || arg.length() == 2) {
                throw new UsageException("unexpected argument '" + arg + "' (options start with --)");
            }
            final String name;
            final String value;
            int eq = arg.indexOf('=');
            if (eq >= 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            } else {
                name = arg;
                if (!KNOWN.contains(name)) {
                    throw new UsageException("unknown option " + name);
                }
                if (i + 1 >= args.length) {
                    throw new UsageException("option " + name + " needs a value");
                }
                i++;
                value = args[i];
            }
            switch (name) {
                case "--model" -> b.model = ModelShape.preset(value).orElseThrow(() -> bad(name, value,
                        "one of tiny, llama-3.1-8b, llama-3.1-70b"));
                case "--layers" -> layers = intIn(name, value, 1, 1024);
                case "--kv-heads" -> kvHeads = intIn(name, value, 1, 1024);
                case "--head-dim" -> headDim = intIn(name, value, 1, 65536);
                case "--dtype-bytes" -> dtypeBytes = intIn(name, value, 1, 16);
                case "--sessions" -> b.sessions = intIn(name, value, 1, 10_000_000);
                case "--requests" -> b.requests = intIn(name, value, 1, 100_000_000);
                case "--turn-tokens" -> b.turnLengths = parsed(name, value, TurnLengths::parse);
                case "--max-turns" -> b.maxTurns = intIn(name, value, 1, 100_000);
                case "--zipf" -> b.zipfExponent = doubleIn(name, value, 0, 10);
                case "--seed" -> b.seed = parsed(name, value, Long::parseLong);
                case "--threads" -> b.threads = intIn(name, value, 1, 1024);
                case "--max-seconds" -> b.maxSeconds = intIn(name, value, 0, 1_000_000);
                case "--gpu-budget" -> b.gpuBudget = parsed(name, value, Budget::parse);
                case "--cpu-budget" -> b.cpuBudget = parsed(name, value, Budget::parse);
                case "--disk-dir" -> b.diskDirectory = Optional.of(path(name, value));
                case "--page-size" -> {
                    long size = parsed(name, value, ByteSizes::parse);
                    if (size < 512 || size > (1 << 30) || Long.bitCount(size) != 1) {
                        throw bad(name, value, "a power of two between 512 B and 1 GiB");
                    }
                    b.pageSizeBytes = (int) size;
                }
                case "--policy" -> b.policy = choice(name, value, PolicyChoice.values(), PolicyChoice::optionValue);
                case "--backend" -> b.backend = choice(name, value, Backend.values(), SimOptions::optionValue);
                case "--verify" -> b.verify = choice(name, value, VerifyMode.values(), m -> lower(m.name()));
                case "--progress" -> b.progress = choice(name, value, ProgressMode.values(), m -> lower(m.name()));
                case "--sweep-steps" -> b.sweepSteps = intIn(name, value, 1, 100);
                case "--sweep-policies" -> {
                    LinkedHashSet<PolicyChoice> policies = new LinkedHashSet<>();
                    for (String part : value.split(",")) {
                        try {
                            policies.add(choice(name, part.strip(), PolicyChoice.values(), PolicyChoice::optionValue));
                        } catch (UsageException e) {
                            throw bad(name, value, "a comma-separated list, each one of lfu, lru; '" + part + "' is not");
                        }
                    }
                    b.sweepPolicies = List.copyOf(policies);
                }
                case "--out" -> b.outDirectory = path(name, value);
                default -> throw new UsageException("unknown option " + name);
            }
        }
        if (layers != null || kvHeads != null || headDim != null || dtypeBytes != null) {
            ModelShape m = b.model;
            b.model = new ModelShape(m.name() + " (custom)", layers != null ? layers : m.layers(),
                    kvHeads != null ? kvHeads : m.kvHeads(), headDim != null ? headDim : m.headDim(),
                    dtypeBytes != null ? dtypeBytes : m.dtypeBytes());
        }
        long largestSegment = (long) b.turnLengths.max() * b.model.bytesPerToken();
        if (largestSegment > Integer.MAX_VALUE) {
            throw new UsageException("--turn-tokens " + b.turnLengths.spec() + " with model " + b.model.describe()
                    + " makes segments of up to " + ByteSizes.format(largestSegment)
                    + "; the simulator needs segments under 2 GiB: lower --turn-tokens or the model's shape");
        }
        return b.build();
    }

    private static final List<String> KNOWN = List.of("--model", "--layers", "--kv-heads", "--head-dim",
            "--dtype-bytes", "--sessions", "--requests", "--turn-tokens", "--max-turns", "--zipf", "--seed",
            "--threads", "--max-seconds", "--gpu-budget", "--cpu-budget", "--disk-dir", "--page-size", "--policy",
            "--backend", "--verify", "--progress", "--sweep-steps", "--sweep-policies", "--out");

    /** This run with another GPU budget and policy (the sweep's points). */
    public SimOptions withGpuBudgetAndPolicy(Budget budget, PolicyChoice newPolicy) {
        Builder b = new Builder(this);
        b.gpuBudget = budget;
        b.policy = newPolicy;
        return b.build();
    }

    /** How {@code --backend} spells {@code backend}: its name in lower case. */
    static String optionValue(Backend backend) {
        return lower(backend.name());
    }

    private static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }

    private static UsageException bad(String option, String value, String expected) {
        return new UsageException("bad value for " + option + ": '" + value + "' (expected " + expected + ")");
    }

    private static int intIn(String option, String value, int min, int max) throws UsageException {
        try {
            long v = Long.parseLong(value.strip().replace("_", ""));
            if (v >= min && v <= max) {
                return (int) v;
            }
        } catch (NumberFormatException ignored) {
            // reported below with the expected range
        }
        throw bad(option, value, "a whole number from " + min + " to " + max);
    }

    private static double doubleIn(String option, String value, double min, double max) throws UsageException {
        try {
            double v = Double.parseDouble(value.strip());
            if (v >= min && v <= max) {
                return v;
            }
        } catch (NumberFormatException ignored) {
            // reported below with the expected range
        }
        throw bad(option, value, "a number from " + min + " to " + max);
    }

    private static <T> T parsed(String option, String value, Function<String, T> parser) throws UsageException {
        try {
            return parser.apply(value);
        } catch (IllegalArgumentException e) {
            // NumberFormatException is an IllegalArgumentException whose message is just the input: say what we want.
            String why = e instanceof NumberFormatException ? "a whole number" : e.getMessage();
            throw new UsageException("bad value for " + option + ": '" + value + "' (" + why + ")");
        }
    }

    private static Path path(String option, String value) throws UsageException {
        if (value.isBlank()) {
            throw bad(option, value, "a directory path");
        }
        try {
            return Path.of(value);
        } catch (InvalidPathException e) {
            throw bad(option, value, "a directory path: " + e.getReason());
        }
    }

    private static <E> E choice(String option, String value, E[] values, Function<E, String> spelling)
            throws UsageException {
        List<String> names = new ArrayList<>();
        for (E e : values) {
            String s = spelling.apply(e);
            if (s.equalsIgnoreCase(value.strip())) {
                return e;
            }
            names.add(s);
        }
        throw bad(option, value, "one of " + String.join(", ", names));
    }

    /** Mutable staging area for {@link #parse} and the {@code with...} copies. */
    private static final class Builder {
        ModelShape model;
        int sessions;
        int requests;
        TurnLengths turnLengths;
        int maxTurns;
        double zipfExponent;
        Budget gpuBudget;
        Budget cpuBudget;
        Optional<Path> diskDirectory;
        int pageSizeBytes;
        PolicyChoice policy;
        Backend backend;
        long seed;
        int threads;
        VerifyMode verify;
        int maxSeconds;
        ProgressMode progress;
        boolean sweep;
        int sweepSteps;
        List<PolicyChoice> sweepPolicies;
        Path outDirectory;
        boolean help;

        Builder(SimOptions o) {
            model = o.model;
            sessions = o.sessions;
            requests = o.requests;
            turnLengths = o.turnLengths;
            maxTurns = o.maxTurns;
            zipfExponent = o.zipfExponent;
            gpuBudget = o.gpuBudget;
            cpuBudget = o.cpuBudget;
            diskDirectory = o.diskDirectory;
            pageSizeBytes = o.pageSizeBytes;
            policy = o.policy;
            backend = o.backend;
            seed = o.seed;
            threads = o.threads;
            verify = o.verify;
            maxSeconds = o.maxSeconds;
            progress = o.progress;
            sweep = o.sweep;
            sweepSteps = o.sweepSteps;
            sweepPolicies = o.sweepPolicies;
            outDirectory = o.outDirectory;
            help = o.help;
        }

        SimOptions build() {
            return new SimOptions(model, sessions, requests, turnLengths, maxTurns, zipfExponent, gpuBudget,
                    cpuBudget, diskDirectory, pageSizeBytes, policy, backend, seed, threads, verify, maxSeconds,
                    progress, sweep, sweepSteps, sweepPolicies, outDirectory, help);
        }
    }
}
