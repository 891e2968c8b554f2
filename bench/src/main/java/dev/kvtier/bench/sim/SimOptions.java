package dev.kvtier.bench.sim;

import dev.kvtier.ByteSizes;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import dev.kvtier.Backend;
import dev.kvtier.RemoteStoreConfig;
import dev.kvtier.bench.trace.TraceGenerator;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * Everything a simulator run is told on the command line, validated. Immutable; {@link #parse} is the
 * only way in from text. The options, their types, their defaults and the help text are declared once, in
 * {@link SimCommand} (picocli); {@link #defaults()} is what an empty command line gives.
 *
 * @param model         KV shape per token
 * @param sessions      number of chat sessions, popularity Zipf-distributed
 * @param requests      number of requests (one new turn each); also the length of a generated trace
 * @param turnLengths   tokens per turn
 * @param maxTurns      turns after which a conversation ends: its segments are removed and the session starts over
 * @param zipfExponent  popularity skew across sessions (0 = uniform)
 * @param gpuBudget     GPU tier budget (a share means of the peak working set; for a trace, of its unique blocks)
 * @param cpuBudget     pinned host tier budget
 * @param diskDirectory where the disk tier lives; empty means a fresh temporary directory deleted at the end
 * @param pageSizeBytes the cache's page size; 0 = automatic (see {@link #effectivePageSizeBytes()})
 * @param policy        demotion policy
 * @param backend       copy backend
 * @param seed          workload seed: the same seed plays the same requests with the same bytes
 * @param threads       request threads (the chat workload; a trace plays on one)
 * @param verify        how resident bytes are checked
 * @param maxSeconds    stop issuing requests after this long (0 = no limit)
 * @param progress      how progress is shown
 * @param sweep         run the budget sweep instead of one simulation
 * @param sweepSteps    sweep GPU budgets at 1/steps, 2/steps, ... 100% of the peak working set
 * @param sweepPolicies policies compared by the sweep
 * @param outDirectory  where the sweep writes its CSV and SVG
 * @param workload      which workload: the generated chat, or a block-level trace
 * @param trace         the trace file: played with {@code --workload trace}, written with {@code --generate-trace}
 * @param generateTrace generate a trace of this kind ({@link #requests} requests from {@link #seed})
 * @param blockBytes    bytes of KV per trace block ({@code --block-bytes model}: 512 tokens of the model)
 * @param traceApi      which cache API plays a trace: the prefix-block API (default) or one segment per block
 * @param sweepBudgets  GPU budgets the sweep runs instead of the {@link #sweepSteps}; empty = the steps
 * @param jfr           where to write a JFR recording of kvtier's events for the whole run; empty = none
 * @param ranks         rank processes a trace is played across ({@code --ranks}; 1 = one cache in this process)
 * @param routing       how a request picks its rank when {@link #ranks} &gt; 1
 * @param warmupRequests requests of a separately generated trace played through a throwaway cache before a trace
 *                      run, to warm the JVM (its JIT, heap and code paths) as JMH's warm-up iterations do; 0 = none
 * @param remote        the remote block store prefix blocks are shared through ({@code --remote}); empty = none
 * @param remoteKey     the HMAC key of the remote store's values ({@code --remote-key})
 * @param remoteWriteThrough when blocks are written to the remote store ({@code --remote-write-through})
 * @param remotePrefillRate the cost gate's prefill rate in tokens/s, 0 = no gate ({@code --remote-prefill-rate})
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
        WorkloadKind workload,
        Optional<Path> trace,
        Optional<TraceGenerator.Kind> generateTrace,
        int blockBytes,
        TraceApi traceApi,
        List<Budget> sweepBudgets,
        Optional<Path> jfr,
        int ranks,
        Routing routing,
        int warmupRequests,
        Optional<URI> remote,
        String remoteKey,
        RemoteStoreConfig.WriteThrough remoteWriteThrough,
        double remotePrefillRate,
        boolean help) {

    /**
     * The {@code --remote-key} a run has when none is given: public, so fit for simulation only (anyone who reads this
     * can sign values a store shared with the simulator serves).
     */
    public static final String SIMULATION_REMOTE_KEY = "kvtier-simulator-key-not-secret";

    /** The page size the chat workload gets by default. */
    public static final int DEFAULT_PAGE_SIZE = 64 * 1024;

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

    /** Which workload a run plays. */
    public enum WorkloadKind {
        /** Multi-turn chat generated from the options (sessions, turns, Zipf popularity). */
        CHAT,
        /** A block-level trace in the Mooncake format, from a file or generated. */
        TRACE
    }

    /** Which cache API plays a trace. */
    /** How {@code --ranks N} picks the rank of a request. */
    public enum Routing {
        /** The rank the cluster router names as holding the longest prefix; least loaded without a hint. */
        ROUTER,
        /** Ranks in turn, ignoring the router (the baseline). */
        ROUND_ROBIN
    }

    public enum TraceApi {
        /** {@code PrefixBlockCache}: per request ensurePrefixResident (it says where each block was), storeBlocks. */
        PREFIX,
        /** One segment per block: ensureResident or put per reference (the baseline before the prefix API). */
        SEGMENTS
    }

    public SimOptions {
        sweepPolicies = List.copyOf(sweepPolicies);
        sweepBudgets = List.copyOf(sweepBudgets);
    }

    /** What an empty command line gives: the {@code tiny} model, 32 sessions, 2000 requests, GPU 25% and CPU 40%. */
    public static SimOptions defaults() {
        try {
            return parse();
        } catch (UsageException e) {
            throw new AssertionError("the declared defaults do not parse: " + e.getMessage(), e);
        }
    }

    /** The usage text printed by {@code --help} and after a bad argument (generated by picocli). */
    public static String usage() {
        return SimCommand.usage();
    }

    /**
     * Parses a command line ({@code --name value} or {@code --name=value}) over the defaults; when an option
     * is given twice the last value counts.
     *
     * @throws UsageException naming the offending option and value
     */
    public static SimOptions parse(String... args) throws UsageException {
        SimCommand c = new SimCommand();
        ParseResult result;
        try {
            result = SimCommand.commandLine(c).parseArgs(args);
        } catch (ParameterException e) {
            throw SimCommand.translate(e);
        }
        SimCommand.checkRanges(result);
        ModelShape model = c.model;
        if (c.layers != null || c.kvHeads != null || c.headDim != null || c.dtypeBytes != null) {
            model = new ModelShape(model.name() + " (custom)", c.layers != null ? c.layers : model.layers(),
                    c.kvHeads != null ? c.kvHeads : model.kvHeads(), c.headDim != null ? c.headDim : model.headDim(),
                    c.dtypeBytes != null ? c.dtypeBytes : model.dtypeBytes());
        }
        if (c.workload == WorkloadKind.CHAT) {
            long largestSegment = (long) c.turnLengths.max() * model.bytesPerToken();
            if (largestSegment > Integer.MAX_VALUE) {
                throw new UsageException("--turn-tokens " + c.turnLengths.spec() + " with model " + model.describe()
                        + " makes segments of up to " + ByteSizes.format(largestSegment)
                        + "; the simulator needs segments under 2 GiB: lower --turn-tokens or the model's shape");
            }
            if (c.generateTrace != null && c.trace == null) {
                throw new UsageException("--generate-trace " + c.generateTrace.optionValue() + " needs --trace FILE to write"
                        + " the trace to, or --workload trace to play it");
            }
            if (c.trace != null && c.generateTrace == null) {
                throw new UsageException("--trace " + c.trace + " is read only with --workload trace"
                        + " (or written with --generate-trace KIND)");
            }
        } else if (c.trace == null && c.generateTrace == null) {
            throw new UsageException("--workload trace needs --trace FILE (a Mooncake trace) or --generate-trace KIND"
                    + " (one of chat, tool-agent, doc-qa, chat-sessions, conversation, agent-loop, doc-qa-long, burst-chat,"
                    + " stress)");
        }
        if (c.ranks > 1 && (c.workload != WorkloadKind.TRACE || c.traceApi != TraceApi.PREFIX || c.sweep)) {
            throw new UsageException("--ranks " + c.ranks + " plays a trace through the prefix-block API once: it needs"
                    + " --workload trace with --trace-api prefix and no --sweep");
        }
        if (c.remote != null) {
            if (c.workload != WorkloadKind.TRACE || c.traceApi != TraceApi.PREFIX || c.sweep) {
                throw new UsageException("--remote " + c.remote + " shares prefix blocks: it needs --workload trace with"
                        + " --trace-api prefix and no --sweep");
            }
            if (c.ranks > 1 && "inprocess".equalsIgnoreCase(c.remote.getScheme())) {
                throw new UsageException("--remote " + c.remote + " is a store inside one JVM, and --ranks " + c.ranks
                        + " runs each rank in a process of its own: give a shared store (redis://host:port) or no --ranks");
            }
        }
        if (c.remote == null && (c.remoteWriteThrough != null || c.remotePrefillRate != null)) {
            throw new UsageException((c.remoteWriteThrough != null ? "--remote-write-through "
                    + optionValue(c.remoteWriteThrough) : "--remote-prefill-rate " + c.remotePrefillRate)
                    + " sets how blocks are shared through a remote block store: it needs --remote URI");
        }
        if (c.remoteKey.getBytes(StandardCharsets.UTF_8).length < RemoteStoreConfig.MIN_KEY_BYTES) {
            // The length only: a key is not printed.
            throw new UsageException("bad value for --remote-key: a key of " + c.remoteKey.getBytes(StandardCharsets.UTF_8).length
                    + " bytes (expected at least " + RemoteStoreConfig.MIN_KEY_BYTES + " bytes of UTF-8)");
        }
        if (c.warmupRequests > 0 && (c.workload != WorkloadKind.TRACE || c.sweep || c.ranks > 1)) {
            throw new UsageException("--warmup-requests " + c.warmupRequests + " warms the JVM before one trace run in this"
                    + " process: it needs --workload trace, without --sweep and without --ranks above 1");
        }
        int blockBytes = c.blockBytes;
        if (blockBytes == SimCommand.BLOCK_BYTES_OF_MODEL) {
            long bytes = (long) BlockTrace.tokensPerBlock() * model.bytesPerToken();
            if (bytes > SimCommand.MAX_BLOCK_BYTES) {
                throw new UsageException("--block-bytes model with model " + model.describe() + " makes blocks of "
                        + ByteSizes.format(bytes) + "; the simulator plays blocks of at most 256 MiB: give a size");
            }
            blockBytes = (int) bytes;
        }
        return new SimOptions(model, c.sessions, c.requests, c.turnLengths, c.maxTurns, c.zipfExponent, c.gpuBudget,
                c.cpuBudget, Optional.ofNullable(c.diskDirectory), c.pageSizeBytes == null ? 0 : c.pageSizeBytes,
                c.policy, c.backend, c.seed, c.threads, c.verify, c.maxSeconds, c.progress, c.sweep, c.sweepSteps,
                c.sweepPolicies.policies(), c.outDirectory, c.workload, Optional.ofNullable(c.trace),
                Optional.ofNullable(c.generateTrace), blockBytes, c.traceApi,
                c.sweepBudgets == null ? List.of() : c.sweepBudgets.budgets(), Optional.ofNullable(c.jfr), c.ranks, c.routing,
                c.warmupRequests, Optional.ofNullable(c.remote), c.remoteKey,
                c.remoteWriteThrough == null ? RemoteStoreConfig.WriteThrough.ON_STORE : c.remoteWriteThrough,
                c.remotePrefillRate == null ? 0 : c.remotePrefillRate, c.help);
    }

    /**
     * The page size the cache is opened with: {@code --page-size} when given; otherwise 64 KiB for the chat
     * workload, and for a trace the block size rounded up to a power of two, from 512 B to 64 KiB, so that a
     * block wastes no page space and the GPU budget in bytes holds exactly as many blocks as it says.
     */
    public int effectivePageSizeBytes() {
        if (pageSizeBytes != 0) {
            return pageSizeBytes;
        }
        if (workload == WorkloadKind.CHAT) {
            return DEFAULT_PAGE_SIZE;
        }
        int rounded = blockBytes <= 512 ? 512 : Integer.highestOneBit(blockBytes - 1) << 1;
        return Math.min(rounded, DEFAULT_PAGE_SIZE);
    }

    /** This run with another GPU budget and policy (the sweep's points). */
    public SimOptions withGpuBudgetAndPolicy(Budget budget, PolicyChoice newPolicy) {
        return new SimOptions(model, sessions, requests, turnLengths, maxTurns, zipfExponent, budget, cpuBudget,
                diskDirectory, pageSizeBytes, newPolicy, backend, seed, threads, verify, maxSeconds, progress, sweep,
                sweepSteps, sweepPolicies, outDirectory, workload, trace, generateTrace, blockBytes, traceApi, sweepBudgets,
                jfr, ranks, routing, warmupRequests, remote, remoteKey, remoteWriteThrough, remotePrefillRate, help);
    }

    /**
     * The options of the warm-up run before this one ({@link #warmupRequests}): {@code requests} requests of a trace
     * of its own ({@link #warmupSeed()}), played to the end without progress, JFR or a warm-up of its own, in a
     * temporary disk directory (never this run's {@code --disk-dir}); budgets, block size, page size, policy,
     * backend, API and verification as this run's.
     */
    SimOptions forWarmUp() {
        return new SimOptions(model, sessions, warmupRequests, turnLengths, maxTurns, zipfExponent, gpuBudget, cpuBudget,
                Optional.empty(), pageSizeBytes, policy, backend, warmupSeed(), threads, verify, 0, ProgressMode.OFF, false,
                sweepSteps, sweepPolicies, outDirectory, workload, Optional.empty(), generateTrace, blockBytes, traceApi,
                sweepBudgets, Optional.empty(), 1, routing, 0, Optional.empty(), remoteKey, remoteWriteThrough,
                remotePrefillRate, help);
    }

    /** This run with another CPU budget (the warm-up's, resolved against its own trace). */
    SimOptions withCpuBudget(Budget budget) {
        return new SimOptions(model, sessions, requests, turnLengths, maxTurns, zipfExponent, gpuBudget, budget,
                diskDirectory, pageSizeBytes, policy, backend, seed, threads, verify, maxSeconds, progress, sweep,
                sweepSteps, sweepPolicies, outDirectory, workload, trace, generateTrace, blockBytes, traceApi, sweepBudgets,
                jfr, ranks, routing, warmupRequests, remote, remoteKey, remoteWriteThrough, remotePrefillRate, help);
    }

    /** The warm-up trace's seed: never the measured one's, so the warm-up plays other blocks than the run it warms. */
    long warmupSeed() {
        return seed + 1;
    }

    /**
     * The namespace of the remote store's keys: one per seed and block size, the two that fix a block's bytes given
     * its hash id ({@link BlockContents}), so every value in it is the block's one right content, whichever run or
     * rank wrote it.
     */
    public String remoteNamespace() {
        return "sim-s" + Long.toUnsignedString(seed) + "-b" + blockBytes;
    }

    /**
     * The cache's remote store settings of {@code --remote}, {@code --remote-key}, {@code --remote-write-through} and
     * {@code --remote-prefill-rate}; empty without {@code --remote}.
     */
    public Optional<RemoteStoreConfig> remoteStoreConfig() {
        return remote.map(uri -> RemoteStoreConfig.builder().store(uri).key(remoteKey.getBytes(StandardCharsets.UTF_8))
                .namespace(remoteNamespace()).writeThrough(remoteWriteThrough).prefillTokensPerSecond(remotePrefillRate)
                .build());
    }

    /** The remote store as the summary names it: its URI, when blocks are written to it, and the cost gate. */
    String describeRemote() {
        return remote.map(uri -> uri + ", write-through " + optionValue(remoteWriteThrough) + ", cost gate "
                + (remotePrefillRate > 0 ? String.format(Locale.ROOT, "%,.0f tokens/s", remotePrefillRate) : "off"))
                .orElse("");
    }

    /** How {@code --remote-write-through} spells {@code mode}. */
    static String optionValue(RemoteStoreConfig.WriteThrough mode) {
        return switch (mode) {
            case ON_STORE -> "store";
            case ON_DEMOTION_TO_DISK -> "disk";
            case NEVER -> "never";
        };
    }

    /** How {@code --backend} spells {@code backend}: its name in lower case. */
    static String optionValue(Backend backend) {
        return backend.name().toLowerCase(Locale.ROOT);
    }
}
