package dev.kvtier.bench.sim;

import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;

import dev.kvtier.bench.trace.Belady;
import dev.kvtier.bench.trace.TraceGenerator;

/**
 * How far a future-blind policy can get on a generated trace: LRU, and LRU told by an oracle which blocks
 * are never used again (those are evicted first, oldest first), each divided by the offline optimum
 * ({@link Belady}), for one GPU cache of 2, 5 and 10% of the unique blocks. No online policy knows which
 * blocks are dead; the second column bounds what predicting it (as the chain-tail rule of the default policy
 * does for partial last blocks) can add to LRU. For the {@code chat} kind a third figure: {@link #chatOnlineBound},
 * an upper bound on the <em>expected</em> hits of any online policy over that generator's draws (evaluated on one
 * trace; not a bound on that trace's hits, which a policy can exceed), also divided by the optimum.
 * Usage: {@code java -cp benchmarks.jar dev.kvtier.bench.sim.DeadBlockOracleBound [kinds] [requests] [seeds]}
 * (defaults chat, 3000,10000, 1,2,3,42). Prints per GPU budget "LRU / LRU with the oracle [/ online bound /
 * posterior bound (greedy: slot-aware, trace-only, recency only, turn only)]", each divided by the optimum; the
 * last two are the trace-only greedy without one of its two signals ({@link Knowledge}), to show what each is worth.
 */
public final class DeadBlockOracleBound {
    private DeadBlockOracleBound() {
    }

    /** What {@link #chatGreedyHits} knows of a conversation to estimate its chance of being named next. */
    enum Knowledge {
        /** The slots themselves (more than the trace shows): the posterior bound's {@code π} exactly. */
        SLOTS,
        /** What the trace shows: the conversation's turn and how many requests ago it was last seen. */
        TRACE,
        /**
         * Only how long ago: every conversation's continuation chance is taken as {@value DeadBlockOracleBound#FLAT_CONTINUATION}
         * whatever its turn, so private blocks rank by their conversation's recency alone (for any constant
         * chance; the constant only weighs them against prompt blocks, which are worth far more either way).
         */
        RECENCY_ONLY,
        /** Only the turn: a conversation is taken as last seen just now, so private blocks rank by turn alone. */
        TURN_ONLY
    }

    /** {@link Knowledge#RECENCY_ONLY}'s continuation chance, about the mean over a conversation's turns. */
    static final double FLAT_CONTINUATION = 0.9;

