package dev.kvtier.bench.sim;

import dev.kvtier.ByteSizes;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.kvtier.bench.cluster.ClusterTraceCheck;
import dev.kvtier.bench.trace.MooncakeTrace;
import dev.kvtier.bench.trace.TraceRequest;
import dev.kvtier.cluster.ClusterRouter;
import dev.kvtier.cluster.ClusterTopology;
import dev.kvtier.cluster.JetStreamSyncBus;
import dev.kvtier.cluster.LocalNatsServer;
import dev.kvtier.RemoteStoreStats;
import dev.kvtier.prefix.BlockHash;
import dev.kvtier.sync.CacheRoutingHint;

/**
 * {@code Simulate --workload trace --ranks N}: plays a trace across N rank processes on this machine. Starts a
 * nats-server (JetStream, a free loopback port, a temporary store; stopped by PID), N {@link ClusterRankProcess}
 * child JVMs (same java and class path; each its own {@code KvTierCache} with 1/N of the GPU and CPU budgets, so the
 * cluster has the memory of one {@code --ranks 1} run, its own disk directory, and a {@code RankCacheBridge}
 * publishing its block events), and one {@link ClusterRouter} in this process reading the same stream.
 *
 * <p>Requests go one at a time in trace order: per request the router is asked for a hint over the request's block
 * hashes; with {@code --routing router} the request goes to a hinted rank (the least loaded of them), with no hint
 * to the least loaded rank; with {@code --routing round-robin} to the ranks in turn (the router still answers, to
 * count what it would have known). The rank plays the request (lookup, restore the prefix to its GPU, store the
 * missing suffix, verify every 16th block), ends its engine step and flushes the step's message; this process
 * then waits until the router has read the stream up to its end, so every hint reflects all earlier requests.
 * One request at a time means ranks do not run in parallel: the throughput is that of the whole loop (routing,
 * the command round trip, the event's trip through the server), not of N caches. Router prefetch hints are not
 * sent: the request follows its hint at once, so a prefetch could only race the rank's own restore.
 *
 * <p>Children are killed (forcibly) and the server stopped on every exit path. Not thread-safe; one run per
 * instance.
 */
final class ClusterTraceRun {
    /** How long a rank may take to start or to answer one command. */
    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(120);
    private static final String STREAM = "KVTIER_SIM";

    private final SimOptions options;
    private final String[] simArgs;
    private final BlockTrace trace;
    private final List<Rank> ranks = new ArrayList<>();
    private final long[] requestsPerRank;
    private final long[] foundOn = new long[3];
    private long prefixCached;
    private long prefixOnGpu;
    private long missing;
    private long foundRemote;
    private final List<RemoteStoreStats> remoteStats = new ArrayList<>();
    private long heldSomewhere;
    private long routedToHolder;
    private long hintShortfalls;
    /** Blocks in the router's index when the last request was played (the final pass then removes them all). */
    private long indexedAfterPlay;

    private ClusterTraceRun(SimOptions options, String[] simArgs, BlockTrace trace) {
        this.options = options;
        this.simArgs = simArgs;
        this.trace = trace;
        this.requestsPerRank = new long[options.ranks()];
    }

    /** One rank process and its command channel. */
    private record Rank(Process process, Writer commands, LinkedBlockingQueue<String> answers) {
        String ask(String command) throws IOException, InterruptedException {
            if (command != null) {
                commands.write(command + "\n");
                commands.flush();
            }
            long deadline = System.nanoTime() + ANSWER_TIMEOUT.toNanos();
            String answer = answers.poll(1, TimeUnit.SECONDS);
            // A rank that died answers nothing more: say so now rather than at the timeout (its last words first).
            while (answer == null && process.isAlive() && System.nanoTime() < deadline) {
                answer = answers.poll(1, TimeUnit.SECONDS);
            }
            if (answer == null) {
                answer = answers.poll(1, TimeUnit.SECONDS);
            }
            if (answer == null) {
                throw new IOException("rank process " + process.pid() + (process.isAlive()
                        ? " did not answer '" + command + "' within " + ANSWER_TIMEOUT.toSeconds() + " s"
                        : " exited with status " + process.exitValue() + " before answering '" + command + "'"));
            }
            return answer;
        }
    }

    /**
     * Plays {@code requests} (as {@code trace}) across {@code options.ranks()} ranks and prints the summary to
     * {@code out}.
     *
     * @param simArgs the simulator's command line, passed on to the ranks
     * @return whether the run completed with no failure
     */
    static boolean run(SimOptions options, String[] simArgs, List<TraceRequest> requests, BlockTrace trace,
            long gpuBudgetBytes, long cpuBudgetBytes, PrintStream out, PrintStream err) throws IOException {
        Path work = Files.createTempDirectory("kvtier-ranks-");
        try {
            return new ClusterTraceRun(options, simArgs, trace).play(work, requests, gpuBudgetBytes, cpuBudgetBytes, out, err);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("simulate: interrupted");
            return false;
        } finally {
            Simulate.deleteRecursively(work);
        }
    }

