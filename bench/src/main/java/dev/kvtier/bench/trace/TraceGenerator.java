package dev.kvtier.bench.trace;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

import dev.kvtier.bench.sim.ZipfSampler;

/**
 * Generates block-level traces in the Mooncake form ({@link TraceRequest}) from a seed: the same kind, count
 * and seed give the same trace on every machine. Three workloads, each a mix of requests from several
 * concurrent users interleaved in arrival order (Poisson arrivals, {@value #MEAN_GAP_MS} ms apart on average):
 * <ul>
 *   <li>{@link Kind#CHAT}: multi-turn conversations over a few shared system prompts (Zipf popularity);
 *       each turn's input is the previous turn's input, its answer and a new user message.</li>
 *   <li>{@link Kind#TOOL_AGENT}: agents with a long shared tool specification, then short loops of tool
 *       call and tool result appended step by step; a finished agent sometimes reruns the same task.</li>
 *   <li>{@link Kind#DOC_QA}: questions over documents with Zipf popularity behind one shared system prompt.</li>
 *   <li>{@link Kind#CHAT_SESSIONS}: the chat of {@link Kind#CHAT} timed like people: conversations start at
 *       random (Poisson) and each next turn comes a user think time (heavy-tailed) after the previous answer
 *       was generated, so many conversations overlap and a turn's arrival depends on its own conversation's
 *       clock, not on a uniform draw among conversations.</li>
 * </ul>
 * Five more families are built to look like production traces of LLM serving rather than to suit one policy:
 * {@link Kind#CONVERSATION}, {@link Kind#AGENT_LOOP}, {@link Kind#DOC_QA_LONG}, {@link Kind#BURST_CHAT} and the
 * adversarial {@link Kind#STRESS}. Every request of these starts with one shared prefix, and each draws its parameters
 * (prefix length, input lengths, turn counts, think times, corpus size, popularity skew) from ranges per seed, so
 * two seeds are two different deployments, not two samples of one. Their statistics ({@link TraceStatistics}: share
 * of re-references, reuse distances, blocks used once) are printed by the simulator's {@code --generate-trace}.
 *
 * <p>Ids follow the format's rule: a block of 512 input tokens keeps its id as long as the tokens before and in
 * it are the same. So a turn shares the previous turn's <em>full</em> blocks; the previous turn's partial last
 * block gets a new id (it has more tokens now), as do all new blocks. Fresh ids count up from 0 in order of
 * first appearance. Stateless; thread-safe.
 */
public final class TraceGenerator {
    /** Mean time between arrivals. */
    public static final int MEAN_GAP_MS = 250;

    private static final int BLOCK = MooncakeTrace.TOKENS_PER_BLOCK;

    /** {@link Kind#CHAT}: conversation slots; each request draws one uniformly, independently of the past. */
    public static final int CHAT_SLOTS = 256;
    /** {@link Kind#CHAT}: the most turns a conversation has (each has 2 to this many). */
    public static final int CHAT_MAX_TURNS = 16;
    /** {@link Kind#CHAT} and {@link Kind#CHAT_SESSIONS}: the longest system prompt, in tokens. */
    public static final int CHAT_MAX_PROMPT_TOKENS = 3000;

    /** The workloads the generator knows. */
    public enum Kind {
        /** Multi-turn chat over a few shared system prompts. */
        CHAT("chat"),
        /** Tool-using agents: a long shared tool specification, then short call/result loops. */
        TOOL_AGENT("tool-agent"),
        /** Document QA: Zipf popularity over documents behind a shared system prompt. */
        DOC_QA("doc-qa"),
        /** Multi-turn chat with per-conversation think times and timestamps (see {@link #chatSessions}). */
        CHAT_SESSIONS("chat-sessions"),
        /**
         * Production-like multi-turn conversation: one shared prefix every request starts with, long user inputs,
         * most conversations a single turn, and turns minutes apart (see {@link #conversation}).
         */
        CONVERSATION("conversation"),
        /** Production-like agents: a shared prefix, tool specifications, long loops of steps seconds to minutes apart. */
        AGENT_LOOP("agent-loop"),
        /** Document QA over a large corpus with a long tail (most documents read once), follow-up questions. */
        DOC_QA_LONG("doc-qa-long"),
        /** {@link #CONVERSATION} with bursts of new long prompts (a batch job) flooding the cache now and then. */
        BURST_CHAT("burst-chat"),
        /**
         * Built to defeat each policy's assumption: scans of one-time blocks through a hot set, popularity that
         * shifts, and loops just larger than a GPU of 2, 5 or 10% of the unique blocks (see {@link #stress}).
         */
        STRESS("stress");