    public static void main(String[] args) {
        String kinds = args.length > 0 ? args[0] : "chat";
        String sizes = args.length > 1 ? args[1] : "3000,10000";
        String seeds = args.length > 2 ? args[2] : "1,2,3,42";
        for (String kind : kinds.split(",")) {
            for (String size : sizes.split(",")) {
                for (String seed : seeds.split(",")) {
                    BlockTrace trace = BlockTrace.of(TraceGenerator.generate(TraceGenerator.Kind.of(kind).orElseThrow(),
                            Integer.parseInt(size), Long.parseLong(seed)), kind);
                    int[] sequence = trace.referenceSequence(trace.references());
                    StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "| %s | %s | %s |", kind, size, seed));
                    for (double share : new double[] {0.02, 0.05, 0.10}) {
                        int capacity = (int) (share * trace.uniqueBlocks());
                        double optimum = Belady.hits(sequence, capacity);
                        row.append(String.format(Locale.ROOT, " %.2f / %.2f", lruHits(sequence, trace.uniqueBlocks(),
                                capacity, false) / optimum, lruHits(sequence, trace.uniqueBlocks(), capacity, true) / optimum));
                        if (kind.equals(TraceGenerator.Kind.CHAT.optionValue())) {
                            List<TraceGenerator.ChatDraw> draws = TraceGenerator.chatDraws(Integer.parseInt(size),
                                    Long.parseLong(seed));
                            row.append(String.format(Locale.ROOT, " / %.3f / %.3f (greedy: slot-aware %.3f, trace-only %.3f,"
                                            + " recency only %.3f, turn only %.3f)",
                                    chatOnlineBound(trace, capacity) / optimum,
                                    chatPosteriorBound(trace, draws, capacity) / optimum,
                                    chatGreedyHits(trace, draws, capacity, Knowledge.SLOTS) / optimum,
                                    chatGreedyHits(trace, draws, capacity, Knowledge.TRACE) / optimum,
                                    chatGreedyHits(trace, draws, capacity, Knowledge.RECENCY_ONLY) / optimum,
                                    chatGreedyHits(trace, draws, capacity, Knowledge.TURN_ONLY) / optimum));
                        }
                        row.append(" |");
                    }
                    System.out.println(row);
                }
            }
        }
    }

    /**
     * An upper bound on the expected GPU hits of any online policy (one that does not know the future; demand
     * admission, no prefetch) with {@code capacity} blocks over the {@link TraceGenerator.Kind#CHAT} generator's
     * draws, evaluated on one of its traces; not a bound on that trace's hits.
     *
     * <p>Why it holds. Call a block <em>private</em> when only one conversation references it (the
     * conversation's own turns) and <em>shared</em> otherwise (the system prompts' blocks). Each request of
     * that generator draws one of {@value TraceGenerator#CHAT_SLOTS} slots uniformly and independently of
     * everything before it, and references, besides shared blocks and blocks it creates, only private blocks of
     * the conversation in that slot, each once. Whatever an online policy holds when a request starts, it
     * chose without knowing the draw, and the request can hit only the held private blocks of the drawn
     * slot's conversation: at most {@code capacity / CHAT_SLOTS} hits in expectation. So expected hits on
     * private blocks are at most {@code requests x capacity / CHAT_SLOTS}, and hits on shared blocks at most
     * their references after the first. Which blocks are shared is not written in the trace; a block counts as
     * shared (which can only raise the bound) when it is referenced more often than a conversation has turns
     * ({@value TraceGenerator#CHAT_MAX_TURNS}), or when it lies on the path to a block where chains branch:
     * a private block's later blocks form one chain (each turn keeps its full blocks and replaces only the
     * partial last one, which is referenced once), so a block whose reused descendants branch is a prompt's.
     * It bounds the expectation over the generator's draws, evaluated on one trace; the private term is
     * taken whole for every request, also those that start a conversation (which hit nothing private), so it
     * is loose rather than tight.
     */
    static double chatOnlineBound(BlockTrace trace, int capacity) {
        int[] sequence = trace.referenceSequence(trace.references());
        int unique = trace.uniqueBlocks();
        int[] references = new int[unique];
        for (int block : sequence) {
            references[block]++;
        }
        // Each block's parent (the block before it in any request: ids name prefixes) and its reused children.
        int[] parent = new int[unique];
        java.util.Arrays.fill(parent, -1);
        int[] reusedChildren = new int[unique];
        for (int q = 0; q < trace.requests(); q++) {
            for (int i = trace.start(q) + 1; i < trace.end(q); i++) {
                int child = trace.block(i);
                if (parent[child] == -1 && trace.depth(child) > 0) {
                    parent[child] = trace.block(i - 1);
                    if (references[child] > 1) {
                        reusedChildren[parent[child]]++;
                    }
                }
            }
        }
        boolean[] shared = new boolean[unique];
        for (int block = 0; block < unique; block++) {
            if (references[block] > TraceGenerator.CHAT_MAX_TURNS || reusedChildren[block] > 1) {
                for (int b = block; b != -1 && !shared[b]; b = parent[b]) {
                    shared[b] = true;
                }
            }
        }
        long sharedReuses = 0;
        long privateReuses = 0;
        for (int block = 0; block < unique; block++) {
            if (shared[block]) {
                sharedReuses += references[block] - 1;
            } else {
                privateReuses += references[block] - 1;
            }
        }
        return sharedReuses + Math.min(privateReuses, (double) trace.requests() * capacity / TraceGenerator.CHAT_SLOTS);
    }

    /**
     * A tighter upper bound than {@link #chatOnlineBound} on the expected GPU hits of any online policy (one
     * that does not know the future; demand admission, no prefetch) with {@code capacity} blocks on the
     * {@link TraceGenerator.Kind#CHAT} trace of {@code draws} ({@link TraceGenerator#chatDraws} of the same
     * requests and seed). It is the sum over requests of the most hits any cache content could expect at
     * that request's start, given everything the generator had revealed so far.
     *
     * <p>Why it holds. Let {@code G_q} be the generator's past before request {@code q}: every earlier request
     * and which slot each one drew, but not the turn counts still hidden (a conversation's count is drawn when
     * it starts and shows only when its slot is drawn again). {@code G_q} determines the trace so far, so a
     * policy's GPU content {@code H_q} at the start of request {@code q} is a function of {@code G_q} (and of
     * coins of its own). A request names each block at most once, and a block that is not on the GPU when the
     * request starts can become a hit in it only by being brought in by an earlier reference of the same
     * request, which would be its second; so the request's hits are at most {@code |H_q ∩ blocks(q)|}, whose
     * expectation given {@code G_q} is {@code Σ_{b in H_q} π_q(b)}, where {@code π_q(b)} is the probability
     * that request {@code q} names {@code b} given {@code G_q}; that is at most the sum of the {@code capacity}
     * largest {@code π_q}, {@code M_q}. Summing, any online policy's expected hits are at most
     * {@code E[Σ_q M_q]}. The generator (uniform slot, 256 slots; turns uniform on 2 to
     * {@value TraceGenerator#CHAT_MAX_TURNS}; prompts by a Zipf law) gives {@code π_q} exactly: a slot last
     * drawn by a conversation at its turn {@code k} still holds it with probability {@code a(k) = 1} for
     * {@code k = 1} and {@code (16 - k) / (17 - k)} otherwise (no later draw of that slot has told more; the
     * other slots' draws are independent of it), and is otherwise empty, as are slots never drawn. So a block
     * the conversation's next turn would name again (its request's first {@code keptBlocks}, past the prompt's)
     * has {@code π = a(k) / 256}; a block of prompt {@code p} has {@code π = (1/256) Σ_slots [a·[prompt = p] +
     * (1 - a)·z(p)]} ({@code z} the Zipf law, {@code a = 0} for empty slots); every other block {@code π = 0}.
     * Compared with {@link #chatOnlineBound} it does not credit requests that start a conversation with private
     * hits, charges the prompts' blocks to the same capacity, counts no more private blocks than a conversation
     * has, and weighs each by the chance that its conversation is still going.
     *
     * <p>What it is not: a bound on one trace's hits. It bounds the expectation over the generator's draws
     * (a policy can be lucky on one trace); evaluated on one trace, {@code Σ_q M_q} estimates that
     * expectation, and the per-trace excess of a policy's hits is a martingale of mean at most 0. The {@code
     * capacity} largest values are found from at most 16 + 6 groups of equal value per request, so it costs
     * O(references + requests x slots).
     */
    static double chatPosteriorBound(BlockTrace trace, List<TraceGenerator.ChatDraw> draws, int capacity) {
        check(trace, draws);
        int slots = TraceGenerator.CHAT_SLOTS;
        int[] turn = new int[slots]; // 0: never drawn
        int[] prompt = new int[slots];
        int[] privateBlocks = new int[slots];
        int[] promptBlocks = new int[TraceGenerator.CHAT_PROMPTS]; // 0 until the prompt's blocks exist
        double[] values = new double[slots + TraceGenerator.CHAT_PROMPTS];
        int[] counts = new int[values.length];
        Integer[] order = new Integer[values.length];
        double total = 0;
        double[] zipf = promptProbabilities();
        for (int q = 0; q < draws.size(); q++) {
            double[] promptValue = new double[TraceGenerator.CHAT_PROMPTS];
            for (int s = 0; s < slots; s++) {
                double a = stillGoing(turn[s]);
                values[s] = a / slots;
                counts[s] = privateBlocks[s];
                if (turn[s] > 0) {
                    promptValue[prompt[s]] += a / slots;
                }
                for (int p = 0; p < promptValue.length; p++) {
                    promptValue[p] += (1 - a) * zipf[p] / slots;
                }
            }
            for (int p = 0; p < promptValue.length; p++) {
                values[slots + p] = promptValue[p];
                counts[slots + p] = promptBlocks[p];
            }
            for (int i = 0; i < order.length; i++) {
                order[i] = i;
            }
            Arrays.sort(order, (x, y) -> Double.compare(values[y], values[x]));
            long room = capacity;
            for (int i = 0; i < order.length && room > 0; i++) {
                long take = Math.min(room, counts[order[i]]);
                total += take * values[order[i]];
                room -= take;
            }
            TraceGenerator.ChatDraw d = draws.get(q);
            turn[d.slot()] = d.turn();
            prompt[d.slot()] = d.prompt();
            privateBlocks[d.slot()] = d.keptBlocks() - d.promptBlocks();
            promptBlocks[d.prompt()] = d.promptBlocks();
        }
        return total;
    }

    /**
     * Hits of a greedy online policy on a {@link TraceGenerator.Kind#CHAT} trace: on a miss with the GPU full
     * it evicts a block of the least estimated chance {@code π} of being named by the next request, keeping
     * blocks the current request still names. With {@code slotAware} it knows the slots ({@code G_q} of
     * {@link #chatPosteriorBound}, more than the trace shows) and uses that {@code π} exactly: a reference for how
     * close an online policy with that knowledge gets to the bound (its expected hits are at most the bound).
     * Without, it uses only what the trace shows (which conversation a request continues, its turn, and how
     * many requests ago it was last seen): a conversation at turn {@code k} unseen for {@code m} requests is
     * still going with posterior about {@code a r^m / (a r^m + 1 - a)}, {@code a = a(k)}, {@code r = 255/256}
     * (had it gone on, its slot was missed {@code m} times; had it ended, nothing shows; the count of new
     * conversations, which tells a little more, is ignored). Not a bound: a policy, to see what an online
     * policy can reach.
     */
    static double chatGreedyHits(BlockTrace trace, List<TraceGenerator.ChatDraw> draws, int capacity, boolean slotAware) {
        return chatGreedyHits(trace, draws, capacity, slotAware ? Knowledge.SLOTS : Knowledge.TRACE);
    }

    /** {@link #chatGreedyHits(BlockTrace, List, int, boolean)} estimating {@code π} from {@code knowledge}. */
    static double chatGreedyHits(BlockTrace trace, List<TraceGenerator.ChatDraw> draws, int capacity, Knowledge knowledge) {
        check(trace, draws);
        boolean slotAware = knowledge == Knowledge.SLOTS;
        int slots = TraceGenerator.CHAT_SLOTS;
        int requests = draws.size();
        int unique = trace.uniqueBlocks();
        int[] slotConversation = new int[slots];
        Arrays.fill(slotConversation, -1);
        int conversations = 0;
        int[] turn = new int[requests];
        int[] promptOfConversation = new int[requests];
        int[] slotOf = new int[requests];
        int[] lastRequest = new int[requests];
        int[] generation = new int[requests];
        double[] value = new double[requests];
        int[] owner = new int[unique];
        int[] ownerGeneration = new int[unique];
        int[] promptOf = new int[unique];
        Arrays.fill(owner, -1);
        Arrays.fill(promptOf, -1);
        int[] namedBy = new int[unique]; // the last request naming the block, to keep it while that request runs
        Arrays.fill(namedBy, -1);
        boolean[] held = new boolean[unique];
        int[] cache = new int[Math.max(capacity, 1)];
        int size = 0;
        long hits = 0;
        double[] zipf = promptProbabilities();
        double[] promptValue = new double[TraceGenerator.CHAT_PROMPTS];
        double missed = (slots - 1.0) / slots;
        for (int q = 0; q < requests; q++) {
            TraceGenerator.ChatDraw d = draws.get(q);
            int c = d.newConversation() ? conversations++ : slotConversation[d.slot()];
            slotConversation[d.slot()] = c;
            slotOf[c] = d.slot();
            turn[c] = d.turn();
            promptOfConversation[c] = d.prompt();
            lastRequest[c] = q;
            generation[c]++;
            for (int i = trace.start(q); i < trace.end(q); i++) {
                int block = trace.block(i);
                namedBy[block] = q;
                int position = i - trace.start(q);
                if (position < d.promptBlocks()) {
                    promptOf[block] = d.prompt();
                } else if (position < d.keptBlocks()) {
                    owner[block] = c;
                    ownerGeneration[block] = generation[c];
                }
            }
            // Each conversation's chance of being named next, and each prompt's.
            Arrays.fill(promptValue, 0);
            double going = 0;
            for (int k = 0; k < conversations; k++) {
                double a = knowledge == Knowledge.RECENCY_ONLY && turn[k] > 0 ? FLAT_CONTINUATION : stillGoing(turn[k]);
                double p;
                if (slotAware) {
                    p = slotConversation[slotOf[k]] == k ? a : 0;
                } else {
                    double w = a * Math.pow(missed, knowledge == Knowledge.TURN_ONLY ? 0 : q - lastRequest[k]);
                    p = w == 0 ? 0 : w / (w + 1 - a);
                }
                value[k] = p / slots;
                going += p;
                promptValue[promptOfConversation[k]] += p / slots;
            }
            for (int pr = 0; pr < promptValue.length; pr++) {
                promptValue[pr] += (slots - going) * zipf[pr] / slots;
            }
            for (int i = trace.start(q); i < trace.end(q); i++) {
                int block = trace.block(i);
                if (held[block]) {
                    hits++;
                    continue;
                }
                if (capacity == 0) {
                    continue;
                }
                if (size == capacity) {
                    int worst = 0;
                    double worstValue = Double.MAX_VALUE;
                    for (int e = 0; e < size; e++) {
                        int b = cache[e];
                        double v = namedBy[b] == q ? 2 : promptOf[b] >= 0 ? promptValue[promptOf[b]]
                                : owner[b] >= 0 && ownerGeneration[b] == generation[owner[b]] ? value[owner[b]] : 0;
                        if (v < worstValue) {
                            worstValue = v;
                            worst = e;
                        }
                    }
                    held[cache[worst]] = false;
                    cache[worst] = cache[--size];
                }
                held[block] = true;
                cache[size++] = block;
            }
        }
        return hits;
    }

    /** The chance that a slot whose conversation took turn {@code turn} last still holds it (0: a slot never drawn). */
    private static double stillGoing(int turn) {
        if (turn == 0) {
            return 0;
        }
        // Turns are uniform on 2..MAX: P(T > k | T >= k).
        return turn == 1 ? 1 : (double) (TraceGenerator.CHAT_MAX_TURNS - turn) / (TraceGenerator.CHAT_MAX_TURNS - turn + 1);
    }

    private static double[] promptProbabilities() {
        double[] z = new double[TraceGenerator.CHAT_PROMPTS];
        for (int p = 0; p < z.length; p++) {
            z[p] = TraceGenerator.chatPromptProbability(p);
        }
        return z;
    }

    private static void check(BlockTrace trace, List<TraceGenerator.ChatDraw> draws) {
        if (draws.size() != trace.requests()) {
            throw new IllegalArgumentException("draws must be the trace's, one per request: " + draws.size()
                    + " draws for " + trace.requests() + " requests");
        }
    }

    /** Hits of an LRU cache of {@code capacity} blocks; with {@code deadFirst}, blocks never used again go first. */
    static long lruHits(int[] sequence, int uniqueBlocks, int capacity, boolean deadFirst) {
        int[] usesLeft = new int[uniqueBlocks];
        for (int block : sequence) {
            usesLeft[block]++;
        }
        LinkedHashSet<Integer> live = new LinkedHashSet<>();
        LinkedHashSet<Integer> dead = new LinkedHashSet<>();
        long hits = 0;
        for (int block : sequence) {
            usesLeft[block]--;
            if (live.remove(block) || dead.remove(block)) {
                hits++;
            } else if (live.size() + dead.size() >= capacity) {
                Iterator<Integer> oldest = (dead.isEmpty() ? live : dead).iterator();
                oldest.next();
                oldest.remove();
            }
            if (deadFirst && usesLeft[block] == 0) {
                dead.add(block);
            } else {
                live.add(block);
            }
        }
        return hits;
    }
}
