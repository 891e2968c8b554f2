package dev.kvtier.bench.sim;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

import dev.kvtier.KvTierCache;
import dev.kvtier.bench.trace.MooncakeTrace;
import dev.kvtier.cluster.ClusterPublisher;
import dev.kvtier.cluster.ClusterTopology;
import dev.kvtier.cluster.JetStreamSyncBus;
import dev.kvtier.cluster.RankCacheBridge;
import dev.kvtier.prefix.BlockLayout;
import dev.kvtier.store.Tier;

/**
 * One rank of {@code Simulate --ranks N}: a child JVM started by {@link ClusterTraceRun} that opens its own
 * {@link KvTierCache} (its share of the budgets, its own disk directory), connects it to the cluster with a
 * {@link RankCacheBridge} over the parent's JetStream server, and plays the requests it is sent through a
 * {@link PrefixBlockPlayer} over the same trace file the parent plays.
 *
 * <p>Command channel, one line each way per command on stdin / stdout (logging goes to stderr):
 * <ul>
 *   <li>after start-up: {@code ready};</li>
 *   <li>{@code play Q} (request Q of the trace): plays it, ends the engine step, flushes the step's message to the
 *       bus, then answers {@code done CACHED GPU CPU DISK PREFIX_ON_GPU MISSING REMOTE} (blocks of the request: its
 *       cached prefix, that prefix's blocks per tier found, its leading blocks already on the GPU, blocks stored,
 *       blocks fetched from the remote store);</li>
 *   <li>{@code finish}: verifies and removes every block it wrote, flushes, answers
 *       {@code finished READ_BACKS BLOCKS_WRITTEN PUBLISHED_MESSAGES DROPPED_MESSAGES REMOTE_STATS} (the last
 *       {@link RemoteSummary#encode}) and exits;</li>
 *   <li>any failure: {@code failed MESSAGE} and exit status 1.</li>
 * </ul>
 * Sending the request's index instead of the request itself is safe because both sides read the same file.
 *
 * <p>Arguments: {@code NATS_URL STREAM RANK RANKS GPU_BYTES CPU_BYTES TRACE_FILE DISK_DIR SIM_ARGS...} (the
 * simulator's own options, for block size, page size, policy, backend, verification and seed).
 */
public final class ClusterRankProcess {
    /** How long a step's message may take to reach the server before the rank reports a failure. */
    static final Duration FLUSH_TIMEOUT = Duration.ofSeconds(30);

    private ClusterRankProcess() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        try {
            System.exit(run(args, out));
        } catch (Exception | Error e) {
            out.println("failed " + oneLine(SimulationRun.describe(e)));
            out.flush();
            System.exit(1);
        }
    }

    private static int run(String[] args, PrintStream out) throws Exception {
        String url = args[0];
        String stream = args[1];
        int rank = Integer.parseInt(args[2]);
        int ranks = Integer.parseInt(args[3]);
        long gpuBytes = Long.parseLong(args[4]);
        long cpuBytes = Long.parseLong(args[5]);
        Path traceFile = Path.of(args[6]);
        Path diskDirectory = Path.of(args[7]);
        String[] simArgs = java.util.Arrays.copyOfRange(args, 8, args.length);
        SimOptions options = SimOptions.parse(simArgs);
        BlockTrace trace = BlockTrace.of(MooncakeTrace.readAll(traceFile), traceFile.toString());
        CacheUnderTest.Settings settings = new CacheUnderTest.Settings(gpuBytes, cpuBytes, diskDirectory,
                options.effectivePageSizeBytes(), options.policy(), options.backend(), options.remoteStoreConfig());
        TraceCounters counters = new TraceCounters();
        BlockLayout layout = BlockLayout.of(BlockTrace.tokensPerBlock(), options.blockBytes());
        try (JetStreamSyncBus bus = new JetStreamSyncBus(url, stream, stream.toLowerCase(Locale.ROOT), 1_000_000,
                        Duration.ofSeconds(10), JetStreamSyncBus.Access.asRank(rank));
                KvTierCacheAdapter cache = KvTierCacheAdapter.wrap(KvTierCache.open(KvTierCacheAdapter.config(settings)));
                RankCacheBridge bridge = RankCacheBridge.connect(cache.kvTierCache(), layout, bus,
                        new ClusterTopology(ranks, 1, 1), rank, "localhost", ClusterPublisher.clockEpoch(), 1 << 16);
                Arena arena = Arena.ofConfined()) {
            PrefixBlockPlayer player = new PrefixBlockPlayer(
                    cache.prefixBlocks(BlockTrace.tokensPerBlock(), options.blockBytes()).orElseThrow(), trace, counters,
                    options.seed(), options.blockBytes(), options.verify(), arena);
            flush(bridge);
            out.println("ready");
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.startsWith("play ")) {
                    int request = Integer.parseInt(line.substring(5).strip());
                    long cached = counters.prefixCached;
                    long gpu = counters.foundOn[Tier.GPU.ordinal()];
                    long cpu = counters.foundOn[Tier.CPU.ordinal()];
                    long disk = counters.foundOn[Tier.DISK.ordinal()];
                    long onGpu = counters.prefixOnGpu;
                    long missing = counters.missing;
                    long remote = counters.foundRemote;
                    boolean ok = player.play(request);
                    bridge.endStep();
                    if (!ok || !flush(bridge)) {
                        return failed(out, counters, "request " + request);
                    }
                    out.println("done " + (counters.prefixCached - cached) + " " + (counters.foundOn[Tier.GPU.ordinal()] - gpu)
                            + " " + (counters.foundOn[Tier.CPU.ordinal()] - cpu) + " "
                            + (counters.foundOn[Tier.DISK.ordinal()] - disk) + " " + (counters.prefixOnGpu - onGpu) + " "
                            + (counters.missing - missing) + " " + (counters.foundRemote - remote));
                } else if (line.equals("finish")) {
                    player.verifyAndRemoveEverything();
                    bridge.endStep();
                    if (counters.failure() != null || !flush(bridge)) {
                        return failed(out, counters, "the final pass");
                    }
                    out.println("finished " + counters.readBacks + " " + counters.blocksWritten + " "
                            + bridge.publisher().publishedMessages() + " " + bridge.publisher().droppedMessages() + " "
                            + RemoteSummary.encode(cache.remoteStats()));
                    out.flush();
                    return 0;
                } else {
                    out.println("failed unknown command '" + oneLine(line) + "'");
                    out.flush();
                    return 1;
                }
                out.flush();
            }
            return 1; // the parent went away
        }
    }

    private static boolean flush(RankCacheBridge bridge) {
        return bridge.publisher().flush(FLUSH_TIMEOUT);
    }

    private static int failed(PrintStream out, TraceCounters counters, String during) {
        String why = counters.failure() != null ? counters.failure()
                : "its events did not reach the bus within " + FLUSH_TIMEOUT.toSeconds() + " s";
        out.println("failed " + oneLine(during + ": " + why));
        out.flush();
        return 1;
    }

    private static String oneLine(String text) {
        return text.replace('\n', ' ').replace('\r', ' ');
    }
}