        private final String optionValue;

        Kind(String optionValue) {
            this.optionValue = optionValue;
        }

        /** The spelling on the command line, e.g. {@code tool-agent}. */
        public String optionValue() {
            return optionValue;
        }

        /** The kind spelled {@code text} (case-insensitive), if any. */
        public static Optional<Kind> of(String text) {
            String wanted = text.strip().toLowerCase(Locale.ROOT);
            return Arrays.stream(values()).filter(k -> k.optionValue.equals(wanted)).findFirst();
        }
    }

    /**
     * What the {@link Kind#CHAT} generator drew for one request, hidden from the trace itself: for bounds
     * that need the generator's state (which conversation a request continues), not for policies.
     *
     * @param slot the conversation slot drawn (0 to {@link #CHAT_SLOTS} - 1), uniformly and independently
     * @param newConversation whether the slot was empty, so this request starts a conversation
     * @param prompt the conversation's system prompt (its index in the Zipf popularity of {@link #chatPromptProbability})
     * @param promptBlocks how many leading blocks of the request are the prompt's (shared) blocks
     * @param keptBlocks how many leading blocks of the request the conversation's next turn references again
     * @param turn the conversation's turn this request is (1 for the first)
     * @param last whether the conversation ends with this request (its slot is then empty)
     */
    public record ChatDraw(int slot, boolean newConversation, int prompt, int promptBlocks, int keptBlocks, int turn,
            boolean last) {
    }

    /** {@link Kind#CHAT}: how many system prompts conversations choose among. */
    public static final int CHAT_PROMPTS = 6;

    private final SplittableRandom random;
    private long nextId;
    private long clockMs;
    /** Where {@link #chat} writes its hidden draws, or null (drawing no random numbers: the trace is unchanged). */
    private List<ChatDraw> chatDraws;

    private TraceGenerator(long seed) {
        this.random = new SplittableRandom(seed);
    }

    /**
     * {@code requests} requests of workload {@code kind}.
     *
     * @throws IllegalArgumentException naming the value when {@code requests < 0}
     */
    public static List<TraceRequest> generate(Kind kind, int requests, long seed) {
        if (requests < 0) {
            throw new IllegalArgumentException("requests must be at least 0, got " + requests);
        }
        TraceGenerator g = new TraceGenerator(seed);
        return switch (kind) {
            case CHAT -> g.chat(requests);
            case TOOL_AGENT -> g.toolAgent(requests);
            case DOC_QA -> g.docQa(requests);
            case CHAT_SESSIONS -> g.chatSessions(requests);
            case CONVERSATION -> g.conversation(requests, false);
            case AGENT_LOOP -> g.agentLoop(requests);
            case DOC_QA_LONG -> g.docQaLong(requests);
            case BURST_CHAT -> g.conversation(requests, true);
            case STRESS -> g.stress(requests);
        };
    }

    /** What a user's context holds so far: its blocks' ids and its input tokens. */
    private record Context(long[] ids, int tokens) {
        static final Context EMPTY = new Context(new long[0], 0);
    }

    /**
     * The hidden draws behind {@code generate(Kind.CHAT, requests, seed)}, request by request (the same
     * generator run; the trace it makes is the same).
     *
     * @throws IllegalArgumentException naming the value when {@code requests < 0}
     */
    public static List<ChatDraw> chatDraws(int requests, long seed) {
        if (requests < 0) {
            throw new IllegalArgumentException("requests must be at least 0, got " + requests);
        }
        TraceGenerator g = new TraceGenerator(seed);
        g.chatDraws = new ArrayList<>(requests);
        g.chat(requests);
        return List.copyOf(g.chatDraws);
    }

    /** {@link Kind#CHAT}: the probability that a new conversation takes system prompt {@code prompt}. */
    public static double chatPromptProbability(int prompt) {
        return new ZipfSampler(CHAT_PROMPTS, 1.0).probability(prompt);
    }

