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
 * Ids follow the format's rule: a block of 512 input tokens keeps its id as long as the tokens before and in
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
        CHAT_SESSIONS("chat-sessions");

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