    private boolean play(Path work, List<TraceRequest> requests, long gpuBudgetBytes, long cpuBudgetBytes, PrintStream out,
            PrintStream err) throws IOException, InterruptedException {
        Path traceFile = work.resolve("trace.jsonl");
        MooncakeTrace.writeAll(traceFile, requests);
        int rankCount = options.ranks();
        ClusterTopology topology = new ClusterTopology(rankCount, 1, 1);
        long rankGpu = gpuBudgetBytes / rankCount;
        long rankCpu = cpuBudgetBytes / rankCount;
        String failure = null;
        long[] finished = new long[4];
        long playedNanos;
        int done = 0;
        try (LocalNatsServer nats = LocalNatsServer.start(work.resolve("nats"));
                JetStreamSyncBus bus = new JetStreamSyncBus(nats.url(), STREAM, STREAM.toLowerCase(Locale.ROOT), 1_000_000,
                        Duration.ofSeconds(10));
                ClusterRouter router = ClusterRouter.start(bus, topology, ClusterRouter.Options.inMemory(), null)) {
            try {
                for (int r = 0; r < rankCount; r++) {
                    Path disk = Files.createDirectories(work.resolve("rank" + r));
                    ranks.add(launch(nats.url(), r, rankCount, rankGpu, rankCpu, traceFile, disk));
                }
                for (Rank rank : ranks) {
                    String ready = rank.ask(null);
                    if (!ready.equals("ready")) {
                        throw new IOException("rank process " + rank.process().pid() + " did not start: " + ready);
                    }
                }
                long start = System.nanoTime();
                int next = 0;
                for (; done < trace.requests() && failure == null; done++) {
                    List<BlockHash> chain = chainOf(done);
                    CacheRoutingHint hint = router.route(chain);
                    int chosen;
                    if (options.routing() == SimOptions.Routing.ROUND_ROBIN) {
                        chosen = next;
                        next = (next + 1) % rankCount;
                    } else {
                        chosen = ClusterTraceCheck.leastLoaded(requestsPerRank, hint.hasTargets() ? hint.relevantRanks() : null);
                    }
                    requestsPerRank[chosen]++;
                    String answer = ranks.get(chosen).ask("play " + done);
                    if (!answer.startsWith("done ")) {
                        failure = "rank " + chosen + ": " + answer;
                        break;
                    }
                    account(hint, chosen, answer);
                    if (!router.awaitStreamSequence(bus.lastSequence(), ANSWER_TIMEOUT)) {
                        failure = "the router did not read the stream to its end within " + ANSWER_TIMEOUT.toSeconds() + " s";
                    }
                }
                playedNanos = System.nanoTime() - start;
                indexedAfterPlay = router.state().blockCount();
                for (int r = 0; r < rankCount && failure == null; r++) {
                    String answer = ranks.get(r).ask("finish");
                    if (!answer.startsWith("finished ")) {
                        failure = "rank " + r + ": " + answer;
                        break;
                    }
                    String[] f = answer.split(" ");
                    for (int i = 0; i < finished.length; i++) {
                        finished[i] += Long.parseLong(f[i + 1]);
                    }
                    remoteStats.add(RemoteSummary.decode(f[finished.length + 1]));
                }
                if (failure == null && !router.awaitStreamSequence(bus.lastSequence(), ANSWER_TIMEOUT)) {
                    failure = "the router did not read the final pass's events within " + ANSWER_TIMEOUT.toSeconds() + " s";
                }
                if (failure == null && router.state().blockCount() != 0) {
                    // Every rank removed every block it wrote: an index still holding some missed a removal.
                    failure = "the router's index still holds " + router.state().blockCount()
                            + " blocks after every rank removed all of its blocks";
                }
            } finally {
                for (Rank rank : ranks) {
                    rank.process().destroyForcibly();
                    rank.process().waitFor(10, TimeUnit.SECONDS);
                }
            }
            out.print(summary(rankCount, rankGpu, rankCpu, done, playedNanos, finished, router, failure));
            out.flush();
        }
        if (failure != null) {
            err.println("simulate: FAILED: " + failure);
        }
        return failure == null;
    }

    /** The request's block hashes, as its rank's {@link PrefixBlockPlayer} names them. */
    private List<BlockHash> chainOf(int request) {
        List<BlockHash> chain = new ArrayList<>(trace.end(request) - trace.start(request));
        for (int i = trace.start(request); i < trace.end(request); i++) {
            chain.add(new BlockHash(PrefixBlockPlayer.TRACE_NAMESPACE, trace.hashId(trace.block(i))));
        }
        return chain;
    }