    // ------------------------------------------------------------------ chat

    private static final class Conversation {
        final int prompt;
        Context context;
        int lastOutput;
        int turnsLeft;
        int turnsTaken;

        Conversation(int prompt, int turns) {
            this.prompt = prompt;
            this.turnsLeft = turns;
        }
    }

    /**
     * One user turn of {@code c} (both chat kinds): the user's message extends the conversation (its first
     * turn starts from the shared system prompt, whose blocks are made once), then the answer's length is drawn.
     */
    private void takeTurn(Conversation c, Context[] promptContexts, int[] promptTokens) {
        int user = between(30, 1200);
        if (c.context == null) {
            int p = c.prompt;
            if (promptContexts[p] == null) {
                promptContexts[p] = fullBlocks(Context.EMPTY, promptTokens[p]);
            }
            c.context = extend(promptContexts[p], promptTokens[p] + user);
        } else {
            c.context = extend(c.context, c.context.tokens + c.lastOutput + user);
        }
        c.lastOutput = between(50, 800);
    }

    private List<TraceRequest> chat(int requests) {
        // Many users with long pauses between their turns: a turn's blocks come back after many other
        // users' turns, as in production chat traces (a small pool would make the working set fit anywhere).
        int prompts = CHAT_PROMPTS;
        int active = CHAT_SLOTS;
        ZipfSampler promptPopularity = new ZipfSampler(prompts, 1.0);
        Context[] promptContexts = new Context[prompts];
        int[] promptTokens = new int[prompts];
        for (int p = 0; p < prompts; p++) {
            promptTokens[p] = between(600, CHAT_MAX_PROMPT_TOKENS);
        }
        Conversation[] pool = new Conversation[active];
        List<TraceRequest> out = new ArrayList<>(requests);
        for (int i = 0; i < requests; i++) {
            int slot = random.nextInt(active);
            boolean fresh = pool[slot] == null;
            if (fresh) {
                pool[slot] = new Conversation(promptPopularity.sample(random), between(2, CHAT_MAX_TURNS));
            }
            Conversation c = pool[slot];
            takeTurn(c, promptContexts, promptTokens);
            out.add(request(c.context, c.lastOutput));
            c.turnsTaken++;
            if (--c.turnsLeft == 0) {
                pool[slot] = null;
            }
            if (chatDraws != null) {
                chatDraws.add(new ChatDraw(slot, fresh, c.prompt, promptContexts[c.prompt].ids.length,
                        Math.min(c.context.ids.length, c.context.tokens / BLOCK), c.turnsTaken, pool[slot] == null));
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ chat sessions

    /** Mean time between conversation starts: with {@link #SESSION_MEAN_TURNS} turns each, one request per {@value #MEAN_GAP_MS} ms. */
    private static final double SESSION_MEAN_TURNS = 5.0;
    /** Median user think time between an answer and the next message (lognormal, sigma {@value #THINK_SIGMA}). */
    private static final double THINK_MEDIAN_MS = 15_000;
    private static final double THINK_SIGMA = 1.0;
    /** The longest think time drawn (a user back after half an hour continues the conversation). */
    private static final double THINK_MAX_MS = 30 * 60_000;
    /** Decode time per output token: the answer is read only after it was generated. */
    private static final int DECODE_MS_PER_TOKEN = 25;

    /**
     * Multi-turn chat over the same shared system prompts as {@link #chat}, timed as people chat rather than
     * by a uniform draw among a fixed pool of conversations. Conversations start as a Poisson process; each
     * has a number of turns drawn from a heavy-tailed law (the ceiling of a lognormal, median 3, capped at
     * 40: most are short, a few are long, and one that has gone on is likely to go on); after each answer,
     * which takes {@value #DECODE_MS_PER_TOKEN} ms per output token to generate, the user thinks for a
     * lognormal time (median 15 s, mean about 25 s, capped at 30 minutes) and sends the next turn. Requests
     * are emitted in timestamp order; the trace starts empty (no conversation in progress), and about
     * 100-150 conversations overlap once it is warm. Turn contents (user message 30-1200 tokens, answer
     * 50-800) are as in {@link #chat}.
     */
    private List<TraceRequest> chatSessions(int requests) {
        int prompts = 6;
        ZipfSampler promptPopularity = new ZipfSampler(prompts, 1.0);
        Context[] promptContexts = new Context[prompts];
        int[] promptTokens = new int[prompts];
        for (int p = 0; p < prompts; p++) {
            promptTokens[p] = between(600, CHAT_MAX_PROMPT_TOKENS);
        }
        // Pending turns by time, then by when they were scheduled (ties keep a stable order); a null
        // conversation is the next conversation's start.
        record Turn(long atMs, long order, Conversation conversation) {
        }
        PriorityQueue<Turn> due = new PriorityQueue<>((a, b) -> a.atMs != b.atMs ? Long.compare(a.atMs, b.atMs)
                : Long.compare(a.order, b.order));
        long scheduled = 0;
        double sessionGapMs = MEAN_GAP_MS * SESSION_MEAN_TURNS;
        due.add(new Turn(0, scheduled++, null));
        List<TraceRequest> out = new ArrayList<>(requests);
        while (out.size() < requests) {
            Turn turn = due.poll();
            Conversation c = turn.conversation;
            if (c == null) {
                double turns = Math.ceil(Math.exp(Math.log(3) + 0.9 * random.nextGaussian()));
                c = new Conversation(promptPopularity.sample(random), (int) Math.min(40, Math.max(1, turns)));
                due.add(new Turn(turn.atMs + Math.round(-Math.log(1 - random.nextDouble()) * sessionGapMs), scheduled++, null));
            }
            takeTurn(c, promptContexts, promptTokens);
            out.add(new TraceRequest(turn.atMs, c.context.tokens, c.lastOutput, c.context.ids));
            if (--c.turnsLeft > 0) {
                double think = Math.min(THINK_MAX_MS, THINK_MEDIAN_MS * Math.exp(THINK_SIGMA * random.nextGaussian()));
                due.add(new Turn(turn.atMs + (long) c.lastOutput * DECODE_MS_PER_TOKEN + Math.round(think), scheduled++, c));
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ tool agent

    private static final class Agent {
        final Context task;
        Context context;
        int lastOutput;
        int stepsLeft;

        Agent(Context task, int steps) {
            this.task = task;
            this.stepsLeft = steps;
        }
    }

    private List<TraceRequest> toolAgent(int requests) {
        int specs = 4;
        int active = 48;
        ZipfSampler specPopularity = new ZipfSampler(specs, 1.0);
        Context[] specContexts = new Context[specs];
        int[] specTokens = new int[specs];
        for (int s = 0; s < specs; s++) {
            specTokens[s] = between(4000, 12000);
        }
        Agent[] pool = new Agent[active];
        List<TraceRequest> out = new ArrayList<>(requests);
        for (int i = 0; i < requests; i++) {
            int slot = random.nextInt(active);
            Agent a = pool[slot];
            if (a == null) {
                int s = specPopularity.sample(random);
                if (specContexts[s] == null) {
                    specContexts[s] = fullBlocks(Context.EMPTY, specTokens[s]);
                }
                a = pool[slot] = new Agent(extend(specContexts[s], specTokens[s] + between(100, 800)), between(3, 15));
            }
            if (a.context == null) {
                a.context = a.task;
            } else {
                int toolCall = a.lastOutput;
                int toolResult = between(50, 1500);
                a.context = extend(a.context, a.context.tokens + toolCall + toolResult);
            }
            a.lastOutput = between(20, 200);
            out.add(request(a.context, a.lastOutput));
            if (--a.stepsLeft == 0) {
                // A third of finished agents rerun the same task (a retry or the next item of a batch): the
                // specification and the task's blocks come back; the loop's blocks are new.
                pool[slot] = random.nextInt(3) == 0 ? new Agent(a.task, between(3, 15)) : null;
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ document QA

    private List<TraceRequest> docQa(int requests) {
        int documents = 1000;
        int systemTokens = 700;
        ZipfSampler popularity = new ZipfSampler(documents, 1.0);
        Context system = null;
        Context[] documentContexts = new Context[documents];
        int[] documentTokens = new int[documents];
        List<TraceRequest> out = new ArrayList<>(requests);
        for (int i = 0; i < requests; i++) {
            int d = popularity.sample(random);
            if (documentContexts[d] == null) {
                if (system == null) {
                    system = fullBlocks(Context.EMPTY, systemTokens);
                }
                documentTokens[d] = between(1000, 12000);
                documentContexts[d] = fullBlocks(system, systemTokens + documentTokens[d]);
            }
            Context question = extend(documentContexts[d], systemTokens + documentTokens[d] + between(16, 128));
            out.add(request(question, between(20, 300)));
        }
        return out;
    }

    // ------------------------------------------------------------------ production-like families

    /**
     * One actor of a timed family: a conversation, an agent, a reader of a document, a burst of prompts. Each request
     * it makes extends its own context; the timeline asks it for its next request and how long until the one after.
     */
    private abstract static class Actor {
        int turnsLeft;
        int outputTokens;

        /** The context of this actor's next request (sets {@link #outputTokens}). */
        abstract Context next();

        /** From this request until the actor's next one, in ms. */
        abstract long pauseMs();
    }

    /** A stream of actor starts: Poisson, {@code meanGapMs} apart on average. */
    private record Source(double meanGapMs, java.util.function.Supplier<Actor> start) {
    }

    /**
     * Plays {@code sources}' actors in time order until {@code requests} requests are out: each source starts
     * actors as a Poisson process; each actor's next request comes its pause after the previous one.
     */
    private List<TraceRequest> timeline(int requests, List<Source> sources) {
        record Due(long atMs, long order, Actor actor, int source) {
        }
        PriorityQueue<Due> due = new PriorityQueue<>((a, b) -> a.atMs != b.atMs ? Long.compare(a.atMs, b.atMs)
                : Long.compare(a.order, b.order));
        long scheduled = 0;
        for (int i = 0; i < sources.size(); i++) {
            due.add(new Due(exponentialMs(sources.get(i).meanGapMs) * (i == 0 ? 0 : 1), scheduled++, null, i));
        }
        List<TraceRequest> out = new ArrayList<>(requests);
        while (out.size() < requests) {
            Due next = due.poll();
            Actor actor = next.actor;
            if (actor == null) {
                Source source = sources.get(next.source);
                actor = source.start.get();
                due.add(new Due(next.atMs + exponentialMs(source.meanGapMs), scheduled++, null, next.source));
            }
            Context context = actor.next();
            out.add(new TraceRequest(next.atMs, context.tokens, actor.outputTokens, context.ids));
            if (--actor.turnsLeft > 0) {
                due.add(new Due(next.atMs + actor.pauseMs(), scheduled++, actor, -1));
            }
        }
        return out;
    }

    private long exponentialMs(double meanMs) {
        return Math.round(-Math.log(1 - random.nextDouble()) * meanMs);
    }

    /** A lognormal draw with this median and sigma, clamped to [min, max]. */
    private int lognormal(double median, double sigma, int min, int max) {
        double x = median * Math.exp(sigma * random.nextGaussian());
        return (int) Math.max(min, Math.min(max, Math.round(x)));
    }

    /** A draw uniform in [min, max). */
    private double uniform(double min, double max) {
        return min + (max - min) * random.nextDouble();
    }

    /** How many more trials follow a first with mean {@code mean} (geometric), at most {@code max}. */
    private int geometric(double mean, int max) {
        int n = 0;
        double go = mean / (1 + mean);
        while (n < max && random.nextDouble() < go) {
            n++;
        }
        return n;
    }

    /** The prefix every request of a production-like family starts with: 1 to 3 full blocks. */
    private Context sharedPrefix() {
        return fullBlocks(Context.EMPTY, BLOCK * between(1, 3));
    }

    /** The mean gap between actor starts that gives one request per {@value #MEAN_GAP_MS} ms. */
    private static double actorGapMs(double meanTurns) {
        return MEAN_GAP_MS * meanTurns;
    }

    /**
     * {@link Kind#CONVERSATION} (and, with {@code bursts}, {@link Kind#BURST_CHAT}). Drawn per seed: the shared prefix
     * (1-3 blocks), the share of single-turn conversations (62-72%), the mean number of further turns of the others
     * (0.5-1.2), the median first input (5,000-9,000 tokens, lognormal sigma 0.9, 200 to 60,000), the median user think
     * time between an answer and the next turn (130-220 s, lognormal sigma 1.0-1.3, at most 2 hours). Later turns add
     * the answer (50-1,000 tokens, decoded at {@value #DECODE_MS_PER_TOKEN} ms per token) and a message (median 300).
     * Tuned so the statistics come out as the production conversation trace's (about 37% re-references, median reuse
     * distance in the thousands of references, p90 several times more). Bursts: every 2-6 minutes on average, a batch
     * of 20-80 requests, 50 ms apart, each a new long prompt (median 16,000 tokens, 4,000 to 100,000) used once.
     */
    private List<TraceRequest> conversation(int requests, boolean bursts) {
        Context root = sharedPrefix();
        double singleTurnShare = uniform(0.62, 0.72);
        double moreTurns = uniform(0.5, 1.2);
        double firstInputMedian = uniform(5000, 9000);
        double thinkMedianMs = uniform(130_000, 220_000);
        double thinkSigma = uniform(1.0, 1.3);
        double meanTurns = singleTurnShare + (1 - singleTurnShare) * (2 + moreTurns);
        List<Source> sources = new ArrayList<>();
        sources.add(new Source(actorGapMs(meanTurns), () -> new Actor() {
            Context context;

            {
                turnsLeft = random.nextDouble() < singleTurnShare ? 1 : 2 + geometric(moreTurns, 40);
            }

            @Override
            Context next() {
                if (context == null) {
                    context = extend(root, root.tokens + lognormal(firstInputMedian, 0.9, 200, 60_000));
                } else {
                    context = extend(context, context.tokens + outputTokens + lognormal(300, 1.0, 20, 8000));
                }
                outputTokens = between(50, 1000);
                return context;
            }

            @Override
            long pauseMs() {
                return (long) outputTokens * DECODE_MS_PER_TOKEN
                        + lognormal(thinkMedianMs, thinkSigma, 1000, 2 * 3_600_000);
            }
        }));
        if (bursts) {
            double burstGapMs = uniform(120_000, 360_000);
            sources.add(new Source(burstGapMs, () -> new Actor() {
                {
                    turnsLeft = between(20, 80);
                }

                @Override
                Context next() {
                    outputTokens = between(20, 300);
                    return extend(root, root.tokens + lognormal(16_000, 0.6, 4000, 100_000));
                }

                @Override
                long pauseMs() {
                    return 50;
                }
            }));
        }
        return timeline(requests, sources);
    }

    /**
     * {@link Kind#AGENT_LOOP}: agents behind the shared prefix, each with one of 6-20 tool specifications (Zipf
     * popularity; 500-3,000 tokens each), a task (median 5,000 tokens), then a loop of steps (mean 1-2 more after
     * the first, at most 40), each appending the model's tool call and the tool's result (median 600 tokens, up to
     * 8,000) and coming a tool latency later (median 120-300 s, lognormal sigma 1.0: tools, queues, humans in the
     * loop). Tuned so the statistics come out as the second production trace's (about 64% re-references, median
     * reuse distance in the thousands of references).
     */
    private List<TraceRequest> agentLoop(int requests) {
        Context root = sharedPrefix();
        int specs = between(6, 20);
        ZipfSampler specPopularity = new ZipfSampler(specs, 1.0);
        Context[] specContexts = new Context[specs];
        int[] specTokens = new int[specs];
        for (int s = 0; s < specs; s++) {
            specTokens[s] = between(500, 3000);
        }
        double moreSteps = uniform(1, 2);
        double latencyMedianMs = uniform(120_000, 300_000);
        return timeline(requests, List.of(new Source(actorGapMs(1 + moreSteps), () -> new Actor() {
            Context context;

            {
                turnsLeft = 1 + geometric(moreSteps, 39);
            }

            @Override
            Context next() {
                if (context == null) {
                    int s = specPopularity.sample(random);
                    if (specContexts[s] == null) {
                        specContexts[s] = fullBlocks(root, root.tokens + specTokens[s]);
                    }
                    context = extend(specContexts[s], specContexts[s].tokens + lognormal(5000, 0.8, 100, 40_000));
                } else {
                    context = extend(context, context.tokens + outputTokens + lognormal(600, 1.0, 20, 8000));
                }
                outputTokens = between(20, 400);
                return context;
            }

            @Override
            long pauseMs() {
                return (long) outputTokens * DECODE_MS_PER_TOKEN + lognormal(latencyMedianMs, 1.0, 200, 3_600_000);
            }
        })));
    }

    /**
     * {@link Kind#DOC_QA_LONG}: readers of documents behind the shared prefix. The corpus has 2,000-6,000 documents
     * (median length 6,000-12,000 tokens, up to 60,000) whose popularity is Zipf with exponent 0.6-0.9: a long tail,
     * so most documents are read once. A reader asks 1 + a geometric number (mean 0.5-1.5) of questions, each a
     * median 40 s after the answer to the last; a follow-up's context holds the earlier questions and answers.
     */
    private List<TraceRequest> docQaLong(int requests) {
        Context root = sharedPrefix();
        int documents = between(2000, 6000);
        ZipfSampler popularity = new ZipfSampler(documents, uniform(0.6, 0.9));
        double lengthMedian = uniform(6000, 12_000);
        double followUps = uniform(0.5, 1.5);
        Context[] documentContexts = new Context[documents];
        return timeline(requests, List.of(new Source(actorGapMs(1 + followUps), () -> new Actor() {
            Context context;

            {
                turnsLeft = 1 + geometric(followUps, 20);
            }

            @Override
            Context next() {
                if (context == null) {
                    int d = popularity.sample(random);
                    if (documentContexts[d] == null) {
                        documentContexts[d] = fullBlocks(root, root.tokens + lognormal(lengthMedian, 0.8, 1000, 60_000));
                    }
                    context = extend(documentContexts[d], documentContexts[d].tokens + between(16, 256));
                } else {
                    context = extend(context, context.tokens + outputTokens + between(16, 256));
                }
                outputTokens = between(30, 500);
                return context;
            }

            @Override
            long pauseMs() {
                return (long) outputTokens * DECODE_MS_PER_TOKEN + lognormal(40_000, 1.0, 1000, 3_600_000);
            }
        })));
    }

    /** The GPU shares, of a whole trace's unique blocks, that {@link Kind#STRESS}'s loops are sized against. */
    public static final double[] STRESS_LOOP_SHARES = {0.02, 0.05, 0.10};
    /** How much larger than its GPU share a {@link Kind#STRESS} loop is. */
    public static final double STRESS_LOOP_OVERSHOOT = 1.1;

    /**
     * {@link Kind#STRESS}: six phases of equal request counts, in an order drawn per seed, every request the shared
     * prefix and then one item (a run of full blocks):
     * <ul>
     *   <li><b>scan</b>: every other request a new item of 8-32 blocks used once, the rest from a hot set of 100-300
     *       items of 2-8 blocks (Zipf 0.8-1.2): defeats pure recency (a scan flushes the hot set);</li>
     *   <li><b>shift</b> (twice): a new hot set each phase and then half-way again: defeats policies that trust old
     *       counts (frequency kept from a popularity that is gone);</li>
     *   <li><b>loop</b> (three phases): the items of a loop visited in order, over and over; each loop's blocks are
     *       {@value #STRESS_LOOP_OVERSHOOT} times a GPU of 2, 5 or 10% of the whole trace's unique blocks: defeats
     *       LRU and FIFO orders (every block leaves just before it comes back).</li>
     * </ul>
     * The loops are sized from the other phases' unique blocks, counted before any id is given out.
     */
    private List<TraceRequest> stress(int requests) {
        Context root = sharedPrefix();
        int rootBlocks = root.ids.length;
        int hotItems = between(100, 300);
        double skew = uniform(0.8, 1.2);
        int[] phases = {0, 1, 1, 2, 3, 4}; // 0 scan, 1 shift, 2-4 the loops for each share
        for (int i = phases.length - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = phases[i];
            phases[i] = phases[j];
            phases[j] = t;
        }
        // First the item each request names, and each item's length in blocks; ids come after, in request order.
        List<Integer> itemBlocks = new ArrayList<>();
        int[] itemOf = new int[requests];
        int[] loopRequests = new int[STRESS_LOOP_SHARES.length];
        List<int[]> loopSlots = new ArrayList<>();
        int perPhase = Math.ceilDiv(requests, phases.length);
        ZipfSampler hot = new ZipfSampler(hotItems, skew);
        long otherBlocks = rootBlocks;
        int hotBase = 0; // the current hot set's first item
        boolean[] hotUsed = new boolean[hotItems]; // which of its items were named
        for (int q = 0; q < requests; q++) {
            int phase = phases[Math.min(phases.length - 1, q / perPhase)];
            int inPhase = q % perPhase;
            if (phase >= 2) {
                loopRequests[phase - 2]++;
                itemOf[q] = -1 - (phase - 2); // filled in once the loops are sized
                continue;
            }
            boolean newHotSet = inPhase == 0 || (phase == 1 && inPhase == perPhase / 2);
            if (newHotSet) {
                hotBase = itemBlocks.size();
                for (int h = 0; h < hotItems; h++) {
                    itemBlocks.add(between(2, 8));
                }
                hotUsed = new boolean[hotItems];
            }
            if (phase == 0 && inPhase % 2 == 1) {
                itemOf[q] = itemBlocks.size();
                itemBlocks.add(between(8, 32));
                otherBlocks += itemBlocks.get(itemOf[q]);
            } else {
                int h = hot.sample(random);
                itemOf[q] = hotBase + h;
                if (!hotUsed[h]) {
                    hotUsed[h] = true;
                    otherBlocks += itemBlocks.get(itemOf[q]);
                }
            }
        }
        // Loops of L_k = overshoot * share_k * U blocks, where U = others + sum of L_k (the loops are all referenced).
        double loopShare = 0;
        for (int k = 0; k < STRESS_LOOP_SHARES.length; k++) {
            loopShare += loopRequests[k] > 0 ? STRESS_LOOP_OVERSHOOT * STRESS_LOOP_SHARES[k] : 0;
        }
        double unique = otherBlocks / (1 - loopShare);
        for (int k = 0; k < STRESS_LOOP_SHARES.length; k++) {
            int blocks = (int) Math.round(STRESS_LOOP_OVERSHOOT * STRESS_LOOP_SHARES[k] * unique);
            List<Integer> items = new ArrayList<>();
            while (blocks > 0) {
                int length = Math.min(blocks, 4);
                items.add(itemBlocks.size());
                itemBlocks.add(length);
                blocks -= length;
            }
            loopSlots.add(items.stream().mapToInt(Integer::intValue).toArray());
        }
        int[] loopPosition = new int[STRESS_LOOP_SHARES.length];
        Context[] items = new Context[itemBlocks.size()];
        List<TraceRequest> out = new ArrayList<>(requests);
        for (int q = 0; q < requests; q++) {
            int item = itemOf[q];
            if (item < 0) {
                int[] loop = loopSlots.get(-1 - item);
                if (loop.length == 0) {
                    out.add(request(root, 0));
                    continue;
                }
                item = loop[loopPosition[-1 - item]++ % loop.length];
            }
            if (items[item] == null) {
                // An item's blocks are unique to it (a unique ending makes the same first tokens another item).
                items[item] = extend(root, root.tokens + BLOCK * itemBlocks.get(item));
            }
            out.add(request(items[item], between(20, 200)));
        }
        return out;
    }

    // ------------------------------------------------------------------ blocks

    /**
     * The context grown to {@code tokens}: the full blocks of {@code before} keep their ids, every other
     * block (a partial last block of {@code before} included) gets a fresh id.
     */
    private Context extend(Context before, int tokens) {
        int keep = Math.min(before.ids.length, before.tokens / BLOCK);
        int total = Math.ceilDiv(tokens, BLOCK);
        long[] ids = Arrays.copyOf(before.ids, total);
        for (int b = keep; b < total; b++) {
            ids[b] = nextId++;
        }
        return new Context(ids, tokens);
    }

    /** As {@link #extend}, but only the full blocks: a shared prefix (prompt, document) whose tail is never requested alone. */
    private Context fullBlocks(Context before, int tokens) {
        Context grown = extend(before, tokens - tokens % BLOCK);
        return new Context(grown.ids, tokens);
    }

    private TraceRequest request(Context context, int outputTokens) {
        clockMs += Math.round(-Math.log(1 - random.nextDouble()) * MEAN_GAP_MS);
        return new TraceRequest(clockMs, context.tokens, outputTokens, context.ids);
    }

    private int between(int min, int max) {
        return min + random.nextInt(max - min + 1);
    }
}
