package dev.kvtier.inference;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.BiFunction;

/**
 * Generated conversations for the decoders: shared system prompts (or shared documents), several users, several
 * turns each, every turn's prompt the whole conversation so far. Byte tokens of lowercase words; nothing is read
 * from a file. Immutable, thread-safe.
 *
 * @param conversations the conversations, each to be run turn after turn
 * @param answerTokens  tokens generated per turn
 */
public record ChatWorkload(List<Conversation> conversations, int answerTokens) {

    /** Copies the list. */
    public ChatWorkload {
        conversations = List.copyOf(conversations);
    }

    /**
     * One user's conversation: a system prompt (shared with other users) and the user's messages.
     *
     * @param system   the system prompt's tokens, {@link ByteVocabulary#SYSTEM} first
     * @param messages the user's messages, one per turn
     */
    public record Conversation(int[] system, List<int[]> messages) {
        /** Copies the list. */
        public Conversation {
            messages = List.copyOf(messages);
        }
    }

    /**
     * Multi-turn chat: {@code systems} system prompts of {@code systemTokens} tokens, {@code users} users each on
     * one of them ({@code user % systems}), {@code turns} messages of about {@code messageTokens} tokens each.
     */
    public static ChatWorkload chat(long seed, int systems, int users, int turns, int systemTokens, int messageTokens,
            int answerTokens) {
        SplittableRandom random = new SplittableRandom(seed);
        List<int[]> systemPrompts = new ArrayList<>();
        for (int s = 0; s < systems; s++) {
            systemPrompts.add(withMarker(ByteVocabulary.SYSTEM, words(random, systemTokens - 1)));
        }
        List<Conversation> conversations = new ArrayList<>();
        for (int u = 0; u < users; u++) {
            List<int[]> messages = new ArrayList<>();
            for (int t = 0; t < turns; t++) {
                messages.add(words(random, messageTokens / 2 + random.nextInt(messageTokens)));
            }
            conversations.add(new Conversation(systemPrompts.get(u % systems), messages));
        }
        return new ChatWorkload(conversations, answerTokens);
    }

    /**
     * Document QA: {@code documents} long documents (the "system prompt" of {@code documentTokens} tokens), each
     * asked {@code questions} short questions by {@code readers} readers in turn.
     */
    public static ChatWorkload documentQa(long seed, int documents, int readers, int questions, int documentTokens,
            int questionTokens, int answerTokens) {
        return chat(seed, documents, readers, questions, documentTokens, questionTokens, answerTokens);
    }

    /** Every request, in the order a single server would see them: turn by turn, user by user. */
    public int requestCount() {
        return conversations.stream().mapToInt(c -> c.messages().size()).sum();
    }

    /**
     * Runs every conversation turn after turn with {@code decoder} (a prompt and a number of new tokens to a
     * generation), each next prompt built from the previous answer, and hands each prompt with its generation to
     * {@code observer}. Users take turns: turn 0 of every user, then turn 1, as users chatting at once would.
     */
    public void run(BiFunction<int[], Integer, Generation> decoder, Observer observer) {
        int[][] histories = new int[conversations.size()][];
        for (int u = 0; u < conversations.size(); u++) {
            histories[u] = conversations.get(u).system();
        }
        int maxTurns = conversations.stream().mapToInt(c -> c.messages().size()).max().orElse(0);
        for (int turn = 0; turn < maxTurns; turn++) {
            for (int u = 0; u < conversations.size(); u++) {
                runTurn(u, turn, histories, decoder, observer);
            }
        }
    }

    /** As {@link #run}, only conversation {@code user}: what one serving thread of several does. */
    public void runConversation(int user, BiFunction<int[], Integer, Generation> decoder, Observer observer) {
        int[][] histories = new int[conversations.size()][];
        histories[user] = conversations.get(user).system();
        for (int turn = 0; turn < conversations.get(user).messages().size(); turn++) {
            runTurn(user, turn, histories, decoder, observer);
        }
    }

    private void runTurn(int u, int turn, int[][] histories, BiFunction<int[], Integer, Generation> decoder,
            Observer observer) {
        List<int[]> messages = conversations.get(u).messages();
        if (turn >= messages.size()) {
            return;
        }
        int[] prompt = concat(histories[u], new int[] {ByteVocabulary.USER}, messages.get(turn),
                new int[] {ByteVocabulary.END, ByteVocabulary.ASSISTANT});
        Generation generation = decoder.apply(prompt, answerTokens);
        observer.served(u, turn, prompt, generation);
        histories[u] = concat(prompt, generation.tokens(), new int[] {ByteVocabulary.END});
    }

    /** Told of each request served. */
    @FunctionalInterface
    public interface Observer {
        /** Request {@code turn} of conversation {@code user} had {@code prompt} and produced {@code generation}. */
        void served(int user, int turn, int[] prompt, Generation generation);
    }

    private static int[] words(SplittableRandom random, int count) {
        int[] tokens = new int[Math.max(1, count)];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = random.nextInt(6) == 0 ? ' ' : 'a' + random.nextInt(26);
        }
        return tokens;
    }

    private static int[] withMarker(int marker, int[] tokens) {
        return concat(new int[] {marker}, tokens);
    }

    static int[] concat(int[]... parts) {
        int length = Arrays.stream(parts).mapToInt(p -> p.length).sum();
        int[] out = new int[length];
        int at = 0;
        for (int[] part : parts) {
            System.arraycopy(part, 0, out, at, part.length);
            at += part.length;
        }
        return out;
    }
}