    /** Adds one {@code done} answer; compares what the chosen rank found with what the router said it held. */
    private void account(CacheRoutingHint hint, int chosen, String answer) {
        String[] f = answer.split(" ");
        long cached = Long.parseLong(f[1]);
        for (int t = 0; t < foundOn.length; t++) {
            foundOn[t] += Long.parseLong(f[2 + t]);
        }
        prefixCached += cached;
        prefixOnGpu += Long.parseLong(f[5]);
        missing += Long.parseLong(f[6]);
        foundRemote += Long.parseLong(f[7]);
        if (hint.hasTargets()) {
            heldSomewhere++;
            if (hint.relevantRanks().contains(chosen)) {
                routedToHolder++;
                if (cached * BlockTrace.tokensPerBlock() < hint.reusableTokens()) {
                    hintShortfalls++; // the index claimed more than the rank found
                }
            }
        }
    }

    private Rank launch(String url, int rank, int rankCount, long gpuBytes, long cpuBytes, Path traceFile, Path disk)
            throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xmx512m"));
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith("kvtier.")) { // the library's settings (kvtier.cudart, kvtier.native.dir, ...)
                command.add("-D" + name + "=" + System.getProperty(name));
            }
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), ClusterRankProcess.class.getName(), url, STREAM,
                Integer.toString(rank), Integer.toString(rankCount), Long.toString(gpuBytes), Long.toString(cpuBytes),
                traceFile.toString(), disk.toString()));
        command.addAll(List.of(simArgs));
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        LinkedBlockingQueue<String> answers = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    answers.add(line);
                }
            } catch (IOException ended) {
                // the rank is gone: the next ask times out naming it
            }
        }, "kvtier-rank-" + rank + "-reader");
        reader.setDaemon(true);
        reader.start();
        return new Rank(process, new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), answers);
    }

    private String summary(int rankCount, long rankGpu, long rankCpu, int done, long playedNanos, long[] finished,
            ClusterRouter router, String failure) {
        long references = trace.referencesOfFirst(done);
        double seconds = playedNanos / 1e9;
        StringBuilder perRank = new StringBuilder();
        for (long n : requestsPerRank) {
            perRank.append(perRank.isEmpty() ? "" : " / ").append(n);
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(SummaryTable.row("trace", trace.source() + ", " + done + " of " + trace.requests() + " requests played"));
        rows.add(SummaryTable.row("ranks", String.format(Locale.ROOT, "%d processes, each GPU %s, CPU %s, own disk; routing %s",
                rankCount, ByteSizes.format(rankGpu), ByteSizes.format(rankCpu),
                options.routing().name().toLowerCase(Locale.ROOT).replace('_', '-'))));
        rows.add(SummaryTable.row("cluster block hit rate", String.format(Locale.ROOT,
                "GPU %.2f%%, CPU %.2f%%, disk %.2f%%,%s missing %.2f%%  (of %,d block references, on the rank chosen)",
                percent(foundOn[0], references), percent(foundOn[1], references), percent(foundOn[2], references),
                options.remote().isPresent() ? String.format(Locale.ROOT, " remote %.2f%%,", percent(foundRemote, references))
                        : "", percent(missing, references), references)));
        rows.addAll(RemoteSummary.rows(options.describeRemote(), RemoteSummary.sum(remoteStats),
                foundRemote, references, options.blockBytes()));
        rows.add(SummaryTable.row("cluster prefix hit rate", String.format(Locale.ROOT,
                "%.2f%% of block references in their request's cached prefix on the rank chosen (any tier), %.2f%% in its"
                        + " prefix on GPU", percent(prefixCached, references), percent(prefixOnGpu, references))));
        rows.add(SummaryTable.row("blocks stored", String.format(Locale.ROOT, "%,d", missing)));
        rows.add(SummaryTable.row("routed to a prefix holder", String.format(Locale.ROOT,
                "%,d of %,d requests whose prefix a rank held (%,d requests in all); rank found less than the hint: %,d",
                routedToHolder, heldSomewhere, done, hintShortfalls)));
        rows.add(SummaryTable.row("requests per rank", perRank.toString()));
        rows.add(SummaryTable.row("throughput", String.format(Locale.ROOT, "%,.0f requests/s, %,.0f block refs/s (%.2f s)",
                done / Math.max(seconds, 1e-9), references / Math.max(seconds, 1e-9), seconds)));
        rows.add(SummaryTable.row("events", String.format(Locale.ROOT,
                "%,d messages published, %,d dropped; router index %,d blocks after the play, %,d after the final"
                        + " pass; stream read to %,d, %d duplicates, %d gaps",
                finished[2], finished[3], indexedAfterPlay, router.state().blockCount(), router.state().lastStreamSequence(),
                router.state().duplicates(), router.state().streamGaps())));
        rows.add(SummaryTable.row("verified", String.format(Locale.ROOT, "%,d read-backs of %,d blocks written",
                finished[0], finished[1])));
        rows.add(SummaryTable.row("failures", failure == null ? "0" : "1: " + failure));
        return SummaryTable.render("simulate --ranks " + rankCount, rows);
    }

    private static double percent(long part, long whole) {
        return whole == 0 ? 0 : 100.0 * part / whole;
    }
}
